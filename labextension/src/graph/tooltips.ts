/**
 * Node tooltips that say what a node is: kind, output shapes and dtypes, folded arguments, scope and the source
 * line as the explorer names it (`cell [9], line 7`). The SVG's `<title>` already holds the DOT tooltip
 * (graph/svg.ts); for op nodes the explorer knows the notebook's cell names, which the shared DOT does not.
 * A title is rewritten when the pointer first reaches its node: the browser reads it only then, and a
 * 4,000-op picture would otherwise pay for every tooltip up front (~60 µs each).
 */

import { nodeTooltip } from '../model/dot';
import { ExplorerContext } from '../state/context';

const DONE = 'data-titled';

/** Rewrite the `<title>` of the drawn op node `g` (`id="n<id>"`) from the run on screen, once. */
export function nameNodeForPeople(g: Element, ctx: ExplorerContext): void {
  if (g.hasAttribute(DONE)) {
    return;
  }
  g.setAttribute(DONE, '');
  const graph = ctx.graph;
  const run = ctx.run;
  const m = /^n(\d+)$/.exec(g.getAttribute('id') ?? '');
  const node = m && graph ? graph.nodes[Number(m[1])] : undefined;
  const title = g.querySelector(':scope > title');
  if (node && title && run && graph) {
    title.textContent = nodeTooltip(graph, node, (file, line) => run.locationLabel(file, line)).join('\n');
  }
}

/** Name each op node of the pictures drawn in `canvas` as the pointer reaches it. */
export function installTooltips(canvas: HTMLElement, ctx: ExplorerContext): void {
  canvas.addEventListener('pointerover', e => {
    const g = (e.target as Element).closest?.('g.node');
    if (g) {
      nameNodeForPeople(g, ctx);
    }
  });
}
