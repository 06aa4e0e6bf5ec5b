/**
 * The wire contract: the JSON that `TraceRun.to_json()` (jupyter_tracejit/core/run.py) writes.
 *
 * These types mirror the Python side field by field; `run.ts` and `graph.ts` decode them into
 * the navigable model the views use. Python's tests write fixtures that the TypeScript tests
 * read, so both sides are checked against the same data.
 */

export const RUN_KIND = 'jupyter-tracejit.run';
export const SCHEMA_VERSION = 1;
export const GRAPH_SCHEMA_VERSION = 1;

/** A non-finite float, which JSON cannot spell. */
export interface NonFinite {
  float: 'nan' | 'inf' | '-inf';
}
export type JsonFloat = number | NonFinite;

/** `[file, line, func, code, internal]` as string-table indices (line and internal are numbers). */
export type FrameRow = [number, number, number, number, number];
/** `[user_index, frame, frame, ...]`, innermost frame first. */
export type StackRow = number[];
/** `[name, type, shape | null, dtype | -1, device | -1, requires_grad (0/1/-1), producer | -1]`. */
export type ValueRow = [number, number, (number | null)[] | null, number, number, number, number];
/** `[inputs, outputs, node ids]` of a block. */
export type BlockRow = [number[], number[], number[]];
/**
 * `[kind, inputs, outputs, scope, stack | -1, attributes | 0, blocks | 0, parent | -1, flags]`;
 * flags bit 0: nondeterministic.
 */
export type NodeRow = [
  number,
  number[],
  number[],
  number,
  number,
  Record<string, unknown> | 0,
  BlockRow[] | 0,
  number,
  number
];

export interface GraphJSON {
  graph_schema: number;
  method: string;
  strings: string[];
  frames: FrameRow[];
  stacks: StackRow[];
  values: ValueRow[];
  nodes: NodeRow[];
  inputs: number[];
  outputs: number[];
  /** `[path, type]` for every module, the root ("") included. */
  scopes: [number, number][];
  code: string;
}

export interface TargetJSON {
  name: string;
  kind: 'function' | 'module' | 'script' | 'invalid';
  type: string;
  file: string;
  line: number;
}

export interface TraceWarningJSON {
  category: string;
  message: string;
  file: string;
  line: number;
  code: string;
  func: string;
  count: number;
  node_ids: number[];
  node_match: '' | 'line' | 'stack' | 'next_line';
  method: string;
  warning_class: string;
  phases: string[];
  torch_location: string;
}

export interface TraceErrorJSON {
  type: string;
  message: string;
  phase: string;
  tag: string;
  hint: string;
  file: string;
  line: number;
  code: string;
  traceback: string;
}

export interface OutputComparisonJSON {
  index: number;
  against: 'python' | 'retrace';
  ok: boolean;
  max_abs: JsonFloat | null;
  max_rel: JsonFloat | null;
  atol: JsonFloat;
  rtol: JsonFloat;
  shape: number[];
  message: string;
}

/** `[trace node | -1, check node | -1, 0 root / 1 downstream, reason]`. */
export type DivergenceRow = [number, number, 0 | 1, string];

export interface ConstantDiffJSON {
  trace_node: number;
  check_node: number;
  message: string;
  max_abs: number | null;
}

export interface GraphDiffJSON {
  divergences: DivergenceRow[];
  constant_diffs: ConstantDiffJSON[];
  /** `[trace_start, check_start, length]`: matched nodes in lock-step runs. */
  matched_runs: [number, number, number][];
}

export interface CheckCaseJSON {
  index: number;
  method: string;
  label: string;
  inputs: string[];
  outputs: OutputComparisonJSON[];
  /** The re-trace's graph; only present when it differs from the trace. */
  graph: GraphJSON | null;
  diff: GraphDiffJSON | null;
  text_differs: boolean;
  exception: TraceErrorJSON | null;
  ok: boolean;
}

export interface CheckReportJSON {
  ok: boolean;
  tolerance: number;
  cases: CheckCaseJSON[];
}

export interface FindingJSON {
  kind: string;
  severity: 'info' | 'warning' | 'error';
  title: string;
  message: string;
  hint: string;
  node_ids: number[];
  method: string;
}

export interface ProbeCaseJSON {
  name: string;
  description: string;
  input_shapes: string[];
  status: 'agree' | 'disagree' | 'trace_error' | 'skipped';
  max_abs: JsonFloat | null;
  max_rel: JsonFloat | null;
  message: string;
}

export interface ProbeReportJSON {
  cases: ProbeCaseJSON[];
  dims: Record<string, number[]>;
}

export interface TraceRunJSON {
  kind: typeof RUN_KIND;
  schema_version: number;
  ok: boolean;
  summary: string;
  target: TargetJSON;
  options: Record<string, unknown>;
  inputs: Record<string, string[]>;
  graphs: Record<string, GraphJSON>;
  warnings: TraceWarningJSON[];
  check: CheckReportJSON | null;
  error: TraceErrorJSON | null;
  findings: FindingJSON[];
  probe: ProbeReportJSON | null;
  python_runs: number;
  timings: Record<string, number>;
  torch_version: string;
  created: string;
  run_id: string;
}

/** Widget state synced with `jupyter_tracejit/widgets/explorer.py` (trait names). */
export interface ExplorerOptions {
  strict: boolean;
  check_trace: boolean;
  check_tolerance: number;
  check_inputs: boolean[];
  force_outplace: boolean;
  module_mode: 'as_is' | 'train' | 'eval';
  no_grad: boolean;
}

export interface HistoryEntry {
  run_id: string;
  summary: string;
  ok: boolean;
  created: string;
  options: Record<string, unknown>;
}

export interface ComparisonJSON {
  a: string;
  b: string;
  method: string;
  graph_a: GraphJSON;
  graph_b: GraphJSON;
  diff: GraphDiffJSON;
}

export type ExplorerStatus = 'idle' | 'tracing' | 'error';

/** Messages the front end sends to the kernel. */
export type ExplorerRequest =
  | { type: 'retrace' }
  | { type: 'show_run'; run_id: string }
  | { type: 'compare'; a: string; b: string; method: string };

export function floatValue(x: JsonFloat | null | undefined): number | null {
  if (x === null || x === undefined) {
    return null;
  }
  if (typeof x === 'number') {
    return x;
  }
  switch (x.float) {
    case 'inf':
      return Infinity;
    case '-inf':
      return -Infinity;
    default:
      return NaN;
  }
}

/** Why a value is not a run this version can show, or null when it is one. */
export function runProblem(data: unknown): string | null {
  if (typeof data !== 'object' || data === null) {
    return 'not a jupyter-tracejit run: expected an object';
  }
  const run = data as Partial<TraceRunJSON>;
  if (run.kind !== RUN_KIND) {
    return `not a jupyter-tracejit run: kind is ${JSON.stringify(run.kind)}`;
  }
  if (run.schema_version !== SCHEMA_VERSION) {
    return (
      `this run was saved with schema_version ${String(run.schema_version)}; ` +
      `this extension reads version ${SCHEMA_VERSION}. Re-run the trace or update jupyter-tracejit.`
    );
  }
  return null;
}
