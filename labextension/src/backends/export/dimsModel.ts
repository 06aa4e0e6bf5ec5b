/**
 * The dims editor's model (the kernel's `dims` state, widgets/explorer_dims.py): one row per dim of each tensor
 * input, static / Dim.AUTO / a range / a multiple, read from and written back to `--dynamic` specs (`x:0`,
 * `x:0=batch[2,64]`, `x:1=8*seq[1,16]`: core/export/options.py parse_dynamic), and the `--dynamic` flags to paste.
 * The kernel checks the specs before it exports (a bad one is said in the status); this only writes them.
 * DOM-free, so vitest checks it.
 */

import type { DimsEditor } from '../../model/protocol.generated';

export type DimKind = 'static' | 'auto' | 'range' | 'multiple';

export const DIM_KINDS: readonly { kind: DimKind; label: string; title: string }[] = [
  { kind: 'static', label: 'static', title: 'the example size only (no entry in dynamic_shapes)' },
  { kind: 'auto', label: 'Dim.AUTO', title: 'export decides: dynamic where the code allows, else static' },
  { kind: 'range', label: 'range', title: "Dim('name', min=..., max=...): dynamic within the range" },
  { kind: 'multiple', label: 'multiple', title: "k * Dim('name', min=..., max=...): a multiple of k" }
];

export interface DimRow {
  input: string;
  dim: number;
  /** the example input's size of the dim */
  size: number;
  kind: DimKind;
  /** the Dim's name (range, multiple); one name on several rows is one symbol */
  symbol: string;
  /** the range's bounds as typed ("" for torch's default) */
  min: string;
  max: string;
  /** k of a multiple */
  times: string;
}

const SPEC = /^(\w+):(\d+)(?:=(?:(\d+)\*)?(\w+)(?:\[(\d*),(\d*)\])?)?$/;

/** A spec as a row's fields; null when it is not a spec. */
export function parseSpec(spec: string): Omit<DimRow, 'size'> | null {
  const m = SPEC.exec(spec.replace(/\s+/g, ''));
  if (!m) {
    return null;
  }
  const [, input, dim, times, symbol, min, max] = m;
  const kind: DimKind = symbol === undefined ? 'auto' : times !== undefined ? 'multiple' : 'range';
  return { input, dim: Number(dim), kind, symbol: symbol ?? '', min: min ?? '', max: max ?? '', times: times ?? '' };
}

/** The rows of the editor: every dim of every tensor input, as the specs say (static where none does). */
export function rowsOf(state: DimsEditor, specs: readonly string[] = state.specs): DimRow[] {
  const given = new Map<string, Omit<DimRow, 'size'>>();
  const bounds = new Map<string, { min: string; max: string }>();
  for (const spec of specs) {
    const row = parseSpec(spec);
    if (row) {
      given.set(`${row.input}:${row.dim}`, row);
      if ((row.min || row.max) && !bounds.has(row.symbol)) {
        bounds.set(row.symbol, { min: row.min, max: row.max });
      }
    }
  }
  return state.inputs.flatMap(input =>
    input.sizes.map((size, dim) => {
      const row = given.get(`${input.name}:${dim}`);
      if (!row) {
        return { input: input.name, dim, size, kind: 'static' as DimKind, symbol: '', min: '', max: '', times: '' };
      }
      // a symbol shared by several dims has its range on its first spec: each of its rows shows it
      return { ...row, size, ...(bounds.get(row.symbol) ?? {}) };
    })
  );
}

/** A row as it changes to another kind: the fields the kind needs, with a name where none was typed. */
export function withKind(row: DimRow, kind: DimKind): DimRow {
  const symbol = row.symbol || (kind === 'multiple' ? `_${row.input}_${row.dim}` : `${row.input}_${row.dim}`);
  return { ...row, kind, symbol, times: kind === 'multiple' ? row.times || '8' : row.times };
}

/** The rows as specs, in order; a symbol's range on its first spec only (parse_dynamic takes it once). */
export function specsOf(rows: readonly DimRow[]): string[] {
  const ranged = new Map<string, string>();
  for (const r of rows) {
    if ((r.kind === 'range' || r.kind === 'multiple') && (r.min || r.max) && !ranged.has(r.symbol)) {
      ranged.set(r.symbol, `[${r.min},${r.max}]`);
    }
  }
  const seen = new Set<string>();
  const specs: string[] = [];
  for (const r of rows) {
    const where = `${r.input}:${r.dim}`;
    if (r.kind === 'static') {
      continue;
    }
    if (r.kind === 'auto') {
      specs.push(where);
      continue;
    }
    const bounds = seen.has(r.symbol) ? '' : (ranged.get(r.symbol) ?? '');
    seen.add(r.symbol);
    specs.push(`${where}=${r.kind === 'multiple' ? `${r.times}*` : ''}${r.symbol}${bounds}`);
  }
  return specs;
}

/** The specs as `--dynamic` flags to paste into `%export` or `tracejit export` (as core's flags_text writes them). */
export function flagsText(specs: readonly string[]): string {
  return specs.map(s => (/[[*]/.test(s) ? `--dynamic "${s}"` : `--dynamic ${s}`)).join(' ');
}

/** Whether the edited specs differ from those of the run on screen. */
export function edited(state: DimsEditor, rows: readonly DimRow[]): boolean {
  return JSON.stringify(specsOf(rows)) !== JSON.stringify(specsOf(rowsOf(state)));
}
