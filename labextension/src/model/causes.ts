/**
 * Divergences grouped by cause: the check's roots of one case at one source line form a cause ("cell [9], line 13:
 * 6 ops only in the check trace"), with the warnings and findings that explain it and the option fix a finding
 * names. A cause behind a cause is a root already: the diff (core/diff.py) makes a downstream divergence that is
 * more than a consequence a root of its own (a loop over a shape that ran another number of times after a frozen
 * branch, a size frozen into the trace). A line that still only holds downstream divergences but carries a warning
 * of its own is a cause too: it must not hide behind the branch. What is left downstream joins the cause at its
 * line, or is counted as following from the roots.
 *
 * The stepper walks `stepOrder`: the roots, cause by cause (what the Check tab counts), or every divergence.
 * A cause without roots is listed (and reached by its link, or by the stepper with downstream on).
 * Indices are into `run.divergences` (the host's `currentDivergence`).
 */

import { userFrame } from './graph';
import { FindingJSON, TraceWarningJSON } from './protocol';
import { CaseDivergence, categoryOf, findingIsProblem, plural, TraceRunModel } from './run';

export interface Cause {
  caseIndex: number;
  method: string;
  /** the user line the cause's nodes were recorded at; '' / 0 when they have none */
  file: string;
  line: number;
  /** indices into run.divergences, in order */
  roots: number[];
  downstream: number[];
  /** "6 ops only in the check trace", "1 op differs" (the roots; downstream when there are none) */
  summary: string;
  /** the warnings and findings that say why */
  warnings: TraceWarningJSON[];
  findings: FindingJSON[];
}

export interface Causes {
  causes: Cause[];
  /** downstream divergences at no cause's line: they follow from the roots above */
  following: number[];
}

/** The source line of a divergence: its trace node's, else its check node's. */
export function divergencePlace(run: TraceRunModel, d: CaseDivergence): { file: string; line: number } | null {
  const trace = run.graphs.get(d.method);
  const check = run.caseOf(d)?.graph ?? trace;
  const frame =
    (d.traceNode !== null && trace ? userFrame(trace.nodes[d.traceNode]?.source ?? null) : null) ??
    (d.checkNode !== null && check ? userFrame(check.nodes[d.checkNode]?.source ?? null) : null);
  return frame ? { file: frame.file, line: frame.line } : null;
}

/** "6 ops only in the check trace, 1 op differs". */
export function describeDivergences(divergences: CaseDivergence[]): string {
  const checkOnly = divergences.filter(d => d.traceNode === null).length;
  const traceOnly = divergences.filter(d => d.checkNode === null).length;
  const both = divergences.length - checkOnly - traceOnly;
  const parts: string[] = [];
  if (traceOnly) {
    parts.push(`${plural(traceOnly, 'op')} only in the trace`);
  }
  if (checkOnly) {
    parts.push(`${plural(checkOnly, 'op')} only in the check trace`);
  }
  if (both) {
    parts.push(`${plural(both, 'op')} ${both === 1 ? 'differs' : 'differ'}`);
  }
  return parts.join(', ');
}

export function groupByCause(run: TraceRunModel): Causes {
  const all = run.divergences;
  const causes: Cause[] = [];
  const byKey = new Map<string, Cause>();
  const keyOf = (d: CaseDivergence, place: { file: string; line: number } | null): string =>
    `${d.caseIndex}\u0000${d.method}\u0000${place?.file ?? ''}\u0000${place?.line ?? 0}`;
  const open = (d: CaseDivergence, place: { file: string; line: number } | null): Cause => {
    const key = keyOf(d, place);
    let cause = byKey.get(key);
    if (!cause) {
      cause = {
        caseIndex: d.caseIndex,
        method: d.method,
        file: place?.file ?? '',
        line: place?.line ?? 0,
        roots: [],
        downstream: [],
        summary: '',
        warnings: [],
        findings: []
      };
      byKey.set(key, cause);
      causes.push(cause);
    }
    return cause;
  };
  const warned = (method: string, place: { file: string; line: number } | null): TraceWarningJSON[] =>
    place ? explaining.filter(w => w.method === method && w.line === place.line && w.file === place.file) : [];
  // warnings that can say why the graphs part: not a library's notice, not the mismatch the divergence causes
  // (the table: core/categories.py)
  const explaining = run.userWarnings.filter(w => categoryOf(w.category).explains_divergences);
  const places = all.map(d => divergencePlace(run, d));
  all.forEach((d, i) => {
    if (d.kind === 'root') {
      open(d, places[i]).roots.push(i);
    }
  });
  const following: number[] = [];
  all.forEach((d, i) => {
    if (d.kind !== 'downstream') {
      return;
    }
    const existing = byKey.get(keyOf(d, places[i]));
    if (existing) {
      existing.downstream.push(i);
    } else if (warned(d.method, places[i]).length) {
      open(d, places[i]).downstream.push(i);
    } else {
      following.push(i);
    }
  });
  for (const cause of causes) {
    const place = cause.line ? { file: cause.file, line: cause.line } : null;
    const traceNodes = new Set(
      [...cause.roots, ...cause.downstream].map(i => all[i].traceNode).filter((n): n is number => n !== null)
    );
    const onNodes = (ids: number[]): boolean => ids.some(id => traceNodes.has(id));
    // a finding about the cause's line (a loop unrolled with the example's count), though the cause's own ops
    // are only in the check trace
    const trace = run.graphs.get(cause.method);
    const onLine = (ids: number[]): boolean =>
      place !== null &&
      trace !== undefined &&
      ids.some(id => {
        const frame = userFrame(trace.nodes[id]?.source ?? null);
        return frame !== null && frame.file === place.file && frame.line === place.line;
      });
    cause.warnings = explaining.filter(
      w => w.method === cause.method && (warned(cause.method, place).includes(w) || onNodes(w.node_ids))
    );
    cause.findings = run.findings.filter(
      f =>
        f.method === cause.method &&
        findingIsProblem(f) &&
        (onNodes(f.node_ids) || onLine(f.node_ids) || isAboutTheCheck(f))
    );
    cause.summary = describeDivergences((cause.roots.length ? cause.roots : cause.downstream).map(i => all[i]));
  }
  return { causes, following };
}

/** Findings about the check as a whole (the Transformer fast path): they explain every divergence. */
function isAboutTheCheck(f: FindingJSON): boolean {
  return f.kind === 'transformer_fastpath';
}

/**
 * What the stepper walks: the roots, cause by cause (as many as the Check tab and the header count); with
 * `downstream`, every divergence of each cause (a cause without roots included), then the rest.
 */
export function stepOrder(grouped: Causes, downstream: boolean): number[] {
  const out: number[] = [];
  for (const cause of grouped.causes) {
    out.push(...cause.roots);
    if (downstream) {
      out.push(...cause.downstream);
    }
  }
  if (downstream) {
    out.push(...grouped.following);
  }
  return out;
}
