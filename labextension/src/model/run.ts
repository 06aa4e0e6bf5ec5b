/**
 * A decoded run: graphs, warnings, check cases with their diffs, findings, probe.
 */

import { decodeGraph, TraceGraph } from './graph';
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
  Verdict
} from './protocol';

/** Warning categories in order, with their titles (mirrors jupyter_tracejit/core/tracer_warnings.py CATEGORIES). */
export const WARNING_TITLES: Record<string, string> = {
  to_bool: 'tensor → Python bool (frozen branch)',
  to_int: 'tensor → Python int',
  to_float: 'tensor → Python float',
  to_complex: 'tensor → Python complex',
  to_number: 'tensor → Python number (.item())',
  to_list: 'tensor → Python list',
  to_numpy: 'tensor → NumPy',
  tensor_const: 'torch.tensor(...) frozen as a constant',
  from_numpy_const: 'torch.from_numpy(...) frozen as a constant',
  iterate: 'iterating over a tensor',
  len: 'len(tensor)',
  live_refs: 'in-place op on a viewed tensor',
  nondeterministic: 'nondeterministic nodes',
  output_mismatch_python: 'trace ≠ Python function',
  output_mismatch_retrace: 'trace ≠ re-trace',
  list_output: 'list output',
  already_script: 'already TorchScript',
  deprecated: 'deprecation notice',
  other: 'other warnings'
};

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
    const counts = { warnings: this.userWarnings.length, findings: 0, probe: 0, roots };
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
    return this.raw.warnings.filter(w => w.category !== 'deprecated');
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
    ok: c.ok
  };
}

/** Decode a run, or throw an Error whose message says what is wrong with the data. */
export function decodeRun(data: unknown): TraceRunModel {
  const problem = runProblem(data);
  if (problem) {
    throw new Error(problem);
  }
  return new TraceRunModel(data as TraceRunJSON);
}
