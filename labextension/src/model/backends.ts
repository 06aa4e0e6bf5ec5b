/**
 * The capture back ends as the registry declares them (core/registry.py; generated into `BACKENDS` from the run
 * schema's `x-backends`): the words the explorer uses for a run's back end, the tabs it adds, the files it reads
 * back. Views ask here, never test a back end's name.
 */

import { BACKENDS } from './protocol.generated';
import type { TraceRun } from './protocol.generated';

export type BackendName = TraceRun['backend'];
export type BackendRow = (typeof BACKENDS)[BackendName];
type RunSource = Pick<TraceRun, 'backend' | 'source' | 'options'>;

/** The row of a run's back end (a run of a back end this front end does not know reads as the first's). */
export function backendOf(run: Pick<TraceRun, 'backend'> | null | undefined): BackendRow {
  const rows: Record<string, BackendRow> = BACKENDS;
  return rows[run?.backend ?? ''] ?? Object.values(rows)[0];
}

/** Whether the run was read back from a saved file (`tj.load`), nothing run. */
export function fromFile(run: Pick<TraceRun, 'source'> | null | undefined): boolean {
  return run?.source === 'file';
}

/** The saved file's row of a run read from one (its label and words), or null for a capture. */
function savedFile(run: RunSource | null | undefined): BackendRow['files'][number] | null {
  return run && fromFile(run) ? (backendOf(run).files[0] ?? null) : null;
}

/** How the header names what made a run: `torch.jit.trace`, `torch.export`, `saved TorchScript`. */
export function backendLabel(run: RunSource | null | undefined): string {
  return savedFile(run)?.label ?? backendOf(run).label;
}

/** The header label's tooltip: what made the run (`captured by torch.jit.trace`, `read from ...`). */
export function backendTitle(run: RunSource | null | undefined): string {
  const file = savedFile(run);
  if (run && file) {
    const options = run.options;
    const path = options && 'path' in options && typeof options.path === 'string' ? options.path : '';
    return `read from ${file.what}${path ? `: ${path}` : ''}; nothing was run`;
  }
  return `captured by ${backendOf(run).captured_by}`;
}

/** One option of a back end's options bar (its row's `options`, from its options table: core/options.py bar_rows). */
export interface BarOption {
  /** the key in the widget's `options` trait (and in a saved run's options, but for input-set switches) */
  key: string;
  label: string;
  description: string;
  /** checkbox, menu, number, device, text or input_sets (a switch per check input set of the request) */
  control: string;
  default?: unknown;
  choices?: readonly unknown[];
  choice_labels?: readonly string[];
  /** shown, not changed: a re-capture keeps the request's */
  read_only?: boolean;
}

/** A run's back end's options bar: the live options, then the read-only ones. */
export function barOptions(run: Pick<TraceRun, 'backend'> | null | undefined): readonly BarOption[] {
  return backendOf(run).options as readonly BarOption[];
}

/** Whether a run's back end adds the explorer tab `tab` (`guards`, `traceVsExport`). */
export function addsTab(run: Pick<TraceRun, 'backend'> | null | undefined, tab: string): boolean {
  return run !== null && run !== undefined && (backendOf(run).tabs as readonly string[]).includes(tab);
}

/** A saved file's type as JupyterLab registers it (the archive viewer opens each). */
export interface SavedFileType {
  name: string;
  displayName: string;
  extensions: string[];
}

/** The files the back ends read back (`.pt`, `.pt2`), from their rows, in the rows' order. */
export function savedFileTypes(): SavedFileType[] {
  const rows: Record<string, BackendRow> = BACKENDS;
  return Object.values(rows).flatMap(row =>
    row.files.map(f => ({ name: f.file_type, displayName: f.file_type_label, extensions: [...f.extensions] }))
  );
}

/**
 * Schema 2 named a TorchScript archive read back a back end of its own; schema 3 says which back end's file it
 * is. A schema-2 run's `backend` as schema 3's, and whether it named a file (model/legacy.ts upgrades with it).
 */
export function schema2Backend(backend: unknown): { backend: unknown; file: boolean } {
  return backend === 'torchscript-archive' ? { backend: 'trace', file: true } : { backend, file: false };
}

/** Why a run that ran has no check: the setting that turned it off (`check_trace=False`), else its check's name. */
export function checkOffWords(row: BackendRow): string {
  const off: string = row.check_off;
  const name: string = row.check_name;
  return off ? `The check was off (${off}).` : `${name.charAt(0).toUpperCase()}${name.slice(1)} was off.`;
}
