/**
 * Node tooltips that say what a node is: kind, output shapes and dtypes, folded arguments, scope and the source
 * line as the explorer names it (`cell [9], line 7`). The SVG's `<title>` already holds the DOT tooltip
 * (graph/svg.ts); for op nodes the explorer knows the notebook's cell names, which the shared DOT does not.
 */

import { nodeTooltip } from '../model/dot';
import { ExplorerContext } from '../state/context';

/** Rewrite the `<title>` of every drawn op node of `svg` from the run on screen. */
export function nameNodesForPeople(svg: SVGSVGElement, ctx: ExplorerContext): void {
  const graph = ctx.graph;
  const run = ctx.run;
  if (!graph || !run) {
    return;
  }
  const place = (file: string, line: number): string => run.locationLabel(file, line);
  for (const g of Array.from(svg.querySelectorAll('g.node'))) {
    const m = /^n(\d+)$/.exec(g.getAttribute('id') ?? '');
    const node = m ? graph.nodes[Number(m[1])] : undefined;
    const title = g.querySelector(':scope > title');
    if (node && title) {
      title.textContent = nodeTooltip(graph, node, place).join('\n');
    }
  }
}
