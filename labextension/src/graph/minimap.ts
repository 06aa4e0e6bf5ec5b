/**
 * The minimap: the whole laid-out graph in a corner, with the part on screen framed. Clicking or dragging on it
 * centres the view there. It hides while the view shows the whole drawing (nothing to navigate).
 *
 * It watches the canvas rather than being told: a new picture (child list), a pan or zoom (the SVG's `viewBox`)
 * and a change of highlights (`class`) each schedule one redraw per frame. Shapes are read from the SVG's
 * attributes (model/geometry.ts, no reflow); colours are the drawn shapes' computed paint, so the map shows
 * warnings, roots and the selection in the colours the graph uses, in any theme.
 */

import { Box, contains, ellipseBox, fitInto, pairsBox, translation, unionBox } from '../model/geometry';
import { h } from '../state/dom';

/**
 * The largest the map gets (CSS px, and at most MAX_CANVAS_SHARE of the canvas's height); a very tall or wide
 * graph keeps at least MIN_SIDE_PX on its short side, so it can still be clicked.
 */
const MAX_WIDTH_PX = 180;
const MAX_HEIGHT_PX = 260;
const MAX_CANVAS_SHARE = 0.6;
const MIN_SIDE_PX = 40;
/** Highlighted nodes stay visible on the map however small the scale. */
const MIN_MARK_PX = 4;
/** Classes that only say what a node is; any other class is a highlight the map shows. */
const PLAIN_CLASS = /^(node|op-\S+|kind-\S+|nondeterministic|input|output|scope-collapsed)$/;

interface Shape {
  el: Element;
  box: Box;
  cluster: boolean;
  highlighted: boolean;
}

/** The bounding box of a node's or cluster's first drawn shape, in the graph group's coordinates. */
export function shapeBox(holder: Element): Box | null {
  const shape = holder.querySelector('path, polygon, ellipse');
  if (!shape) {
    return null;
  }
  if (shape.localName === 'ellipse') {
    const n = (a: string): number => Number(shape.getAttribute(a) ?? 0);
    return ellipseBox(n('cx'), n('cy'), n('rx'), n('ry'));
  }
  return pairsBox(shape.getAttribute(shape.localName === 'path' ? 'd' : 'points') ?? '');
}

export class Minimap {
  readonly element: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly frame: HTMLElement;
  private picture: SVGSVGElement | null = null;
  private shapes: Shape[] = [];
  private edges: [number, number, number, number][] = [];
  /** the whole drawing, in the SVG's user units */
  private world: Box | null = null;
  private offset: [number, number] = [0, 0];
  private map = { scale: 1, dx: 0, dy: 0 };
  private size: [number, number] = [0, 0];
  private pending = 0;
  private redrawShapes = false;

  /**
   * @param host the canvas element the pictures are drawn in
   * @param centerAt pan the view so this point (SVG user units) is in its middle
   */
  constructor(
    private readonly host: HTMLElement,
    private readonly centerAt: (x: number, y: number) => void
  ) {
    this.canvas = h('canvas', { class: 'jp-TraceExplorer-minimapCanvas' });
    this.frame = h('div', { class: 'jp-TraceExplorer-minimapFrame' });
    this.element = h(
      'div',
      {
        class: 'jp-TraceExplorer-minimap',
        hidden: true,
        title: 'overview: click or drag to move the view',
        'aria-hidden': 'true' // the keyboard moves the view through the graph itself
      },
      this.canvas,
      this.frame
    );
    new MutationObserver(records => this.onMutations(records)).observe(host, {
      childList: true,
      subtree: true,
      attributes: true,
      attributeFilter: ['class', 'viewBox']
    });
    // a theme switch changes every colour the map copied
    new MutationObserver(() => this.schedule(true)).observe(document.body, {
      attributes: true,
      attributeFilter: ['data-jp-theme-name', 'data-jp-theme-light']
    });
    this.installPointer();
  }

  private onMutations(records: MutationRecord[]): void {
    let picture = false;
    let paint = false;
    for (const r of records) {
      if (r.type === 'childList' && r.target === this.host) {
        picture = true;
      } else if (r.type === 'attributes' && r.attributeName === 'class') {
        paint = true;
      }
    }
    if (picture) {
      this.picture = this.host.querySelector('svg');
      this.world = null; // read again when drawn
    }
    this.schedule(picture || paint);
  }

  /** One redraw per frame; `shapes`: the picture or its colours changed, not only the view. */
  private schedule(shapes: boolean): void {
    this.redrawShapes = this.redrawShapes || shapes;
    if (!this.pending) {
      this.pending = requestAnimationFrame(() => {
        this.pending = 0;
        const all = this.redrawShapes;
        this.redrawShapes = false;
        this.update(all);
      });
    }
  }

  private read(svg: SVGSVGElement): void {
    const graph = svg.querySelector('g.graph');
    this.offset = translation(graph?.getAttribute('transform') ?? null);
    const [tx, ty] = this.offset;
    this.shapes = [];
    for (const el of Array.from(svg.querySelectorAll('g.node, g.cluster'))) {
      const box = shapeBox(el);
      if (box) {
        this.shapes.push({
          el,
          box: { ...box, x: box.x + tx, y: box.y + ty },
          cluster: el.classList.contains('cluster'),
          highlighted: false
        });
      }
    }
    // clusters first, so nodes are drawn over them
    this.shapes.sort((a, b) => Number(b.cluster) - Number(a.cluster));
    this.edges = [];
    for (const path of Array.from(svg.querySelectorAll('g.edge path'))) {
      const nums = (path.getAttribute('d') ?? '').match(/-?[\d.]+(?:e[-+]?\d+)?/gi)?.map(Number) ?? [];
      if (nums.length >= 4) {
        const n = nums.length - (nums.length % 2);
        this.edges.push([nums[0] + tx, nums[1] + ty, nums[n - 2] + tx, nums[n - 1] + ty]);
      }
    }
    this.world = unionBox(this.shapes.map(s => s.box));
  }

  private update(shapes: boolean): void {
    const svg = this.picture;
    if (!svg || !svg.isConnected) {
      this.element.hidden = true;
      return;
    }
    if (!this.world) {
      this.read(svg);
      shapes = true;
    }
    const world = this.world;
    const vb = svg.viewBox.baseVal;
    const view: Box = { x: vb.x, y: vb.y, w: vb.width, h: vb.height };
    if (!world || contains(view, world)) {
      this.element.hidden = true;
      return;
    }
    const wasHidden = this.element.hidden;
    this.element.hidden = false;
    if (shapes || wasHidden) {
      this.draw(world);
    }
    // the frame: the view's rectangle, clipped to the map
    const { scale, dx, dy } = this.map;
    const [mw, mh] = this.size;
    const x0 = Math.max(0, (view.x - world.x) * scale + dx);
    const y0 = Math.max(0, (view.y - world.y) * scale + dy);
    const x1 = Math.min(mw, (view.x + view.w - world.x) * scale + dx);
    const y1 = Math.min(mh, (view.y + view.h - world.y) * scale + dy);
    Object.assign(this.frame.style, {
      left: `${x0}px`,
      top: `${y0}px`,
      width: `${Math.max(2, x1 - x0)}px`,
      height: `${Math.max(2, y1 - y0)}px`
    });
  }

  private draw(world: Box): void {
    const maxHeight = Math.max(MIN_SIDE_PX, Math.min(MAX_HEIGHT_PX, this.host.clientHeight * MAX_CANVAS_SHARE));
    const scale0 = Math.min(MAX_WIDTH_PX / world.w, maxHeight / world.h);
    const mw = Math.max(MIN_SIDE_PX, Math.round(world.w * scale0));
    const mh = Math.max(MIN_SIDE_PX, Math.round(world.h * scale0));
    this.size = [mw, mh];
    this.map = fitInto(world, mw, mh);
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(mw * ratio);
    this.canvas.height = Math.round(mh * ratio);
    this.canvas.style.width = `${mw}px`;
    this.canvas.style.height = `${mh}px`;
    const g = this.canvas.getContext('2d');
    if (!g) {
      return;
    }
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, mw, mh);
    const { scale, dx, dy } = this.map;
    const px = (x: number): number => (x - world.x) * scale + dx;
    const py = (y: number): number => (y - world.y) * scale + dy;
    const paint = new Map<string, { fill: string; stroke: string }>();
    const paintOf = (el: Element): { fill: string; stroke: string } => {
      const key = el.getAttribute('class') ?? '';
      let p = paint.get(key);
      if (!p) {
        const shape = el.querySelector('path, polygon, ellipse');
        const style = shape ? getComputedStyle(shape) : null;
        p = { fill: style?.fill ?? 'gray', stroke: style?.stroke ?? 'gray' };
        paint.set(key, p);
      }
      return p;
    };
    const marked: Shape[] = [];
    for (const s of this.shapes) {
      s.highlighted = !s.cluster && [...s.el.classList].some(c => !PLAIN_CLASS.test(c));
      if (s.highlighted) {
        marked.push(s);
        continue;
      }
      const p = paintOf(s.el);
      const x = px(s.box.x);
      const y = py(s.box.y);
      const w = Math.max(1, s.box.w * scale);
      const hh = Math.max(1, s.box.h * scale);
      if (s.cluster) {
        g.strokeStyle = p.stroke;
        g.lineWidth = 1;
        g.strokeRect(x, y, w, hh);
      } else {
        g.fillStyle = p.fill;
        g.fillRect(x, y, w, hh);
      }
    }
    const edgeColour = getComputedStyle(this.element).getPropertyValue('--jp-border-color1').trim() || 'gray';
    g.strokeStyle = edgeColour;
    g.globalAlpha = 0.5;
    g.lineWidth = 0.5;
    g.beginPath();
    for (const [x0, y0, x1, y1] of this.edges) {
      g.moveTo(px(x0), py(y0));
      g.lineTo(px(x1), py(y1));
    }
    g.stroke();
    g.globalAlpha = 1;
    // highlights last, at least MIN_MARK_PX, filled and outlined as the graph draws them
    for (const s of marked) {
      const p = paintOf(s.el);
      const w = Math.max(MIN_MARK_PX, s.box.w * scale);
      const hh = Math.max(MIN_MARK_PX, s.box.h * scale);
      const x = px(s.box.x + s.box.w / 2) - w / 2;
      const y = py(s.box.y + s.box.h / 2) - hh / 2;
      g.fillStyle = p.fill;
      g.fillRect(x, y, w, hh);
      g.strokeStyle = p.stroke;
      g.lineWidth = 1.5;
      g.strokeRect(x, y, w, hh);
    }
  }

  private installPointer(): void {
    const go = (e: PointerEvent): void => {
      const world = this.world;
      if (!world) {
        return;
      }
      const rect = this.canvas.getBoundingClientRect();
      const { scale, dx, dy } = this.map;
      const x = (e.clientX - rect.left - dx) / scale + world.x;
      const y = (e.clientY - rect.top - dy) / scale + world.y;
      this.centerAt(x, y);
    };
    let dragging = false;
    this.element.addEventListener('pointerdown', e => {
      if (e.button !== 0) {
        return;
      }
      e.preventDefault();
      e.stopPropagation();
      dragging = true;
      this.element.setPointerCapture(e.pointerId);
      go(e);
    });
    this.element.addEventListener('pointermove', e => {
      if (dragging) {
        go(e);
      }
    });
    const end = (): void => {
      dragging = false;
    };
    this.element.addEventListener('pointerup', end);
    this.element.addEventListener('pointercancel', end);
  }
}
