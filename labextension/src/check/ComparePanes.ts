/**
 * Compare at full size: two graphs around one divergence in two panes over the whole graph area (Model Explorer's
 * split view), each labelled by what it is ("trace" / "check", "run 1" / "run 2"). The panes move together: one
 * view (scale and offset from the divergent node) is applied to both, so dragging or zooming either keeps the two
 * divergent nodes at the same place on screen. Esc or "close" goes back to the graph.
 */

import { layoutDot } from '../graph/layout';
import { placePicture, svgElement } from '../graph/svg';
import { button, h } from '../state/dom';

export interface PaneSpec {
  /** "trace", "check", "run 1", "run 2" */
  label: string;
  dot: string;
  /** clicks on a node of this pane: its DOT name */
  onNode?: (name: string) => void;
}

interface Pane {
  element: HTMLElement;
  svg: SVGSVGElement | null;
  /** the divergent node's centre, in the picture's units (the picture's centre when it has none) */
  anchor: { x: number; y: number };
  /** whether the anchor is the divergent node itself (else it is placed from the other pane's) */
  anchored: boolean;
  full: { x: number; y: number; w: number; h: number };
}

/** Layout units per screen pixel above which node labels (9 pt) are too small to read: fit stops there. */
const MAX_READABLE_SCALE = 1.4;

/**
 * The centre of a drawn element in its picture's units (its `<svg>`'s viewBox): the box it draws, through the
 * transforms of the groups around it (Graphviz translates its whole drawing).
 */
function centre(el: SVGGraphicsElement): { x: number; y: number } | null {
  try {
    const box = el.getBBox();
    let p = new DOMPoint(box.x + box.width / 2, box.y + box.height / 2);
    for (let g: Element | null = el; g && g.localName !== 'svg'; g = g.parentElement) {
      const t = (g as SVGGraphicsElement).transform?.baseVal.consolidate();
      if (t) {
        p = p.matrixTransform(t.matrix);
      }
    }
    return { x: p.x, y: p.y };
  } catch {
    return null; // not rendered
  }
}

/** Zoom steps of the wheel and the buttons. */
const ZOOM_STEP = 1.2;

export class ComparePanes {
  readonly element: HTMLElement;
  /** Settles when both pictures are on screen. */
  readonly rendered: Promise<void>;
  private readonly panes: Pane[] = [];
  /** layout units per screen pixel, shared by both panes */
  private scale = 1;
  /** where the view's centre is, from each pane's anchor, in layout units */
  private offset = { x: 0, y: 0 };
  private readonly onKey: (e: KeyboardEvent) => void;
  private readonly resize: ResizeObserver;

  constructor(
    title: string,
    specs: [PaneSpec, PaneSpec],
    private readonly onClose: () => void
  ) {
    const body = h('div', { class: 'jp-TraceExplorer-compareBody' });
    this.element = h(
      'div',
      {
        class: 'jp-TraceExplorer-compareFull',
        role: 'dialog',
        'aria-label': `compare ${specs[0].label} and ${specs[1].label}`,
        tabindex: -1
      },
      h(
        'div',
        { class: 'jp-TraceExplorer-compareBar' },
        h('span', { class: 'jp-TraceExplorer-compareTitle' }, title),
        button('−', () => this.zoom(ZOOM_STEP), { title: 'zoom both out', 'aria-label': 'zoom out' }),
        button('+', () => this.zoom(1 / ZOOM_STEP), { title: 'zoom both in', 'aria-label': 'zoom in' }),
        button('fit', () => this.fit(), { title: 'fit both pictures' }),
        button('close', () => this.close(), { title: 'back to the graph (Esc)', 'data-action': 'close-compare' })
      ),
      body
    );
    for (const spec of specs) {
      const canvas = h('div', { class: 'jp-TraceExplorer-compareCanvas' });
      const element = h(
        'div',
        { class: 'jp-TraceExplorer-comparePane', 'data-side': spec.label },
        h('div', { class: 'jp-TraceExplorer-paneLabel' }, spec.label),
        canvas
      );
      body.appendChild(element);
      this.panes.push({
        element: canvas,
        svg: null,
        anchor: { x: 0, y: 0 },
        anchored: false,
        full: { x: 0, y: 0, w: 1, h: 1 }
      });
      if (spec.onNode) {
        const onNode = spec.onNode;
        canvas.addEventListener('click', e => {
          const id = (e.target as Element).closest('g.node')?.getAttribute('id');
          if (id && !this.dragged) {
            onNode(id);
          }
        });
      }
    }
    this.installPointer();
    this.onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        this.close();
      }
    };
    this.element.addEventListener('keydown', this.onKey);
    this.resize = new ResizeObserver(() => this.apply());
    this.rendered = Promise.all(specs.map((s, i) => this.draw(i, s.dot))).then(() => {
      this.alignAnchors();
      this.resize.observe(this.element);
      this.fit();
    });
  }

  close(): void {
    this.resize.disconnect();
    this.element.remove();
    this.onClose();
  }

  private async draw(index: number, dot: string): Promise<void> {
    const pane = this.panes[index];
    try {
      const svg = svgElement(await layoutDot(dot));
      const vb = (pane.full = placePicture(pane.element, svg));
      pane.svg = svg;
      const current = svg.querySelector<SVGGraphicsElement>('g.node.current');
      pane.anchor = (current && centre(current)) ?? { x: vb.x + vb.w / 2, y: vb.y + vb.h / 2 };
      pane.anchored = current !== null;
    } catch (err) {
      pane.element.textContent = `layout failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  /**
   * A side where the divergent node has no counterpart (an op only in the other graph) is anchored where that
   * node would be: at the matched node nearest the other side's anchor (a matched pair has one DOT name in both
   * pictures), moved by the same amount.
   */
  private alignAnchors(): void {
    const [a, b] = this.panes;
    for (const [lost, found] of [
      [a, b],
      [b, a]
    ]) {
      if (lost.anchored || !found.anchored || !lost.svg || !found.svg) {
        continue;
      }
      let best: { d: number; dx: number; dy: number; id: string } | null = null;
      for (const g of found.svg.querySelectorAll<SVGGraphicsElement>('g.node.matched')) {
        const c = centre(g);
        if (!c) {
          continue;
        }
        const dx = found.anchor.x - c.x;
        const dy = found.anchor.y - c.y;
        const d = dx * dx + dy * dy;
        if (!best || d < best.d) {
          best = { d, dx, dy, id: g.id };
        }
      }
      const twin = best ? lost.svg.querySelector<SVGGraphicsElement>(`g.node[id="${CSS.escape(best.id)}"]`) : null;
      const c = twin && centre(twin);
      if (best && c) {
        lost.anchor = { x: c.x + best.dx, y: c.y + best.dy };
      }
    }
  }

  /**
   * Each divergent node in the middle of its pane, at the scale that shows both pictures whole around it, but
   * never so small that the labels cannot be read (pan and zoom out for the rest).
   */
  fit(): void {
    const sized = this.panes.filter(p => p.svg && p.element.clientWidth > 0 && p.element.clientHeight > 0);
    if (!sized.length) {
      return;
    }
    const needed = sized.map(p => {
      const dx = Math.max(p.anchor.x - p.full.x, p.full.x + p.full.w - p.anchor.x);
      const dy = Math.max(p.anchor.y - p.full.y, p.full.y + p.full.h - p.anchor.y);
      return Math.max((2 * dx) / p.element.clientWidth, (2 * dy) / p.element.clientHeight) * 1.05;
    });
    this.scale = Math.min(Math.max(...needed), MAX_READABLE_SCALE);
    this.offset = { x: 0, y: 0 };
    this.apply();
  }

  private zoom(factor: number): void {
    this.scale *= factor;
    this.apply();
  }

  /** Put the shared view on both panes. */
  private apply(): void {
    for (const p of this.panes) {
      const width = p.element.clientWidth;
      const height = p.element.clientHeight;
      if (!p.svg || !width || !height) {
        continue;
      }
      const w = width * this.scale;
      const hh = height * this.scale;
      const cx = p.anchor.x + this.offset.x;
      const cy = p.anchor.y + this.offset.y;
      p.svg.setAttribute('viewBox', `${cx - w / 2} ${cy - hh / 2} ${w} ${hh}`);
    }
  }

  private dragged = false;

  private installPointer(): void {
    let start: { x: number; y: number; offset: { x: number; y: number } } | null = null;
    for (const pane of this.panes) {
      const el = pane.element;
      el.addEventListener('pointerdown', e => {
        start = { x: e.clientX, y: e.clientY, offset: { ...this.offset } };
        this.dragged = false;
      });
      el.addEventListener('pointermove', e => {
        if (!start || !(e.buttons & 1)) {
          return;
        }
        const dx = e.clientX - start.x;
        const dy = e.clientY - start.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) {
          this.dragged = true;
        }
        this.offset = { x: start.offset.x - dx * this.scale, y: start.offset.y - dy * this.scale };
        this.apply();
      });
      el.addEventListener('pointerup', () => {
        start = null;
      });
      el.addEventListener(
        'wheel',
        e => {
          e.preventDefault();
          this.zoom(e.deltaY > 0 ? ZOOM_STEP : 1 / ZOOM_STEP);
        },
        { passive: false }
      );
    }
  }
}
