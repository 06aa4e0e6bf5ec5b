/**
 * What the explorer shows of an export run beyond its graph (its `records`, core/export/records.py): the symbols a
 * shape may hold (`Float(s77, 8)`: their ranges and sources on hover), and the Guards tab's model: the symbols, then the specialisations, guards and runtime asserts, then draft_export's failures.
 * Torch-free and DOM-free, so vitest checks it on the export fixture.
 */

import type { DraftFailure, ExportGuard, ExportReport, ExportSymbol, TraceRun } from '../../model/protocol.generated';

/** An export run's records (`run.records` of a run of the export back end), or null for another run. */
export function exportRecords(run: Pick<TraceRun, 'backend' | 'records'> | null | undefined): ExportReport | null {
  // the export back end's records are its ExportReport (its registry row's records_type)
  return run?.backend === 'export' ? ((run.records as ExportReport | null | undefined) ?? null) : null;
}

/** `2 ≤ s77 ≤ 64`, `s66 = 3`, `s12 ≥ 2`, `u0 (unbounded)`: a symbol's range as export knows it. */
export function rangeText(s: ExportSymbol): string {
  if (s.min !== null && s.max !== null) {
    return s.min === s.max ? `${s.name} = ${s.min}` : `${s.min} ≤ ${s.name} ≤ ${s.max}`;
  }
  if (s.min !== null) {
    return `${s.name} ≥ ${s.min}`;
  }
  if (s.max !== null) {
    return `${s.name} ≤ ${s.max}`;
  }
  return `${s.name} (unbounded)`;
}

/** One symbol as a tooltip line: `s77: 2 ≤ s77 ≤ 64, from x.size()[0]`. */
export function symbolText(s: ExportSymbol): string {
  const from = s.sources.length ? `, from ${s.sources.join(', ')}` : '';
  const kind = s.kind === 'unbacked' ? ' (data-dependent)' : '';
  return `${s.name}: ${rangeText(s)}${from}${kind}`;
}

/** The symbols in a value's shape, in order, each once (`['s77']` for `(s77, 8)`). */
export function shapeSymbols(shape: readonly (number | string | null)[] | null): string[] {
  return [...new Set((shape ?? []).filter((d): d is string => typeof d === 'string'))];
}

/**
 * The tooltip of a shape with symbols: one line per symbol with its range and sources (an expression such as
 * `2*s77` names the symbols it holds); null when the shape has none or the run is not an export.
 */
export function shapeTitle(
  report: ExportReport | null | undefined,
  shape: readonly (number | string | null)[] | null
): string | null {
  const names = shapeSymbols(shape);
  if (!report || !names.length) {
    return null;
  }
  const lines: string[] = [];
  for (const dim of names) {
    const known = report.symbols.filter(s => s.name === dim || new RegExp(`\\b${s.name}\\b`).test(dim));
    lines.push(...(known.length ? known.map(symbolText) : [`${dim}: a symbolic size`]));
  }
  return [...new Set(lines)].join('\n');
}

/**
 * A guard's expression in the inputs' terms: each symbol written as its first source (`Eq(s53, s70)` ->
 * `Eq(attention_mask.size()[1], input_ids.size()[1])`); null when no symbol of it has a source. What a guard asks
 * of the inputs, readable where torch recorded no line for it (its own code added it).
 */
export function guardInInputs(expr: string, symbols: readonly ExportSymbol[]): string | null {
  const sourceOf = new Map(symbols.filter(s => s.sources.length).map(s => [s.name, s.sources[0]]));
  if (!sourceOf.size) {
    return null;
  }
  let replaced = false;
  const spelled = expr.replace(/\b[su]\d+\b/g, name => {
    const source = sourceOf.get(name);
    replaced ||= source !== undefined;
    return source ?? name;
  });
  return replaced ? spelled : null;
}

/** The Guards tab's sections of assumptions, most telling first: a specialisation is a dim that is no longer dynamic. */
export const GUARD_SECTIONS: readonly { kind: ExportGuard['kind']; title: string; what: string }[] = [
  {
    kind: 'specialization',
    title: 'Specializations',
    what: 'a dynamic dim the code made a constant: the program only takes that size'
  },
  { kind: 'guard', title: 'Guards', what: 'checked on the inputs when the program is called' },
  { kind: 'runtime_assert', title: 'Runtime asserts', what: 'asserts inside the graph (data-dependent values)' }
];

export interface GuardSection {
  kind: ExportGuard['kind'];
  title: string;
  what: string;
  guards: ExportGuard[];
}

export interface GuardsModel {
  symbols: ExportSymbol[];
  /** The non-empty sections, in GUARD_SECTIONS' order. */
  sections: GuardSection[];
  /** draft_export's failures; null when no draft ran. */
  draft: DraftFailure[] | null;
  /** What the tab title counts: every guard, assert, specialisation, and draft failure (a failed dim's advice explains one of them). */
  count: number;
}

/** The Guards tab's model of an export run's report; null for a trace (or an export that recorded none). */
export function guardsModel(report: ExportReport | null | undefined): GuardsModel | null {
  if (!report) {
    return null;
  }
  const sections = GUARD_SECTIONS.map(s => ({ ...s, guards: report.guards.filter(g => g.kind === s.kind) })).filter(
    s => s.guards.length > 0
  );
  const draft = report.draft ?? null;
  return {
    symbols: report.symbols,
    sections,
    draft,
    count: report.guards.length + (draft?.length ?? 0)
  };
}

/**
 * Whether the graph shown is draft_export's rather than an exported program's: export refused the model and the
 * draft (draft="on_failure" or "always") recorded what export would, deferring what export refused to runtime
 * asserts (core/export/session.py `_draft`). An export run with an error and a graph has only the draft's.
 */
export function showsDraftGraph(run: Pick<TraceRun, 'backend' | 'error' | 'graphs'> | null | undefined): boolean {
  return run?.backend === 'export' && run.error !== null && Object.keys(run.graphs).length > 0;
}

/** What the header says under export's error when the graph is the draft's. */
export const DRAFT_GRAPH_NOTE =
  "The graph is draft_export's, not an exported program: it records what export would, with the refused " +
  'line assumed as it ran here and checked by asserts (the Guards tab lists what the draft reported).';
