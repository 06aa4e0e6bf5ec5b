/**
 * Module group labels that stay readable wherever the view is. Graphviz writes a group's label once, at the top
 * left of its frame; seen from the group's right part (a jump to a node far right) or from below its top, that
 * place is off screen and the frame around the view cannot be told from any other. So, as the view moves:
 *
 * - a label whose row is in view slides right along its frame's top band (which Graphviz keeps clear for it) to
 *   start just inside the view's left edge, never past its frame's right edge (`transform`, `data-slid`);
 * - a group whose label row is above the view (or under the pinned rows) while its frame goes on through it has
 *   its label pinned to the view's top, on a backdrop of the frame's colour, one row per nesting level (a sticky
 *   header; at most MAX_PINNED_ROWS, the innermost), in a layer drawn over the graph
 *   (`g.jp-TraceExplorer-pinnedLabels`); its own place is left empty (`visibility`).
 *
 * TensorBoard and Model Explorer draw group names at one fixed place in the group; a Graphviz picture of a traced
 * model has groups much wider and taller than the view, hence the slide and the pin. The picture export puts the
 * labels back where Graphviz placed them for the whole graph. Positions come from Graphviz's own attributes (no
 * page layout is forced), so following an animated pan costs a few attribute writes per frame.
 */

import { Box, freeStart, outlineBox, stickyLabelLeft, translation } from '../model/geometry';
import { Viewport, ViewBox } from './viewport';

const SVG_NS = 'http://www.w3.org/2000/svg';
/** Screen pixels kept between a label and the view's (or its frame's) edge. */
const PAD_PX = 6;
/** A monospace character's advance, in ems (the labels are drawn in the code font). */
const CHAR_EM = 0.61;
/** A pinned row's height, in ems of the label's font. */
const ROW_EM = 1.5;
/** The most pinned rows: deeper nesting keeps its innermost groups. */
const MAX_PINNED_ROWS = 4;
/** The class of the layer the pinned labels are drawn in (over the graph; the export drops it for the whole). */
export const PINNED_LAYER = 'jp-TraceExplorer-pinnedLabels';

interface GroupLabel {
  text: SVGTextElement;
  /** the frame, in the picture's user units */
  frame: Box;
  /** where Graphviz put the label's left end and baseline, its width and font size (user units) */
  home: number;
  baseline: number;
  width: number;
  size: number;
  /** the smallest group whose frame holds this one's */
  parent: GroupLabel | null;
  dx: number;
  /** the label's copy in the pinned layer, made when first pinned */
  pinned: { g: SVGGElement; chip: SVGRectElement; text: SVGTextElement } | null;
}

function svgEl<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    el.setAttribute(k, v);
  }
  return el;
}

/** An ellipse's box from its own attributes (no layout forced): a graph input's or output's shape. */
function ellipseBox(el: Element): Box | null {
  const [cx, cy, rx, ry] = ['cx', 'cy', 'rx', 'ry'].map(a => Number(el.getAttribute(a)));
  return [cx, cy, rx, ry].every(Number.isFinite) ? { x: cx - rx, y: cy - ry, w: 2 * rx, h: 2 * ry } : null;
}

export class GroupLabels {
  private picture: SVGSVGElement | null = null;
  private labels: GroupLabel[] = [];
  /** the drawn nodes' boxes (user units): a pinned label moves along its row off the nodes under it */
  private nodes: Box[] = [];
  private layer: SVGGElement | null = null;

  constructor(private readonly viewport: Viewport) {
    viewport.onViewChange(view => this.follow(view));
  }

  private read(svg: SVGSVGElement): void {
    this.picture = svg;
    this.labels = [];
    this.layer = null;
    const [tx, ty] = translation(svg.querySelector('g.graph')?.getAttribute('transform') ?? null);
    for (const g of Array.from(svg.querySelectorAll('g.cluster'))) {
      const shape = g.querySelector('path, polygon');
      const box = outlineBox(shape?.getAttribute(shape.localName === 'path' ? 'd' : 'points') ?? null);
      const text = g.querySelector<SVGTextElement>('text');
      if (!box || !text || !text.textContent) {
        continue;
      }
      const size = Number(text.getAttribute('font-size')) || 9;
      const width = text.textContent.length * size * CHAR_EM;
      const x = Number(text.getAttribute('x')) + tx;
      const anchor = text.getAttribute('text-anchor');
      this.labels.push({
        text,
        frame: { ...box, x: box.x + tx, y: box.y + ty },
        home: anchor === 'middle' ? x - width / 2 : anchor === 'end' ? x - width : x,
        baseline: Number(text.getAttribute('y')) + ty,
        width,
        size,
        parent: null,
        dx: 0,
        pinned: null
      });
    }
    this.nodes = [];
    for (const g of Array.from(svg.querySelectorAll('g.node'))) {
      const shape = g.querySelector('polygon, path, ellipse');
      const box = !shape
        ? null
        : shape.localName === 'ellipse'
          ? ellipseBox(shape)
          : outlineBox(shape.getAttribute(shape.localName === 'path' ? 'd' : 'points'));
      if (box) {
        this.nodes.push({ ...box, x: box.x + tx, y: box.y + ty });
      }
    }
    // nesting from the frames (Graphviz draws clusters as siblings): the smallest frame around each one
    const byArea = [...this.labels].sort((a, b) => a.frame.w * a.frame.h - b.frame.w * b.frame.h);
    for (const [i, label] of byArea.entries()) {
      const f = label.frame;
      label.parent =
        byArea
          .slice(i + 1)
          .find(
            o =>
              o.frame.x <= f.x &&
              o.frame.y <= f.y &&
              o.frame.x + o.frame.w >= f.x + f.w &&
              o.frame.y + o.frame.h >= f.y + f.h
          ) ?? null;
    }
  }

  private follow(view: ViewBox): void {
    const svg = this.viewport.svg;
    if (!svg) {
      return;
    }
    if (svg !== this.picture) {
      this.read(svg);
    }
    const unit = view.w / Math.max(1, this.viewport.element.clientWidth); // user units per screen pixel
    const pad = PAD_PX * unit;
    const { pinned, deepest } = this.pinnedLabels(view, pad);
    this.slideLabels(view, pinned, pad);
    this.drawPinned(svg, view, pinned, deepest, pad);
  }

  /** The labels pinned at the top of the view, each with its row (its pinned ancestors), and the deepest row. */
  private pinnedLabels(view: ViewBox, pad: number): { pinned: Map<GroupLabel, number>; deepest: number } {
    // groups the view shows enough of to hold their label, whose frame goes on well into the view
    const candidates = this.labels.filter(label => {
      const f = label.frame;
      const shown = Math.min(f.x + f.w, view.x + view.w) - Math.max(f.x, view.x);
      return shown > label.width + 2 * pad && f.y + f.h > view.y + 3 * label.size * ROW_EM && f.y < view.y + view.h;
    });
    // pinned: the label's row is above the view, or under the pinned rows (which would hide it)
    const pinned = new Map<GroupLabel, number>();
    let deepest = 0;
    for (let band = view.y, pass = 0; pass < 8; pass++) {
      const before = pinned.size;
      for (const label of candidates) {
        if (label.baseline - label.size < band) {
          pinned.set(label, 0);
        }
      }
      // one row per pinned ancestor
      deepest = 0;
      let row = 0;
      for (const label of pinned.keys()) {
        let depth = 0;
        for (let p = label.parent; p; p = p.parent) {
          depth += pinned.has(p) ? 1 : 0;
        }
        pinned.set(label, depth);
        deepest = Math.max(deepest, depth);
        row = Math.max(row, label.size * ROW_EM);
      }
      band = view.y + (Math.min(deepest, MAX_PINNED_ROWS - 1) + 1) * row;
      if (pinned.size === before) {
        break;
      }
    }
    return { pinned, deepest };
  }

  /** Each label in its own place, slid along its row into the view; hidden there while it is pinned. */
  private slideLabels(view: ViewBox, pinned: Map<GroupLabel, number>, pad: number): void {
    for (const label of this.labels) {
      const f = label.frame;
      const rowTop = label.baseline - label.size;
      const rowInView = !pinned.has(label) && rowTop >= view.y && label.baseline <= view.y + view.h;
      const dx = rowInView ? stickyLabelLeft(label.home, label.width, f.x + f.w, view.x, pad) - label.home : 0;
      if (Math.abs(dx - label.dx) >= 0.01) {
        label.dx = dx;
        if (dx > 0) {
          label.text.setAttribute('transform', `translate(${dx.toFixed(2)} 0)`);
          label.text.setAttribute('data-slid', '');
        } else {
          label.text.removeAttribute('transform');
          label.text.removeAttribute('data-slid');
        }
      }
      // a pinned label is drawn at the top; its own place (above the view, or under the pinned rows) stays empty
      if (pinned.has(label)) {
        label.text.setAttribute('visibility', 'hidden');
      } else {
        label.text.removeAttribute('visibility');
      }
    }
  }

  /** The pinned labels' copies at the top of the view, a row per depth; deeper nesting keeps the innermost rows. */
  private drawPinned(
    svg: SVGSVGElement,
    view: ViewBox,
    pinned: Map<GroupLabel, number>,
    deepest: number,
    pad: number
  ): void {
    const skip = Math.max(0, deepest - MAX_PINNED_ROWS + 1);
    for (const label of this.labels) {
      const depth = pinned.get(label);
      if (depth === undefined || depth < skip) {
        label.pinned?.g.setAttribute('display', 'none');
        continue;
      }
      const row = label.size * ROW_EM;
      const f = label.frame;
      const top = view.y + (depth - skip) * row;
      // off the nodes its row would cover (a pinned label drew over a node in T5), along its frame's width
      const x = freeStart(
        stickyLabelLeft(f.x + pad, label.width, f.x + f.w, view.x, pad),
        label.width,
        f.x + f.w - pad - label.width,
        this.nodes.filter(n => n.y < top + row && n.y + n.h > top),
        pad
      );
      const p = this.pinnedOf(svg, label);
      p.g.removeAttribute('display');
      p.chip.setAttribute('x', (x - pad / 2).toFixed(2));
      p.chip.setAttribute('y', top.toFixed(2));
      p.chip.setAttribute('width', (label.width + pad).toFixed(2));
      p.chip.setAttribute('height', row.toFixed(2));
      p.text.setAttribute('x', x.toFixed(2));
      p.text.setAttribute('y', (top + row * 0.72).toFixed(2));
    }
  }

  /** The label's copy in the pinned layer (the layer and the copy are made on first use). */
  private pinnedOf(svg: SVGSVGElement, label: GroupLabel): NonNullable<GroupLabel['pinned']> {
    if (!this.layer) {
      this.layer = svgEl('g', { class: PINNED_LAYER, 'aria-hidden': 'true' });
      svg.appendChild(this.layer);
    }
    if (!label.pinned) {
      const g = svgEl('g', { class: 'jp-TraceExplorer-pinnedLabel', 'data-backdrop': '' });
      const chip = svgEl('rect', { rx: '2' });
      const text = svgEl('text', { 'font-size': String(label.size), 'text-anchor': 'start' });
      text.textContent = label.text.textContent;
      g.append(chip, text);
      this.layer.appendChild(g);
      label.pinned = { g, chip, text };
    }
    return label.pinned;
  }
}
