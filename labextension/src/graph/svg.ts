/**
 * Turning Graphviz output into DOM safely.
 *
 * The MIME renderer is declared `safe: true` (it renders untrusted notebooks), so nothing from the run JSON
 * may become markup or a link: labels are escaped before Graphviz sees them (model/dot.ts), and the SVG is
 * parsed as XML, stripped of scripts, links and event handlers, and imported as nodes (never assigned as
 * `innerHTML`).
 */

import { translation } from '../model/geometry';

const SVG_NS = 'http://www.w3.org/2000/svg';
const XLINK_NS = 'http://www.w3.org/1999/xlink';
const DROP_ELEMENTS = new Set(['script', 'foreignobject', 'iframe', 'object', 'embed', 'use', 'image', 'style']);

/**
 * Graphviz titles each node, edge and cluster with its DOT name (`n4`, `n3->n4`, `cluster_52`) and puts the
 * DOT `tooltip` on a link around the shapes, which `sanitize` unwraps. The browser shows `<title>` on hover:
 * keep the DOT name as `data-dot` (the keyboard and minimap read it) and make the title the tooltip's text.
 */
function humanTitles(root: Element): void {
  for (const title of Array.from(root.querySelectorAll('g.node > title, g.edge > title, g.cluster > title'))) {
    const holder = title.parentElement!;
    holder.setAttribute('data-dot', title.textContent ?? '');
    const link = holder.querySelector('a');
    const tip = link?.getAttributeNS(XLINK_NS, 'title') || link?.getAttribute('title');
    if (tip) {
      title.textContent = tip;
    }
  }
}

function sanitize(root: Element): void {
  humanTitles(root);
  const all = [root, ...Array.from(root.querySelectorAll('*'))];
  for (const el of all) {
    const name = el.localName.toLowerCase();
    if (DROP_ELEMENTS.has(name) && el !== root) {
      el.remove();
      continue;
    }
    for (const attr of Array.from(el.attributes)) {
      const n = attr.name.toLowerCase();
      if (n.startsWith('on') || n === 'href' || n.endsWith(':href') || n === 'target' || n === 'style') {
        el.removeAttribute(attr.name);
      }
    }
    if (name === 'a' && el.parentNode !== null) {
      // Graphviz wraps nodes with a URL in <a>: keep the content, drop the link
      while (el.firstChild !== null) {
        el.parentNode.insertBefore(el.firstChild, el);
      }
      el.remove();
    }
  }
}

/** Parse Graphviz's SVG text into an `<svg>` element of `doc`, sanitized; throws on malformed input. */
export function svgElement(svgText: string, doc: Document = document): SVGSVGElement {
  const parsed = new DOMParser().parseFromString(svgText, 'image/svg+xml');
  const root = parsed.documentElement;
  if (root.localName !== 'svg' || root.namespaceURI !== SVG_NS || parsed.getElementsByTagName('parsererror').length) {
    throw new Error('Graphviz did not return an SVG document');
  }
  sanitize(root);
  return doc.importNode(root, true) as unknown as SVGSVGElement;
}

/**
 * Put a laid-out picture into `container` as a canvas picture: sized by its container (pan and zoom move its
 * viewBox), its full extent returned in user units.
 */
export function placePicture(
  container: HTMLElement,
  svg: SVGSVGElement
): { x: number; y: number; w: number; h: number } {
  svg.classList.add('jp-TraceExplorer-svg');
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  container.replaceChildren(svg);
  const vb = svg.viewBox.baseVal;
  return { x: vb.x, y: vb.y, w: vb.width, h: vb.height };
}

/**
 * Where a drawn node or box is, in the root svg's user (viewBox) units, read from Graphviz's own attributes
 * (its first label line's position, under the graph group's translate): unlike `getBBox` it forces no layout
 * of the page, so it is cheap on a big picture. Null when the element has no text.
 */
export function textAnchor(svg: SVGSVGElement, el: Element): { x: number; y: number } | null {
  const text = el.querySelector('text');
  if (!text) {
    return null;
  }
  const x = Number(text.getAttribute('x'));
  const y = Number(text.getAttribute('y'));
  if (!Number.isFinite(x) || !Number.isFinite(y)) {
    return null;
  }
  const graph = svg.querySelector('g.graph');
  const m = /translate\(\s*([-\d.e]+)[\s,]+([-\d.e]+)\s*\)/.exec(graph?.getAttribute('transform') ?? '');
  return { x: x + (m ? Number(m[1]) : 0), y: y + (m ? Number(m[2]) : 0) };
}

/**
 * Whether a click on an open group's frame was on its label row, the band Graphviz keeps clear for the label at the
 * frame's top: a click there folds the group. The empty inside of a group takes no click: clicking there (to give
 * the graph the wheel, or just to click somewhere) used to fold a whole module and re-lay out the picture.
 */
export function onLabelRow(svg: SVGSVGElement | null, cluster: Element, e: MouseEvent): boolean {
  const toUser = svg?.getScreenCTM()?.inverse();
  // the label's lines (Graphviz wraps them in an <a> when the group has a tooltip)
  const lines = Array.from(cluster.querySelectorAll('text'));
  if (!svg || !toUser || !lines.length) {
    return false;
  }
  const { y } = new DOMPoint(e.clientX, e.clientY).matrixTransform(toUser);
  const [, ty] = translation(svg.querySelector('g.graph')?.getAttribute('transform') ?? null);
  const last = lines[lines.length - 1];
  const size = Number(last.getAttribute('font-size')) || 14;
  return y <= Number(last.getAttribute('y')) + ty + 0.5 * size; // down to just under the label's last line
}
