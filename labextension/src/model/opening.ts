/**
 * Where the graph view opens: the one rule of what a first picture is centred on (pure: no DOM).
 */
import { CaseDivergence, TraceRunModel } from './run';

/**
 * The node the first picture of `method` is centred on: the current divergence (when one is stepped to), else
 * the first root divergence when the check failed, else the first node of the first warning about the trace;
 * null when there is none (the view then opens on the inputs and the top-level modules).
 */
export function openingFocus(run: TraceRunModel, method: string, current: CaseDivergence | null): number | null {
  if (current && current.method === method && current.traceNode !== null) {
    return current.traceNode;
  }
  const root = run.divergences.find(d => d.method === method && d.kind === 'root' && d.traceNode !== null);
  if (root) {
    return root.traceNode;
  }
  // a library's own warning ('other') says nothing about the trace: it is no reason to open deep inside
  const warned = run.userWarnings.find(w => w.method === method && w.category !== 'other' && w.node_ids.length);
  return warned ? warned.node_ids.reduce((a, b) => Math.min(a, b)) : null;
}
