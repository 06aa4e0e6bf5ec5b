/**
 * What a node's box and tooltip say (model/dot.ts draws them; render/dot.py says the same): its title, a
 * constant's value or an attribute's name, its shape, the constants and lists folded into it, and, in the
 * tooltip, its kind, outputs, scope and source line.
 */

import { NodeInfo, NodeRole, shapeText, TraceGraph, userFrame } from './graph';
import { FileNames, locationLabel } from './location';
import { formatValue, MAX_FOLDED_ITEMS, MAX_ITEM_CHARS, MAX_TOOLTIP_OUTPUTS, truncate } from './dotText';

/** A name a folded constant can show as `name=value`. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

const BRACKETS: Partial<Record<NodeRole, [string, string]>> = {
  list: ['[', ']'],
  tuple: ['(', ')']
};

/** What a folded input shows inside its consumer's label (`dim=1`, `[-1, 2]`); null for data. */
function foldedText(graph: TraceGraph, valueId: number, depth = 0): string | null {
  const p = graph.producer(valueId);
  if (!p || depth > 3) {
    return null;
  }
  if (p.role === 'constant') {
    const text = formatValue(p.attributes.value);
    const name = graph.values[valueId].name.split('.')[0];
    return depth === 0 && IDENTIFIER.test(name) ? `${name}=${text}` : text;
  }
  const brackets = BRACKETS[p.role];
  if (!brackets) {
    return null;
  }
  const items = p.inputs.map(v => foldedText(graph, v, depth + 1));
  if (items.some(i => i === null)) {
    return null;
  }
  return brackets[0] + items.join(', ') + brackets[1];
}

function foldedItems(graph: TraceGraph, node: NodeInfo): string[] {
  const items: string[] = [];
  for (const v of node.inputs) {
    const p = graph.producer(v);
    if (p && p.role !== 'op' && p.role !== 'getattr') {
      const text = foldedText(graph, v);
      if (text !== null) {
        items.push(text);
      }
    }
  }
  return items;
}

/** A node's first label line: the title its back end gave it, without its namespace (`aten::linear` -> `linear`). */
export function opTitle(node: Pick<NodeInfo, 'title'>): string {
  return node.title.split('::').pop()!;
}

export function nodeLabel(graph: TraceGraph, node: NodeInfo, fold: boolean, showShapes: boolean): string[] {
  const lines = [opTitle(node)];
  if (node.role === 'constant') {
    lines.push(formatValue(node.attributes.value));
  } else if (node.role === 'getattr') {
    lines.push(String(node.attributes.name ?? '?'));
  }
  if (showShapes && node.outputs.length) {
    lines.push(shapeText(graph.values[node.outputs[0]]));
  }
  if (fold) {
    const items = foldedItems(graph, node).map(i => truncate(i, MAX_ITEM_CHARS));
    if (items.length) {
      lines.push(items.slice(0, MAX_FOLDED_ITEMS).join(', ') + (items.length > MAX_FOLDED_ITEMS ? ', …' : ''));
    }
  }
  return lines;
}

/**
 * The tooltip's lines: kind, outputs with shapes, folded arguments, scope, and the source line as every view names
 * it (`cell [9], line 7` for a file `fileNames` names: location.ts).
 */
export function nodeTooltip(graph: TraceGraph, node: NodeInfo, fileNames: FileNames = {}): string[] {
  const lines = [node.kind];
  for (const v of node.outputs.slice(0, MAX_TOOLTIP_OUTPUTS)) {
    lines.push(`%${graph.values[v].name} : ${shapeText(graph.values[v])}`);
  }
  if (node.outputs.length > MAX_TOOLTIP_OUTPUTS) {
    lines.push(`… ${node.outputs.length - MAX_TOOLTIP_OUTPUTS} more`);
  }
  const items = foldedItems(graph, node);
  if (items.length) {
    lines.push('args: ' + items.join(', '));
  }
  if (node.scope) {
    const type = graph.scopes.get(node.scope)?.type;
    lines.push(`scope: ${node.scope}` + (type ? ` (${type})` : ''));
  }
  const f = userFrame(node.source);
  if (f) {
    lines.push(locationLabel(f.file, f.line, fileNames));
    if (f.code) {
      lines.push(f.code);
    }
  }
  return lines;
}
