/**
 * Folded repeated blocks look like what they are. A repeat group ("BertLayer ×12": consecutive sibling modules of
 * one class and one structure, model/groups.ts) is drawn by Graphviz like any group; here it gets a look of its
 * own, in the drawing itself so that the exported picture keeps it:
 *
 * - folded into one box (`g.node.scope-repeat`): a stack of cards behind the box (copies of its outline, offset
 *   down and right) and a `×N` badge on its top right corner;
 * - open (`g.cluster.scope-repeat`): its frame in the brand colour, dashed (graph.css), with the same badge.
 *
 * The cards and the badge are siblings of the item they decorate (never inside it: the graph's highlight rules,
 * the minimap and the keyboard read the item's own shapes), with no pointer events (a click reaches the box). The
 * colours come from graph.css (JupyterLab's theme variables), so they follow the theme.
 */

import { outlineBox } from '../model/geometry';

const SVG_NS = 'http://www.w3.org/2000/svg';
export const REPEAT_STACK = 'jp-TraceExplorer-repeatStack';
export const REPEAT_BADGE = 'jp-TraceExplorer-repeatBadge';
/** How far each card sits behind the one in front of it, and how many (user units: points). */
const CARD_OFFSET = 3.5;
const CARDS = 2;
/** The badge's text size (points) and a monospace character's advance in ems. */
const BADGE_FONT = 8;
const CHAR_EM = 0.61;

function svgEl(tag: string, attrs: Record<string, string | number>): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    el.setAttribute(k, String(v));
  }
  return el;
}

/** Decorate one drawn repeat item (a folded box or an open group's frame) that stands for `count` blocks. */
export function decorateRepeat(item: Element, count: number): void {
  const shape = item.querySelector('path, polygon');
  const parent = item.parentNode;
  const box = outlineBox(shape?.getAttribute(shape.localName === 'path' ? 'd' : 'points') ?? null);
  if (!shape || !parent || !box) {
    return;
  }
  if (item.classList.contains('node')) {
    const stack = svgEl('g', { class: REPEAT_STACK, 'aria-hidden': 'true' });
    for (let i = CARDS; i >= 1; i--) {
      const card = shape.cloneNode(false) as SVGElement;
      card.removeAttribute('id');
      card.setAttribute('transform', `translate(${i * CARD_OFFSET} ${i * CARD_OFFSET})`);
      stack.appendChild(card);
    }
    parent.insertBefore(stack, item);
  }
  const text = `×${count}`;
  const height = BADGE_FONT * 1.5;
  const width = text.length * BADGE_FONT * CHAR_EM + BADGE_FONT;
  // on the top right corner, straddling the border
  const x = box.x + box.w - width + BADGE_FONT * 0.5;
  const y = box.y - height / 2;
  const badge = svgEl('g', { class: REPEAT_BADGE, 'aria-hidden': 'true', 'data-backdrop': '' });
  badge.appendChild(svgEl('rect', { x, y, width, height, rx: height / 2 }));
  const label = svgEl('text', {
    x: x + width / 2,
    y: y + height * 0.72,
    'text-anchor': 'middle',
    'font-size': BADGE_FONT
  });
  label.textContent = text;
  badge.appendChild(label);
  parent.insertBefore(badge, item.nextSibling);
}

/** Decorate every repeat item of a picture; `counts` maps a drawn item's id to how many blocks it stands for. */
export function decorateRepeats(svg: SVGSVGElement, counts: Map<string, number>): void {
  for (const item of Array.from(svg.querySelectorAll('g.node.scope-repeat, g.cluster.scope-repeat'))) {
    const count = counts.get(item.id);
    if (count) {
      decorateRepeat(item, count);
    }
  }
}
