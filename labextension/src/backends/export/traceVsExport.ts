/**
 * The trace-versus-export comparison of an export run made with `compare_trace=True` (`run.compared`,
 * core/capture_diff.py): how much of the trace the export matched, the lines where they differ (one step per
 * source line, each with its reasons in words) and the two graphs as DOT, a matched pair under one name in both
 * pictures so that Graphviz ranks them alike and a click on one finds its partner. Torch-free and DOM-free, so
 * vitest checks it on the `compared` fixture.
 */

import type { CaptureComparison, LineDifference, TraceComparison } from '../../model/protocol.generated';
import { TraceGraph } from '../../model/graph';
import { FileNames } from '../../model/location';
import { PairedPictures, pairedPictures } from '../../model/align';
import { plural } from '../../model/words';

export type DifferenceReason = LineDifference['reason'];

/**
 * The reasons in words, in the order the header counts them: what only one side records because of how it
 * captures (sizes, checks, no-ops), then what the model's code makes differ (control flow, a frozen value), then
 * what is left. The kernel's `detail` says the same at length (capture_diff.py `_REASONS`).
 */
export const REASON_WORDS: Record<DifferenceReason, string> = {
  shape_arithmetic: 'shape arithmetic',
  runtime_check: 'runtime check (export only)',
  no_op: 'no-op export leaves out',
  control_flow: 'control flow',
  frozen: 'value the trace froze',
  only_trace: 'only in the trace',
  only_export: 'only in the export',
  refused: 'the line export refused (against its draft)'
};

const REASON_ORDER = Object.keys(REASON_WORDS) as DifferenceReason[];

/** One difference at a line, in words. */
export interface StepReason {
  reason: DifferenceReason;
  words: string;
  detail: string;
  traceNodes: number[];
  exportNodes: number[];
}

/** One step of the stepper: a source line (file '' and line 0: ops with no user line) and what differs there. */
export interface LineStep {
  file: string;
  line: number;
  code: string;
  reasons: StepReason[];
  /** every op of the line, per side, in id order */
  traceNodes: number[];
  exportNodes: number[];
}

/** The lines that differ, one step per file:line in the kernel's order (the order the model runs them), those with no line last. */
export function lineSteps(cmp: CaptureComparison): LineStep[] {
  const steps = new Map<string, LineStep>();
  for (const d of cmp.lines) {
    const key = `${d.file}:${d.line}`;
    let step = steps.get(key);
    if (!step) {
      step = { file: d.file, line: d.line, code: d.code, reasons: [], traceNodes: [], exportNodes: [] };
      steps.set(key, step);
    }
    step.reasons.push({
      reason: d.reason,
      words: REASON_WORDS[d.reason] ?? d.reason,
      detail: d.detail,
      traceNodes: d.trace_nodes,
      exportNodes: d.export_nodes
    });
    step.traceNodes.push(...d.trace_nodes);
    step.exportNodes.push(...d.export_nodes);
  }
  const out = [...steps.values()];
  for (const s of out) {
    s.reasons.sort((a, b) => REASON_ORDER.indexOf(a.reason) - REASON_ORDER.indexOf(b.reason));
    s.traceNodes.sort((a, b) => a - b);
    s.exportNodes.sort((a, b) => a - b);
  }
  // ops with no user line (torch's own code) say least about the model: after the lines
  return [...out.filter(s => s.file), ...out.filter(s => !s.file)];
}

export interface Coverage {
  matched: number;
  /** the trace's ops export could have a counterpart for (no-ops excluded: capture_diff.py `coverage`) */
  comparable: number;
  traceOps: number;
  exportOps: number;
  /** 0..1 */
  share: number;
  /** `5 of 5 trace ops matched (100%)` */
  text: string;
  /** the trace's ops the count leaves out, in words; '' when none */
  uncounted: string;
}

/** How much of the trace the export matched, by capture_diff.py's `coverage` rule (one rule, mirrored here). */
/** What the coverage leaves out, so its count reads right beside a trace's node count: `not counted: 46 shape
 * arithmetic ops (export keeps sizes symbolic), 2 no-ops`; empty when nothing is left out. */
function uncountedText(shapeOps: number, noOps: number): string {
  const parts = [
    shapeOps ? `${plural(shapeOps, 'shape arithmetic op')} (export keeps sizes symbolic)` : '',
    noOps ? `${plural(noOps, 'no-op')} export leaves out` : ''
  ].filter(Boolean);
  return parts.length ? `not counted: ${parts.join(', ')}` : '';
}

export function coverage(cmp: CaptureComparison): Coverage {
  const noOps = cmp.lines.filter(d => d.reason === 'no_op').reduce((n, d) => n + d.trace_nodes.length, 0);
  const comparable = cmp.trace_ops - noOps;
  const matched = cmp.matched.length;
  const share = comparable > 0 ? matched / comparable : 1;
  const percent = Math.floor(share * 100);
  return {
    matched,
    comparable,
    traceOps: cmp.trace_ops,
    exportOps: cmp.export_ops,
    share,
    text: `${matched} of ${comparable} trace ops matched (${percent}%)`,
    uncounted: uncountedText(cmp.trace_shape_ops, noOps)
  };
}

export interface ReasonCount {
  reason: DifferenceReason;
  words: string;
  lines: number;
  traceNodes: number;
  exportNodes: number;
  /** `shape arithmetic: 8 ops at 3 lines` */
  text: string;
}

/** Per reason that occurs, in REASON_WORDS' order: at how many lines, with how many ops of each side. */
export function reasonCounts(cmp: CaptureComparison): ReasonCount[] {
  return REASON_ORDER.map(reason => {
    const mine = cmp.lines.filter(d => d.reason === reason);
    const traceNodes = mine.reduce((n, d) => n + d.trace_nodes.length, 0);
    const exportNodes = mine.reduce((n, d) => n + d.export_nodes.length, 0);
    const lines = new Set(mine.map(d => `${d.file}:${d.line}`)).size;
    const words = REASON_WORDS[reason];
    return {
      reason,
      words,
      lines,
      traceNodes,
      exportNodes,
      text: `${words}: ${plural(traceNodes + exportNodes, 'op')} at ${plural(lines, 'line')}`
    };
  }).filter(c => c.lines > 0);
}

/** The two graphs as the panes draw them (side 0 the trace), and the same by each side's name. */
export interface CapturePictures extends PairedPictures {
  traceDot: string;
  exportDot: string;
  /** node id -> DOT name per side; a matched pair has one name (`p<trace id>`) in both pictures */
  traceName: (id: number) => string;
  exportName: (id: number) => string;
  /** DOT name -> node id per side */
  traceNames: Map<string, number>;
  exportNames: Map<string, number>;
}

/**
 * The ops of both graphs, matched pairs under one name (model/align.ts `pairedPictures`), each op classed
 * `matched` or `differs` with its reason's class (`reason-shape_arithmetic`): the panes highlight a step's ops by
 * their names, with no new layout.
 */
export function capturePictures(
  trace: TraceGraph,
  exported: TraceGraph,
  compared: TraceComparison,
  fileNames: FileNames = {}
): CapturePictures {
  const cmp = compared.comparison;
  const reasons: [Map<number, string[]>, Map<number, string[]>] = [new Map(), new Map()];
  for (const d of cmp.lines) {
    d.trace_nodes.forEach(id => reasons[0].set(id, ['differs', `reason-${d.reason}`]));
    d.export_nodes.forEach(id => reasons[1].set(id, ['differs', `reason-${d.reason}`]));
  }
  const p = pairedPictures([trace, exported], cmp.matched as [number, number][], reasons, ['t', 'e'], fileNames);
  return {
    ...p,
    traceDot: p.dots[0],
    exportDot: p.dots[1],
    traceName: p.nameOf[0],
    exportName: p.nameOf[1],
    traceNames: p.names[0],
    exportNames: p.names[1]
  };
}
