/**
 * Pan and zoom of the graph canvas: the part of the picture on screen is the SVG's `viewBox`.
 *
 * Drag pans, the wheel zooms at the pointer, the arrow keys pan and `+` / `-` / `0` zoom and fit. The canvas
 * element stays for the view's lifetime; each layout puts a new SVG into it (`show`), keeping the view or
 * fitting the new picture.
 */

import { clear, h } from '../state/dom';

/** A rectangle in the SVG's user units (those of its viewBox). */
interface ViewBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Screen pixels per layout unit below which labels are unreadable. */
const MIN_READABLE_SCALE = 0.8;
/** How far the pointer moves before a press becomes a drag (and the click that ends it is no click). */
const DRAG_THRESHOLD_PX = 4;

export class Viewport {
  /** The canvas the picture is drawn in (focusable: the keys work once it has focus). */
  readonly element: HTMLElement;
  private picture: SVGSVGElement | null = null;
  private viewBox: ViewBox | null = null;
  /** The whole picture, as Graphviz laid it out. */
  private fullBox: ViewBox | null = null;
  /** A fit was asked for while the canvas had no size: fit once it gets one. */
  private needsFit = false;
  private wasDragged = false;

  constructor() {
    this.element = h('div', {
      class: 'jp-TraceExplorer-canvas',
      tabindex: 0,
      'aria-label': 'graph; drag to pan, wheel to zoom'
    });
    this.installPointer();
    new ResizeObserver(() => {
      if (this.needsFit && this.element.clientWidth > 0) {
        this.needsFit = false;
        this.fit();
      }
    }).observe(this.element);
    this.element.addEventListener('keydown', e => this.onKey(e));
  }

  /** The picture on screen, or null. */
  get svg(): SVGSVGElement | null {
    return this.picture;
  }

  /** True from a drag's first move until just after it ends: the click that ends a drag is not a click on the graph. */
  get dragged(): boolean {
    return this.wasDragged;
  }

  /** Put a freshly laid out picture on the canvas; keep the current view (same graph re-laid out) or fit it. */
  show(svg: SVGSVGElement, keepView: boolean): void {
    svg.classList.add('jp-TraceExplorer-svg');
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    clear(this.element);
    this.element.appendChild(svg);
    this.picture = svg;
    const vb = svg.viewBox.baseVal;
    this.fullBox = { x: vb.x, y: vb.y, w: vb.width, h: vb.height };
    if (!keepView || !this.viewBox) {
      this.fit();
    } else {
      this.setViewBox(this.viewBox);
    }
  }

  /** Take the picture off the canvas (no graph to show); the view is kept for the next picture. */
  clear(): void {
    clear(this.element);
    this.picture = null;
  }

  private onKey(e: KeyboardEvent): void {
    const step = (this.viewBox?.w ?? 100) * 0.1;
    const moves: Record<string, [number, number]> = {
      ArrowLeft: [-step, 0],
      ArrowRight: [step, 0],
      ArrowUp: [0, -step],
      ArrowDown: [0, step]
    };
    if (e.key in moves && this.viewBox) {
      const [dx, dy] = moves[e.key];
      this.setViewBox({ ...this.viewBox, x: this.viewBox.x + dx, y: this.viewBox.y + dy });
    } else if (e.key === '+' || e.key === '=') {
      this.zoom(0.8);
    } else if (e.key === '-') {
      this.zoom(1.25);
    } else if (e.key === '0') {
      this.fit();
    } else {
      return;
    }
    e.preventDefault();
  }

  private installPointer(): void {
    const canvas = this.element;
    let start: { x: number; y: number; box: ViewBox } | null = null;
    canvas.addEventListener('pointerdown', e => {
      if (!this.viewBox || e.button !== 0) {
        return;
      }
      start = { x: e.clientX, y: e.clientY, box: { ...this.viewBox } };
      this.wasDragged = false;
    });
    canvas.addEventListener('pointermove', e => {
      if (!start || !this.picture) {
        return;
      }
      const dx = e.clientX - start.x;
      const dy = e.clientY - start.y;
      if (!this.wasDragged && Math.hypot(dx, dy) < DRAG_THRESHOLD_PX) {
        return;
      }
      if (!this.wasDragged) {
        canvas.setPointerCapture(e.pointerId);
      }
      this.wasDragged = true;
      const scale = start.box.w / Math.max(1, canvas.clientWidth);
      this.setViewBox({ ...start.box, x: start.box.x - dx * scale, y: start.box.y - dy * scale });
    });
    const end = (): void => {
      start = null;
      // after the click that this pointerup fires, so that click still sees the drag
      setTimeout(() => (this.wasDragged = false), 0);
    };
    canvas.addEventListener('pointerup', end);
    canvas.addEventListener('pointercancel', end);
    canvas.addEventListener(
      'wheel',
      e => {
        if (!this.viewBox) {
          return;
        }
        e.preventDefault();
        const rect = canvas.getBoundingClientRect();
        const fx = (e.clientX - rect.left) / Math.max(1, rect.width);
        const fy = (e.clientY - rect.top) / Math.max(1, rect.height);
        this.zoom(e.deltaY > 0 ? 1.15 : 1 / 1.15, fx, fy);
      },
      { passive: false }
    );
  }

  private setViewBox(box: ViewBox): void {
    this.viewBox = box;
    this.picture?.setAttribute('viewBox', `${box.x} ${box.y} ${box.w} ${box.h}`);
  }

  /** Scale the view by `factor` (< 1 zooms in) around the point at fractions `fx`, `fy` of its width and height. */
  zoom(factor: number, fx = 0.5, fy = 0.5): void {
    if (!this.viewBox) {
      return;
    }
    const b = this.viewBox;
    const w = Math.max(10, b.w * factor);
    const hgt = Math.max(10, b.h * factor);
    this.setViewBox({ x: b.x + (b.w - w) * fx, y: b.y + (b.h - hgt) * fy, w, h: hgt });
  }

  /** The canvas's height / width (the viewBox keeps this aspect so zooming maps 1:1 to the screen). */
  private aspect(): number {
    const w = this.element.clientWidth;
    const hgt = this.element.clientHeight;
    return w > 0 && hgt > 0 ? hgt / w : 1;
  }

  /**
   * Show the whole graph, unless that would shrink labels below readability (a deep chain is a tall
   * column): then show its top at the smallest readable scale, and the user pans down.
   */
  fit(): void {
    if (!this.fullBox) {
      return;
    }
    const pad = 8;
    const full = {
      x: this.fullBox.x - pad,
      y: this.fullBox.y - pad,
      w: this.fullBox.w + 2 * pad,
      h: this.fullBox.h + 2 * pad
    };
    if (this.element.clientWidth === 0) {
      // not on screen yet (a hidden tab, an output not attached): show everything, fit again once sized
      this.needsFit = true;
      this.setViewBox(full);
      return;
    }
    const aspect = this.aspect();
    const px = Math.max(1, this.element.clientWidth);
    let w = Math.max(full.w, full.h / aspect);
    w = Math.min(w, px / MIN_READABLE_SCALE);
    const hgt = w * aspect;
    this.setViewBox({
      x: full.x + full.w / 2 - w / 2,
      y: full.h <= hgt ? full.y + full.h / 2 - hgt / 2 : full.y,
      w,
      h: hgt
    });
  }

  /** Zoom so the element fills the view, at most 1.5x its natural size. */
  zoomTo(el: SVGGraphicsElement): void {
    const rect = this.userRect(el);
    if (!rect) {
      return;
    }
    const aspect = this.aspect();
    const px = Math.max(1, this.element.clientWidth);
    const w = Math.max(rect.w * 1.1, (rect.h * 1.1) / aspect, px / 1.5);
    const hgt = w * aspect;
    // a group taller than the view: show its top (its label), not its middle
    const y = rect.h * 1.1 > hgt ? rect.y - rect.h * 0.05 : rect.y + rect.h / 2 - hgt / 2;
    this.setViewBox({ x: rect.x + rect.w / 2 - w / 2, y, w, h: hgt });
  }

  /** An element's bounding box in the root svg's user (viewBox) units. */
  private userRect(el: SVGGraphicsElement): ViewBox | null {
    const root = this.picture?.getScreenCTM();
    const m = el.getScreenCTM();
    if (!root || !m) {
      return null;
    }
    const b = el.getBBox();
    const inv = root.inverse();
    const p1 = new DOMPoint(b.x, b.y).matrixTransform(m).matrixTransform(inv);
    const p2 = new DOMPoint(b.x + b.width, b.y + b.height).matrixTransform(m).matrixTransform(inv);
    return { x: Math.min(p1.x, p2.x), y: Math.min(p1.y, p2.y), w: Math.abs(p2.x - p1.x), h: Math.abs(p2.y - p1.y) };
  }

  /** Pan (at the same zoom) so the point (user units) is in the middle of the view (the minimap's clicks). */
  centerAt(x: number, y: number): void {
    if (this.viewBox) {
      this.setViewBox({ ...this.viewBox, x: x - this.viewBox.w / 2, y: y - this.viewBox.h / 2 });
    }
  }

  /** Pan (at the same zoom) so the element is in the middle of the view. */
  centerOn(el: SVGGraphicsElement): void {
    if (!this.picture || !this.viewBox) {
      return;
    }
    const box = el.getBBox();
    const m = el.getScreenCTM();
    const root = this.picture.getScreenCTM();
    if (!m || !root) {
      return;
    }
    const p = new DOMPoint(box.x + box.width / 2, box.y + box.height / 2)
      .matrixTransform(m)
      .matrixTransform(root.inverse());
    // the root's inverse screen matrix maps back to its user units, which are viewBox units
    const vb = this.viewBox;
    this.setViewBox({ ...vb, x: p.x - vb.w / 2, y: p.y - vb.h / 2 });
  }
}
