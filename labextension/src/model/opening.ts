/**
 * Where the graph view opens: the one rule of what a first picture is centred on (pure: no DOM).
 */
import { CaseDivergence, TraceRunModel } from './run';

/**
 * The node the first picture of `method` is centred on: the current divergence (when one is stepped to), else
 * the first root divergence when the check failed, else the first node recorded at the line the capture was
 * refused at (a refused export shows its draft's graph: the refusal's line is what matters), else the first node
 * of the first warning about the trace; null when there is none (the view then opens on the inputs and the
 * top-level modules).
 */
export function openingFocus(run: TraceRunModel, method: string, current: CaseDivergence | null): number | null {
  if (current && current.method === method && current.traceNode !== null) {
    return current.traceNode;
  }
  const root = run.divergences.find(d => d.method === method && d.kind === 'root' && d.traceNode !== null);
  if (root) {
    return root.traceNode;
  }
  const refused = refusalNode(run, method);
  if (refused !== null) {
    return refused;
  }
  // a library's own warning ('other') says nothing about the trace: it is no reason to open deep inside
  const warned = run.userWarnings.find(w => w.method === method && w.category !== 'other' && w.node_ids.length);
  return warned ? warned.node_ids.reduce((a, b) => Math.min(a, b)) : null;
}

/**
 * The first node of `method`'s graph whose stack passes through the line the run's error names (the user's line,
 * or the library line torch refused at): null without an error with a line, or without such a node.
 */
export function refusalNode(run: TraceRunModel, method: string): number | null {
  const error = run.error;
  const graph = run.graphs.get(method);
  if (!error || !error.file || !error.line || !graph) {
    return null;
  }
  const at = graph.nodes.find(
    n => n.role === 'op' && (n.source?.stack ?? []).some(f => f.line === error.line && f.file === error.file)
  );
  return at ? at.id : null;
}

/** A point in layout units (y down). */
export interface Point {
  x: number;
  y: number;
}

/**
 * What a first picture with no focus opens on, from where the graph's inputs are drawn (in the graph's input
 * order) and how wide one readable view is (`viewWidth`, layout units): the middle of the inputs, at the
 * topmost's height, when one view holds them all; else the first input, the model's first argument. The inputs
 * of an encoder-decoder lie far apart (`src` at the encoder, `tgt` at the decoder, a picture's width away), and
 * their middle is blank canvas: the trial's nn.Transformer opened there, 4 nodes at the view's right edge.
 */
export function inputsAnchor(inputs: readonly Point[], viewWidth: number): Point | null {
  if (!inputs.length) {
    return null;
  }
  const xs = inputs.map(p => p.x);
  const left = Math.min(...xs);
  const right = Math.max(...xs);
  if (right - left > viewWidth * 0.9) {
    return { ...inputs[0] };
  }
  return { x: (left + right) / 2, y: Math.min(...inputs.map(p => p.y)) };
}
