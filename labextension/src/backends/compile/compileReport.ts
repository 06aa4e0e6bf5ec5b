/**
 * What the explorer shows of a torch.compile run beyond its graphs (its `records`, core/compile/records.py): the
 * graphs of the first call in the order they ran with the breaks between them at their lines, the "Graph breaks"
 * tab's steps (one per break, in the order dynamo met them: the line, torch's words, the registry code, the op
 * before and the op after), and the "Recompilations" tab's calls (per call: its inputs, the graphs it compiled, the
 * guards that failed). Torch-free and DOM-free, so vitest checks it on the `compiled` fixture.
 */

import type {
  CompileOpRef,
  CompileRegion,
  CompileReport,
  GraphBreak,
  Recompilation,
  TraceRun
} from '../../model/protocol.generated';
import { plural } from '../../model/words';

/** A compiled run's records (`run.records` of a run of the compile back end), or null for another run. */
export function compileRecords(run: Pick<TraceRun, 'backend' | 'records'> | null | undefined): CompileReport | null {
  // the compile back end's records are its CompileReport (its registry row's records_type)
  return run?.backend === 'compile' ? ((run.records as CompileReport | null | undefined) ?? null) : null;
}

/** torch's page on a break type of its registry (`GB0059` -> `.../gb/gb0059.html`); null without a code. */
export function registryPage(gbCode: string): string | null {
  return /^GB\d{4}$/.test(gbCode)
    ? `https://meta-pytorch.github.io/compile-graph-break-site/gb/${gbCode.toLowerCase()}.html`
    : null;
}

/** One step of the Graph breaks tab: a break, with the graphs on either side of it. */
export interface BreakStep {
  /** its index in `graph_breaks` (what a region's `ends_at_break` names) */
  index: number;
  gb: GraphBreak;
  /** `GB0059 · Failed to trace builtin operator`, or torch's type alone where this torch has no registry */
  title: string;
  /** `hit 12 times per call`, `dynamo gave up on forward: it runs eagerly`, '' for a plain break hit once */
  cost: string;
  /** the graph that ends at it and the one after it (the op before / after), null where there is none */
  before: CompileOpRef | null;
  after: CompileOpRef | null;
}

export function breakSteps(report: CompileReport | null | undefined): BreakStep[] {
  return (report?.graph_breaks ?? []).map((gb, index) => ({
    index,
    gb,
    title: [gb.gb_code, gb.gb_type].filter(Boolean).join(' · ') || 'graph break',
    cost: gb.skipped_frame
      ? `dynamo gave up on ${gb.skipped_frame}: none of it is compiled, it runs eagerly`
      : gb.count > 1
        ? `hit ${gb.count} times per call: its cost is paid ${gb.count} times`
        : '',
    before: gb.before ?? null,
    after: gb.after ?? null
  }));
}

/** One row of the first call's program: a graph, or the break it ends at. */
export type ProgramRow = { kind: 'graph'; region: CompileRegion } | { kind: 'break'; step: BreakStep };

/**
 * The graphs the first call compiled, in the order dynamo compiled (and ran) them, each followed by the break it
 * ends at: `forward (3 ops) → break at line 10 → forward#1 (2 ops)`. A break no graph of the first call ends at
 * (a function dynamo gave up on) comes last.
 */
export function firstCallProgram(report: CompileReport | null | undefined): ProgramRow[] {
  if (!report) {
    return [];
  }
  const steps = breakSteps(report);
  const rows: ProgramRow[] = [];
  const shown = new Set<number>();
  for (const region of report.regions.filter(r => r.call === 0)) {
    rows.push({ kind: 'graph', region });
    const at = region.ends_at_break;
    if (at !== null && steps[at]) {
      rows.push({ kind: 'break', step: steps[at] });
      shown.add(at);
    }
  }
  steps.filter(s => !shown.has(s.index)).forEach(step => rows.push({ kind: 'break', step }));
  return rows;
}

/** The Graph breaks tab's headline: `2 graph breaks: 3 graphs where one would do, 2 breaks per call`. */
export function breaksHeadline(report: CompileReport): string {
  const breaks = report.graph_breaks;
  const graphs = report.regions.filter(r => r.call === 0).length;
  if (!breaks.length) {
    return `no graph break: the first call ran ${plural(graphs, 'graph')}, one per compiled function`;
  }
  const perCall = breaks.filter(b => !b.skipped_frame).reduce((n, b) => n + b.count, 0);
  return `${plural(breaks.length, 'graph break')}: the first call ran ${plural(graphs, 'graph')} where one would do, ${plural(perCall, 'break')} per call`;
}

/** One call of a compiled run: its inputs, the graphs it compiled, and why it compiled them. */
export interface CallRow {
  /** 0 = the first call, 1 = `calls[0]`, ... */
  call: number;
  /** `call 1 (calls[0]): Float(3, 8)` */
  label: string;
  /** the graphs this call compiled (none: every graph compiled before served it) */
  compiled: CompileRegion[];
  recompilations: Recompilation[];
}

/** The inputs of each call, described: the run's example inputs, then each of `calls` (the recorded options). */
export function callInputs(run: Pick<TraceRun, 'inputs' | 'options'>): string[] {
  const first = Object.values(run.inputs ?? {})[0] ?? [];
  // a compiled run's recorded options (RecordedCompileOptions): each further call described by its inputs
  const options: unknown = run.options;
  const recorded = options && typeof options === 'object' && 'calls' in options ? options.calls : null;
  const calls: unknown[] = Array.isArray(recorded) ? recorded : [];
  const text = (set: unknown): string => (Array.isArray(set) ? set.map(String).join(', ') : String(set));
  return [text(first), ...calls.map(text)];
}

export interface RecompilesModel {
  calls: CallRow[];
  /** every recompilation (the tab's count) */
  count: number;
  /** `after 8 compilations torch runs forward eagerly`, one per function torch gave up on */
  limits: string[];
}

/** The Recompilations tab's model of a compiled run; null for another run. */
export function recompilesModel(
  report: CompileReport | null | undefined,
  run: Pick<TraceRun, 'inputs' | 'options'>
): RecompilesModel | null {
  if (!report) {
    return null;
  }
  const inputs = callInputs(run);
  const calls: CallRow[] = [];
  for (let call = 0; call < Math.max(report.calls, 1); call++) {
    const described = inputs[call] ?? '';
    const which = call === 0 ? 'the example inputs' : `calls[${call - 1}]`;
    calls.push({
      call,
      label: `call ${call} (${which})${described ? `: ${described}` : ''}`,
      compiled: report.regions.filter(r => r.call === call),
      recompilations: report.recompilations.filter(r => r.call === call)
    });
  }
  const limits = report.limit_hit.map(
    func =>
      `after ${report.recompile_limit} compilations torch stopped compiling ${func}: every later call with new inputs runs it eagerly, without a word`
  );
  return { calls, count: report.recompilations.length, limits };
}

/** The region a recompilation compiled (its compile id), or null. */
export function recompiledRegion(report: CompileReport, r: Recompilation): CompileRegion | null {
  return r.compile_id ? (report.regions.find(region => region.compile_id === r.compile_id) ?? null) : null;
}

/** What a call compiled, in words: `compiled forward#3, forward#4`, `compiled nothing: its graphs were reused`. */
export function compiledText(row: CallRow): string {
  return row.compiled.length
    ? `compiled ${row.compiled.map(r => r.graph).join(', ')}`
    : 'compiled nothing: the graphs compiled before served it';
}
