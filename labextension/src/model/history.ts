/**
 * How the run history names its runs (the options bar's history and the check tab's "compare two runs" list
 * read the same labels): `run 3: warnings · no_grad=true, module_mode="eval" · 12 nodes, check passed`.
 * A run names every option that differs from the first run, not only what changed since the run before: after
 * two changes, the run before's label no longer tells what the run was traced with.
 */
import {
  EXPORT_OPTION_SPECS,
  EXPORT_READ_ONLY_OPTIONS,
  ExplorerOptions,
  ExportExplorerOptions,
  HistoryEntry,
  OPTION_SPECS,
  TraceRunJSON
} from './protocol';

/** The options bar's values: a trace's, or an export run's. */
export type AnyOptions = ExplorerOptions | ExportExplorerOptions;

/** Whether `options` are an export run's (their bar is EXPORT_OPTION_SPECS). */
export function isExportOptions(options: AnyOptions): options is ExportExplorerOptions {
  return 'draft' in options;
}

/** `module_mode="eval", no_grad=true`: each option `run` was traced with that `first` was not, in the bar's order. */
export function optionsDiffering(first: AnyOptions, run: AnyOptions): string[] {
  const keys: readonly string[] = (isExportOptions(run) ? EXPORT_OPTION_SPECS : OPTION_SPECS).map(spec => spec.key);
  const a = first as unknown as Record<string, unknown>;
  const b = run as unknown as Record<string, unknown>;
  return keys.filter(k => JSON.stringify(a[k]) !== JSON.stringify(b[k])).map(k => `${k}=${JSON.stringify(b[k])}`);
}

/** How many characters of a run's summary a label keeps (a select's option is one line). */
const MAX_FACTS_CHARS = 70;

/** The label of run `i` of `history` (see the header). */
export function historyLabel(history: readonly HistoryEntry[], i: number): string {
  const entry = history[i];
  const differ = i > 0 ? optionsDiffering(history[0].explorer_options, entry.explorer_options) : [];
  // "Net: ok; 12 nodes, 1 warning, check passed": the badge's word says the first part better
  const summary = entry.summary;
  const facts = summary.includes('; ') ? summary.slice(summary.indexOf('; ') + 2) : summary;
  return (
    `run ${i + 1}: ${entry.verdict}` +
    (differ.length ? ` · ${differ.join(', ')}` : '') +
    ` · ${facts.slice(0, MAX_FACTS_CHARS)}`
  );
}

/**
 * What a read-only explorer's options bar says of its saved run: `read-only · strict=true  check_trace=true ...`
 * by the names the bar uses, or `read-only · loaded from model.pt` for a file tj.load read (its options are the
 * load's, none of the bar's). dynamic_shapes / check_inputs left out (null) say nothing worth a word.
 */
export function savedOptionsText(run: TraceRunJSON | null | undefined): string {
  const saved = (run?.options ?? {}) as Record<string, unknown>;
  if (typeof saved.path === 'string') {
    // the file's name: the server loads by its absolute path (and to the CPU), which says nothing more
    return `read-only · loaded from ${saved.path.split(/[\\/]/).pop()}`;
  }
  const specs: readonly { key: string; label: string }[] =
    run?.backend === 'export' ? [...EXPORT_OPTION_SPECS, ...EXPORT_READ_ONLY_OPTIONS] : OPTION_SPECS;
  const given = (key: string): boolean =>
    key in saved && !(saved[key] === null && EXPORT_READ_ONLY_OPTIONS.some(spec => spec.key === key));
  const shown = specs
    .filter(spec => given(spec.key))
    .map(spec => `${spec.label}=${JSON.stringify(saved[spec.key])}`)
    .join('  ');
  return shown ? `read-only · ${shown}` : 'read-only';
}
