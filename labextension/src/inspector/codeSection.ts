/** The Inspector's code section: the traced method's `.graph` IR text and its `.code` (Inspector.ts). */

import { NodeInfo, TraceGraph } from '../model/graph';
import { append, h } from '../state/dom';

/**
 * The method's `.graph` text (a window around the node, folded until asked for when no node is picked) and its
 * `.code`; a line of another node selects it.
 */
export function codeSection(graph: TraceGraph, node: NodeInfo | null, select: (id: number) => void): HTMLElement {
  const ir = h('details', { open: node !== null }, h('summary', {}, `.graph (inlined, ${graph.size} nodes)`));
  // the IR text of a 12k-node graph takes tens of ms to build: only when it is shown
  const fill = (): void => {
    if (ir.childElementCount === 1) {
      append(ir, ...irLines(graph, node, select));
    }
  };
  if (node !== null) {
    fill();
  } else {
    ir.addEventListener('toggle', fill);
  }
  return h(
    'div',
    { class: 'jp-TraceExplorer-section' },
    ir,
    h(
      'details',
      {},
      h('summary', {}, `.code of ${graph.method}`),
      h('pre', { class: 'jp-TraceExplorer-code' }, graph.code || '(no code)')
    )
  );
}

/** A window of the IR text around the node (a 12k-node graph has 12k lines); lines of other nodes select them. */
function irLines(graph: TraceGraph, node: NodeInfo | null, select: (id: number) => void): HTMLElement[] {
  const { lines, lineOfNode, nodeOfLine } = graph.text();
  const current = node ? lineOfNode.get(node.id) : undefined;
  const from = current === undefined ? 0 : Math.max(0, current - 12);
  const to = current === undefined ? Math.min(lines.length, 40) : Math.min(lines.length, current + 13);
  const pre = h('pre', { class: 'jp-TraceExplorer-code jp-TraceExplorer-ir' });
  for (let i = from; i < to; i++) {
    const line = h(
      'div',
      { class: i === current ? 'jp-TraceExplorer-irLine jp-mod-current' : 'jp-TraceExplorer-irLine' },
      lines[i]
    );
    const nodeId = nodeOfLine.get(i);
    if (nodeId !== undefined && nodeId !== node?.id) {
      line.addEventListener('click', () => select(nodeId));
      line.classList.add('jp-mod-clickable');
    }
    pre.appendChild(line);
  }
  const more =
    to - from < lines.length
      ? h('p', { class: 'jp-TraceExplorer-muted' }, `lines ${from + 1}–${to} of ${lines.length}`)
      : null;
  return more ? [pre, more] : [pre];
}
