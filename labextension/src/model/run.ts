/**
 * A decoded run: graphs, warnings, check cases with their diffs, findings, probe.
 */

import { backendOf } from './backends';
import { upgradeRun } from './legacy';
import { decodeGraph, formatAttribute, NodeInfo, TraceGraph } from './graph';
import { FileNames, locationLabel } from './location';
import {
  CheckCaseJSON,
  ConstantDiffJSON,
  FindingJSON,
  GraphDiffJSON,
  OutputComparisonJSON,
  ProbeReportJSON,
  runProblem,
  TargetJSON,
  TraceErrorJSON,
  TraceRunJSON,
  TraceWarningJSON,
  Verdict,
  WARNING_CATEGORIES
} from './protocol';
import { plural } from './words';

/** Warning categories in order, with their titles (the table is core/categories.py, through the run schema). */
export const WARNING_TITLES: Record<string, string> = Object.fromEntries(
  Object.entries(WARNING_CATEGORIES).map(([name, row]) => [name, row.title])
);

/** What the explorer decides about a warning's category: counted, about the trace, may explain a divergence. */
export function categoryOf(category: string): {
  counted: boolean;
  about_the_trace: boolean;
  explains_divergences: boolean;
} {
  return (
    (WARNING_CATEGORIES as Record<string, (typeof WARNING_CATEGORIES)[keyof typeof WARNING_CATEGORIES]>)[category] ?? {
      counted: true,
      about_the_trace: false,
      explains_divergences: false
    }
  );
}

export interface Divergence {
  traceNode: number | null;
  checkNode: number | null;
  kind: 'root' | 'downstream';
  reason: string;
}

export class GraphDiff {
  readonly divergences: Divergence[];
  readonly constantDiffs: ConstantDiffJSON[];
  /** trace node id -> check node id */
  readonly matched: Map<number, number>;
  private inverse: Map<number, number> | null = null;

  constructor(data: GraphDiffJSON) {
    this.divergences = data.divergences.map(([a, b, k, reason]) => ({
      traceNode: a < 0 ? null : a,
      checkNode: b < 0 ? null : b,
      kind: k === 0 ? 'root' : 'downstream',
      reason
    }));
    this.constantDiffs = data.constant_diffs;
    this.matched = new Map();
    for (const [a, b, n] of data.matched_runs) {
      for (let i = 0; i < n; i++) {
        this.matched.set(a + i, b + i);
      }
    }
  }

  get roots(): Divergence[] {
    return this.divergences.filter(d => d.kind === 'root');
  }

  get downstream(): Divergence[] {
    return this.divergences.filter(d => d.kind === 'downstream');
  }

  checkPartner(traceNode: number): number | null {
    return this.matched.get(traceNode) ?? null;
  }

  tracePartner(checkNode: number): number | null {
    if (!this.inverse) {
      this.inverse = new Map([...this.matched].map(([a, b]) => [b, a]));
    }
    return this.inverse.get(checkNode) ?? null;
  }
}

export interface CheckCase {
  index: number;
  method: string;
  label: string;
  inputs: string[];
  outputs: OutputComparisonJSON[];
  /** The check graph, when it differs from the trace (else null: identical). */
  graph: TraceGraph | null;
  diff: GraphDiff | null;
  textDiffers: boolean;
  exception: TraceErrorJSON | null;
  /** Why the input set was not run, nothing compared (a size the Python code rejects); '' when it ran. */
  skipped: string;
  ok: boolean;
}

/** One divergence with the case it belongs to: what the stepper walks through. */
export interface CaseDivergence extends Divergence {
  caseIndex: number;
  method: string;
}

export class TraceRunModel {
  readonly raw: TraceRunJSON;
  readonly graphs: Map<string, TraceGraph>;
  readonly cases: CheckCase[];

  constructor(raw: TraceRunJSON) {
    this.raw = raw;
    this.graphs = new Map(Object.entries(raw.graphs).map(([name, g]) => [name, decodeGraph(g)]));
    this.cases = (raw.check?.cases ?? []).map(decodeCase);
  }

  get ok(): boolean {
    return this.raw.ok;
  }
  get summary(): string {
    return this.raw.summary;
  }
  get target(): TargetJSON {
    return this.raw.target;
  }
  get error(): TraceErrorJSON | null {
    return this.raw.error;
  }
  get warnings(): TraceWarningJSON[] {
    return this.raw.warnings;
  }
  get findings(): FindingJSON[] {
    return this.raw.findings;
  }
  get probe(): ProbeReportJSON | null {
    return this.raw.probe;
  }
  get runId(): string {
    return this.raw.run_id;
  }

  /** file -> display name (`cell [9]`); empty for runs saved before the table existed. */
  get fileNames(): FileNames {
    return this.raw.file_names ?? {};
  }

  /** Where a location reads in every view: `cell [9], line 7` for notebook code, else `model.py:7`. */
  locationLabel(file: string, line: number): string {
    return locationLabel(file, line, this.fileNames);
  }

  /**
   * The badge: ok / warnings / check failed / failed, with its reasons and counts (TraceRun.verdict, written by
   * the kernel). A run saved before the verdict existed gets the part its `ok` and `error` tell.
   */
  get verdict(): Verdict {
    const given = this.raw.verdict;
    if (given) {
      return given;
    }
    const roots = this.cases.reduce((n, c) => n + (c.diff?.roots.length ?? 0), 0);
    const counts = {
      warnings: this.userWarnings.length,
      findings: this.findings.filter(findingIsProblem).length,
      probe: 0,
      roots
    };
    if (this.raw.ok) {
      return { level: 'ok', label: 'ok', reasons: [], ...counts };
    }
    return {
      level: 'error',
      label: this.raw.error ? 'failed' : 'check failed',
      reasons: [this.raw.summary],
      ...counts
    };
  }

  /**
   * What the header, the Warnings tab's title and its badges count (Verdict.problems in run.py): distinct
   * warnings, findings that are problems (`findingIsProblem`) and probe disagreements.
   */
  get problems(): number {
    const verdict = this.verdict;
    return verdict.warnings + verdict.findings + verdict.probe;
  }

  /**
   * The same counts named apart, as the header says them: `1 warning, 2 findings` (a finding is ours, not torch's:
   * counted as warnings they read as three of torch's); empty when none. Mirrors Verdict.problems_text in run.py.
   */
  get problemsText(): string {
    const verdict = this.verdict;
    const counts: [number, string][] = [
      [verdict.warnings, 'warning'],
      [verdict.findings, 'finding'],
      [verdict.probe, 'probe disagreement']
    ];
    return counts
      .filter(([n]) => n > 0)
      .map(([n, word]) => plural(n, word))
      .join(', ');
  }

  /** `forward`, else the first traced method, else null. */
  get defaultMethod(): string | null {
    if (this.graphs.has('forward')) {
      return 'forward';
    }
    const first = this.graphs.keys().next();
    return first.done ? null : first.value;
  }

  /** Warnings that point at a problem (the deprecation notice excluded). */
  get userWarnings(): TraceWarningJSON[] {
    return this.raw.warnings.filter(w => categoryOf(w.category).counted);
  }

  /** Every divergence, case-major, each case's roots first (the order the Python side writes). */
  get divergences(): CaseDivergence[] {
    const out: CaseDivergence[] = [];
    for (const c of this.cases) {
      for (const d of c.diff?.divergences ?? []) {
        out.push({ ...d, caseIndex: c.index, method: c.method });
      }
    }
    return out;
  }

  caseOf(d: CaseDivergence): CheckCase | undefined {
    return this.cases.find(c => c.index === d.caseIndex && c.method === d.method);
  }
}

/**
 * Whether a finding says the trace may be wrong (amber badge, counted, its nodes marked as hazards): any severity
 * but info. Finding.is_problem in core/hazards.py is the same rule; a portability finding (a device baked into the
 * graph) is info unless it can matter for the run.
 */
export function findingIsProblem(f: FindingJSON): boolean {
  return f.severity !== 'info';
}

function decodeCase(c: CheckCaseJSON): CheckCase {
  return {
    index: c.index,
    method: c.method,
    label: c.label,
    inputs: c.inputs,
    outputs: c.outputs,
    graph: c.graph ? decodeGraph(c.graph) : null,
    diff: c.diff ? new GraphDiff(c.diff) : null,
    textDiffers: c.text_differs,
    exception: c.exception,
    skipped: c.skipped ?? '',
    ok: c.ok
  };
}

/**
 * Decode a run, or throw an Error whose message says what is wrong with the data. A run saved by an earlier
 * version is upgraded first (legacy.ts). `check`: a fuller check to make first (a saved run, which may have been
 * edited: model/validate.ts `savedRunProblem`).
 */
export function decodeRun(data: unknown, check: (data: unknown) => string | null = runProblem): TraceRunModel {
  const current = upgradeRun(data);
  const problem = check(current);
  if (problem) {
    throw new Error(problem);
  }
  return new TraceRunModel(current as TraceRunJSON);
}

/** One input of a node as the inspector shows it, like Netron: its argument name and, when it is a constant or a
 * parameter of the module, its value or the parameter's path and type. */
export interface ArgumentInfo {
  /** from the op's schema (`TraceRun.argument_names`); null when unknown (prim ops, runs saved before) */
  name: string | null;
  valueId: number;
  /** `0.0`, `False`, `[1, 2]`, `None` for a constant input (looking through list plumbing), else null */
  constant: string | null;
  /** `blocks.0.fc.weight` for a parameter or buffer read with GetAttr, else null */
  parameter: string | null;
  /** `Float(8, 8)` for that parameter (`TraceRun.parameters`), else null */
  parameterType: string | null;
}

/** A value as Python writes it: `True`, `0.0`, `'mean'`, `None`; `type` is the graph's type of the value. */
function pythonText(value: unknown, type: string): string {
  if (value === null || value === undefined) {
    return 'None';
  }
  if (typeof value === 'boolean') {
    return value ? 'True' : 'False';
  }
  if (typeof value === 'number') {
    if (type === 'bool') {
      return value ? 'True' : 'False';
    }
    return type === 'float' && Number.isInteger(value) ? value.toFixed(1) : String(value);
  }
  if (typeof value === 'string') {
    return `'${value}'`;
  }
  if (Array.isArray(value)) {
    const inner = type.startsWith('List[') ? type.slice(5, -1) : '';
    return '[' + value.map(v => pythonText(v, inner)).join(', ') + ']';
  }
  return formatAttribute(value);
}

/** A constant value (a constant node, or a list/tuple built of them) as Python writes it; null otherwise. */
export function constantText(graph: TraceGraph, valueId: number, depth = 0): string | null {
  const producer = graph.producer(valueId);
  if (!producer || depth > 4) {
    return null;
  }
  const type = graph.values[valueId].type;
  if (producer.role === 'constant') {
    return 'value' in producer.attributes ? pythonText(producer.attributes.value, type) : 'None';
  }
  if (producer.role === 'list' || producer.role === 'tuple') {
    const items = producer.inputs.map(v => constantText(graph, v, depth + 1));
    if (items.every(i => i !== null)) {
      return producer.role === 'list' ? `[${items.join(', ')}]` : `(${items.join(', ')})`;
    }
  }
  return null;
}

/** `blocks.0.fc.weight` for a value read from the module with a chain of attribute reads, else null. */
export function attributePath(graph: TraceGraph, valueId: number): string | null {
  const names: string[] = [];
  let producer = graph.producer(valueId);
  while (producer && producer.role === 'getattr') {
    names.unshift(String(producer.attributes.name ?? '?'));
    producer = producer.inputs.length ? graph.producer(producer.inputs[0]) : null;
  }
  return names.length ? names.join('.') : null;
}

/** The `argument_names` key of a node: `aten::linear(Tensor,Tensor,Tensor)` (core/schemas.py `signature`). */
export function signature(graph: TraceGraph, node: NodeInfo): string {
  return `${node.kind}(${node.inputs.map(v => graph.values[v].type).join(',')})`;
}

/** Every input of `node` with its argument name, constant value or parameter. */
export function argumentsOf(run: TraceRunModel, graph: TraceGraph, node: NodeInfo): ArgumentInfo[] {
  const names = run.raw.argument_names?.[signature(graph, node)];
  const parameters = run.raw.parameters ?? {};
  return node.inputs.map((valueId, i) => {
    const parameter = attributePath(graph, valueId);
    return {
      name: names && names.length === node.inputs.length ? names[i] : null,
      valueId,
      constant: constantText(graph, valueId),
      parameter,
      parameterType: parameter !== null ? (parameters[parameter] ?? null) : null
    };
  });
}

export { plural };

/** How many input sets a passed check ran: "3 input sets", "1 input set, 2 skipped" (core/check.py passed_text). */
export function passedText(cases: readonly { skipped?: string }[]): string {
  const skipped = cases.filter(c => c.skipped).length;
  const ran = plural(cases.length - skipped, 'input set');
  return skipped ? `${ran}, ${skipped} skipped` : ran;
}

/** The explorer header's facts, with the counts the tab titles show. */
export function headerFacts(run: TraceRunModel): string[] {
  const verdict = run.verdict;
  const out: string[] = [];
  const method = run.defaultMethod;
  const graph = method ? run.graphs.get(method) : undefined;
  out.push(graph ? plural(graph.size, 'node') : 'no graph');
  if (run.problems > 0) {
    out.push(run.problemsText);
  }
  const check = run.raw.check;
  if (!check) {
    out.push(run.error ? `not ${backendOf(run.raw).past}` : 'not checked');
  } else if (check.ok && check.cases.length === 0) {
    // an export with no check_inputs and no dynamic dim: no input set ran (core/run.py says the same)
    out.push('nothing to check');
  } else if (check.ok) {
    out.push(`check passed (${passedText(check.cases)})`);
  } else if (verdict.roots > 0) {
    out.push(`check failed: ${plural(verdict.roots, 'root divergence')}`);
  } else {
    // the graphs agree, the numbers do not (random ops, a tolerance too tight): say that, not "0 divergences"
    const differ = check.cases.some(c => c.outputs.some(o => !o.ok));
    out.push(differ ? 'check failed: same graphs, outputs differ' : 'check failed');
  }
  return out;
}
