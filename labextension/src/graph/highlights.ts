/**
 * The highlights on a drawn picture (selection, divergences, warnings, guards, search hits): put on the element
 * that stands for each node, as itself (`selected`) or as the box or op standing for a hidden one
 * (`has-selected`), with no new layout.
 */

import { VisibleGraph } from '../model/dot';
import { domId } from '../model/dotText';
import { GroupTree } from '../model/groups';

const HIGHLIGHT_CLASSES = [
  'selected',
  'root',
  'downstream',
  'current',
  'warning',
  'hazard',
  'guard',
  'has-guard',
  'search-hit',
  'search-current',
  'has-selected',
  'has-root',
  'has-downstream',
  'has-current',
  'has-warning',
  'has-hazard',
  'has-search-hit',
  'has-search-current'
];

/** The drawn element that stands for a node: itself, its fold target, or its collapsed group's box. */
export function elementFor(
  svg: SVGSVGElement,
  visible: VisibleGraph,
  tree: GroupTree,
  nodeId: number
): SVGGraphicsElement | null {
  const name = visible.representative.get(nodeId);
  if (!name) {
    return null;
  }
  let id = name;
  if (name.startsWith('g')) {
    const box = visible.boxes.find(b => `g${tree.index(b)}` === name);
    id = box !== undefined ? `scope-${domId(box)}` : name;
  }
  return svg.querySelector(`[id="${CSS.escape(id)}"]`);
}

/** Take the highlights off `before` and put `classes` (per node id) on the picture; the elements marked now. */
export function markHighlights(
  svg: SVGSVGElement,
  visible: VisibleGraph,
  tree: GroupTree,
  classes: Map<number, Set<string>>,
  before: readonly Element[]
): Element[] {
  for (const el of before) {
    el.classList.remove(...HIGHLIGHT_CLASSES);
  }
  const marked: Element[] = [];
  for (const [id, set] of classes) {
    const el = elementFor(svg, visible, tree, id);
    if (!el) {
      continue;
    }
    const direct = visible.representative.get(id) === `n${id}`;
    el.classList.add(...[...set].map(c => (direct ? c : `has-${c}`)));
    marked.push(el);
  }
  return marked;
}
