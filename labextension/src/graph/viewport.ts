/**
 * Pan and zoom of a graph canvas: the part of the picture on screen is the SVG's `viewBox`.
 *
 * Drag pans, the wheel zooms at the pointer, the arrow keys pan and `+` / `-` / `0` zoom and fit (viewportInput.ts,
 * which also says when the wheel zooms in a notebook). The canvas element stays for the view's lifetime; each layout puts a new SVG into it (`show`), keeping the view or
 * leaving the placing to the caller (`fit`, `openAt`, `showAt`). Jumps to a node (`centerOn`) are short
 * animations, so the eye can follow where the view went. A canvas that changes size keeps its scale and its
 * centre (it shows more or less of the picture, never a squeezed one). Other views follow the view through
 * `onViewChange`: the minimap, and the compare panes, which are two viewports moving together.
 */

import { clear, h } from '../state/dom';
import { placePicture } from './svg';
import { ViewportControls, ViewportInput, ZOOM_KEY } from './viewportInput';

/** A rectangle in the SVG's user units (those of its viewBox). */
export interface ViewBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Screen pixels per layout unit below which labels are unreadable. */
export const MIN_READABLE_SCALE = 0.8;
/** `fit` never magnifies a small graph more than this. */
const MAX_FIT_SCALE = 1.5;
/** How long a jump to a node takes: long enough to follow, short enough not to wait for. */
const PAN_MS = 250;
export interface ViewportOptions {
  /** the canvas's class (default `jp-TraceExplorer-canvas`: the explorer's graph, which its tools look for) */
  className?: string;
  /** the canvas's accessible name */
  label?: string;
  /** what `fit` (the fit button, the 0 key) shows; default: the whole picture (`fitWhole`) */
  fit?: (animate: boolean) => void;
}

export class Viewport implements ViewportControls {
  /** The canvas the picture is drawn in (focusable: the keys work once it has focus). */
  readonly element: HTMLElement;
  private picture: SVGSVGElement | null = null;
  private viewBox: ViewBox | null = null;
  /** The whole picture, as Graphviz laid it out. */
  private fullBox: ViewBox | null = null;
  /** How to place the picture once the canvas gets a size (it had none when the picture came). */
  private pendingPlace: (() => void) | null = null;
  private readonly input: ViewportInput;
  private animation = 0;
  private readonly viewListeners: ((view: ViewBox) => void)[] = [];
  private readonly fitView: ((animate: boolean) => void) | null;
  /** The canvas's size in pixels, as the last resize observation saw it (null before the first one). */
  private observed: { w: number; h: number } | null = null;
  /** the canvas size the view was last set for (a resize keeps the scale, not the viewBox) */
  private viewSize = { w: 0, h: 0 };

  constructor(options: ViewportOptions = {}) {
    this.element = h('div', {
      class: options.className ?? 'jp-TraceExplorer-canvas',
      tabindex: 0,
      'aria-label': options.label ?? `graph; drag to pan, ${ZOOM_KEY} + wheel (or click, then wheel) to zoom`
    });
    this.fitView = options.fit ?? null;
    this.input = new ViewportInput(this);
    new ResizeObserver(() => this.onResize()).observe(this.element);
  }

  /** The canvas's size in pixels as last observed (0 while it is not on screen): read without forcing a layout. */
  get canvasSize(): { w: number; h: number } {
    return { w: this.width, h: this.height };
  }

  /** The canvas's width in pixels (0 while it is not on screen). */
  private get width(): number {
    return this.observed ? this.observed.w : this.element.clientWidth;
  }

  private get height(): number {
    return this.observed ? this.observed.h : this.element.clientHeight;
  }

  private onResize(): void {
    // read here, where layout is clean: reading the size right after a big picture goes in forces its layout
    // (150 ms and more for 1,500 SVG elements) inside our task
    const w = this.element.clientWidth;
    const hgt = this.element.clientHeight;
    this.observed = { w, h: hgt };
    if (w === 0 || hgt === 0) {
      return; // hidden: keep the view for when it is back
    }
    const place = this.pendingPlace;
    if (place) {
      this.pendingPlace = null;
      place();
      return;
    }
    const vb = this.viewBox;
    const old = this.viewSize;
    if (vb && old.w > 0 && (old.w !== w || old.h !== hgt)) {
      // the same scale around the same centre: a wider canvas shows more of the picture
      const scale = old.w / vb.w;
      this.stopAnimation();
      this.setViewBox({
        x: vb.x + vb.w / 2 - w / scale / 2,
        y: vb.y + vb.h / 2 - hgt / scale / 2,
        w: w / scale,
        h: hgt / scale
      });
    }
  }

  /** The picture on screen, or null. */
  get svg(): SVGSVGElement | null {
    return this.picture;
  }

  /** True from a drag's first move until just after it ends: the click that ends a drag is not a click on the graph. */
  get dragged(): boolean {
    return this.input.dragged;
  }

  /** The part of the picture on screen, in layout units; null before the first picture. */
  get view(): ViewBox | null {
    return this.viewBox;
  }

  /** The whole picture, in layout units; null before the first picture. */
  get bounds(): ViewBox | null {
    return this.fullBox;
  }

  /** Screen pixels per layout unit of the view (1 = the size Graphviz laid it out at). */
  get scale(): number {
    return this.viewBox ? Math.max(1, this.width) / this.viewBox.w : 1;
  }

  /** Call `listener` with the new view each time it changes (pan, zoom, fit, a new picture). */
  onViewChange(listener: (view: ViewBox) => void): void {
    this.viewListeners.push(listener);
  }

  /**
   * Put a freshly laid out picture on the canvas; keep the current view (same graph re-laid out), or fit it
   * (`keepView` false and `place` unset); `place` lets the caller choose the first view instead.
   */
  show(svg: SVGSVGElement, keepView: boolean, place?: () => void): void {
    this.fullBox = placePicture(this.element, svg);
    this.picture = svg;
    this.pendingPlace = null;
    if (keepView && this.viewBox) {
      this.setViewBox(this.viewBox);
    } else if (this.width === 0) {
      // not on screen yet (a hidden tab, an output not attached): show everything, place it once sized
      this.setViewBox(this.padded()!);
      this.pendingPlace = place ?? (() => this.fit());
    } else if (place) {
      place();
    } else {
      this.fit();
    }
  }

  /** Take the picture off the canvas (no graph to show); the view is kept for the next picture. */
  clear(): void {
    clear(this.element);
    this.picture = null;
  }

  /** Show `box` at once (a drag, a key, a resize; `setView` may animate). */
  setViewBox(box: ViewBox): void {
    this.viewBox = box;
    this.viewSize = { w: this.width, h: this.height };
    this.picture?.setAttribute('viewBox', `${box.x} ${box.y} ${box.w} ${box.h}`);
    for (const listener of this.viewListeners) {
      listener(box);
    }
  }

  stopAnimation(): void {
    cancelAnimationFrame(this.animation);
    this.animation = 0;
  }

  /** Show `box` (layout units; its aspect is made the canvas's), at once or as a short eased animation. */
  setView(box: ViewBox, animate = false): void {
    this.stopAnimation();
    const aspect = this.aspect();
    const w = Math.max(box.w, box.h / aspect);
    const target = { x: box.x + box.w / 2 - w / 2, y: box.y + box.h / 2 - (w * aspect) / 2, w, h: w * aspect };
    const from = this.viewBox;
    const reduced = window.matchMedia?.('(prefers-reduced-motion: reduce)').matches ?? false;
    if (!animate || !from || reduced || this.width === 0) {
      this.setViewBox(target);
      return;
    }
    const start = performance.now();
    const step = (now: number): void => {
      // a frame's timestamp can be earlier than the performance.now() taken when the animation was asked for
      const t = Math.min(1, Math.max(0, (now - start) / PAN_MS));
      const k = 1 - (1 - t) ** 3; // ease out: quick start, gentle landing
      const mix = (a: number, b: number): number => a + (b - a) * k;
      this.setViewBox({
        x: mix(from.x, target.x),
        y: mix(from.y, target.y),
        w: mix(from.w, target.w),
        h: mix(from.h, target.h)
      });
      this.animation = t < 1 ? requestAnimationFrame(step) : 0;
    };
    this.animation = requestAnimationFrame(step);
  }

  /** Scale the view by `factor` (< 1 zooms in) around the point at fractions `fx`, `fy` of its width and height. */
  zoom(factor: number, fx = 0.5, fy = 0.5): void {
    if (!this.viewBox) {
      return;
    }
    this.stopAnimation();
    const b = this.viewBox;
    const w = Math.max(10, b.w * factor);
    const hgt = Math.max(10, b.h * factor);
    this.setViewBox({ x: b.x + (b.w - w) * fx, y: b.y + (b.h - hgt) * fy, w, h: hgt });
  }

  /** The canvas's height / width (the viewBox keeps this aspect so zooming maps 1:1 to the screen). */
  private aspect(): number {
    const w = this.width;
    const hgt = this.height;
    return w > 0 && hgt > 0 ? hgt / w : 1;
  }

  /** The whole picture with a small margin, in layout units. */
  private padded(): ViewBox | null {
    if (!this.fullBox) {
      return null;
    }
    const pad = 8;
    const b = this.fullBox;
    return { x: b.x - pad, y: b.y - pad, w: b.w + 2 * pad, h: b.h + 2 * pad };
  }

  /** What the fit button and the 0 key show: the whole graph, unless the owner said otherwise. */
  fit(animate = false): void {
    if (this.fitView) {
      this.fitView(animate);
    } else {
      this.fitWhole(animate);
    }
  }

  /**
   * Show the whole graph at whatever scale that takes (never magnified past MAX_FIT_SCALE), centred across and at
   * the top of the canvas: a small graph centred both ways sat low in a blank pane (it reads from the top down).
   */
  fitWhole(animate = false): void {
    const full = this.padded();
    if (!full) {
      return;
    }
    if (this.width === 0) {
      this.setViewBox(full);
      this.pendingPlace = () => this.fitWhole();
      return;
    }
    const aspect = this.aspect();
    const w = Math.max(full.w, full.h / aspect, this.width / MAX_FIT_SCALE);
    this.setView({ x: full.x + full.w / 2 - w / 2, y: full.y, w, h: w * aspect }, animate);
  }

  /** How many layout units wide the view is at the smallest readable scale (what a first view shows). */
  get readableWidth(): number {
    return Math.max(1, this.width) / MIN_READABLE_SCALE;
  }

  /**
   * The first view of a picture: the whole graph when it is readable that way; else, at the smallest readable
   * scale, `anchor` (a point in layout units) in the middle when `centre`, else `anchor` near the view's top (the
   * graph's top when the anchor is close to it) and what follows from it below (by default the graph's top
   * middle).
   */
  openAt(anchor: { x: number; y: number } | null = null, centre = false): void {
    const full = this.padded();
    if (!full) {
      return;
    }
    const px = this.width;
    if (px === 0) {
      this.setViewBox(full);
      this.pendingPlace = () => this.openAt(anchor, centre);
      return;
    }
    const aspect = this.aspect();
    const fitW = Math.max(full.w, full.h / aspect, px / MAX_FIT_SCALE);
    if (px / fitW >= MIN_READABLE_SCALE * 0.75) {
      this.fitWhole();
      return;
    }
    const w = this.readableWidth;
    const h = w * aspect;
    const cx = anchor ? anchor.x : full.x + full.w / 2;
    // keep the view on the picture: no empty margin beside a wide graph's edge; and when the anchor is near the
    // left edge anyway, start there, where the module groups' labels are
    const nearLeft = anchor !== null && centre && anchor.x - full.x <= w * 0.75;
    const x = nearLeft ? full.x : Math.min(Math.max(cx - w / 2, full.x), Math.max(full.x, full.x + full.w - w));
    const y = !anchor ? full.y : centre ? anchor.y - h / 2 : Math.max(full.y, anchor.y - h / 4);
    this.setViewBox({ x, y, w, h });
  }

  /** Zoom so the element fills the view, at most 1.5x its natural size (a short animation). */
  zoomTo(el: SVGGraphicsElement): void {
    const rect = this.userRect(el);
    if (!rect) {
      return;
    }
    const aspect = this.aspect();
    const px = Math.max(1, this.width);
    const w = Math.max(rect.w * 1.1, (rect.h * 1.1) / aspect, px / 1.5);
    const hgt = w * aspect;
    // a group taller than the view: show its top (its label), not its middle
    const y = rect.h * 1.1 > hgt ? rect.y - rect.h * 0.05 : rect.y + rect.h / 2 - hgt / 2;
    this.setView({ x: rect.x + rect.w / 2 - w / 2, y, w, h: hgt }, true);
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

  /**
   * The scale (screen pixels per layout unit) at which the whole picture fits with `point` in the middle of the
   * view (the middle of the picture by default), never magnified past MAX_FIT_SCALE; null before a picture is
   * on a sized canvas.
   */
  fitScale(point: { x: number; y: number } | null = null): number | null {
    const full = this.padded();
    const w = this.width;
    const hgt = this.height;
    if (!full || w === 0 || hgt === 0) {
      return null;
    }
    const c = point ?? { x: full.x + full.w / 2, y: full.y + full.h / 2 };
    const halfW = Math.max(c.x - full.x, full.x + full.w - c.x);
    const halfH = Math.max(c.y - full.y, full.y + full.h - c.y);
    return Math.min(MAX_FIT_SCALE, w / (2 * Math.max(halfW, 1)), hgt / (2 * Math.max(halfH, 1)));
  }

  /** The view's centre, in layout units; null before the first picture. */
  get centre(): { x: number; y: number } | null {
    const vb = this.viewBox;
    return vb ? { x: vb.x + vb.w / 2, y: vb.y + vb.h / 2 } : null;
  }

  /** Show `point` (layout units) in the middle of the view at `scale` screen pixels per layout unit. */
  showAt(point: { x: number; y: number }, scale: number, animate = false): void {
    const w = Math.max(1, this.width) / scale;
    const hgt = Math.max(1, this.height) / scale;
    this.setView({ x: point.x - w / 2, y: point.y - hgt / 2, w, h: hgt }, animate);
  }

  /** Pan (at the same zoom) so the point (user units) is in the middle of the view (the minimap's clicks). */
  panTo(x: number, y: number): void {
    if (this.viewBox) {
      this.setViewBox({ ...this.viewBox, x: x - this.viewBox.w / 2, y: y - this.viewBox.h / 2 });
    }
  }

  /**
   * Pan so the element is in the middle of the view, as a short animation; zoom in first when the view is too
   * small to read (after `fit` on a big graph), never out.
   */
  centerOn(el: SVGGraphicsElement, animate = true): void {
    const rect = this.userRect(el);
    if (rect) {
      this.centerAt({ x: rect.x + rect.w / 2, y: rect.y + rect.h / 2 }, animate);
    }
  }

  /** `centerOn` for a point in layout units. */
  centerAt(point: { x: number; y: number }, animate = true): void {
    const vb = this.viewBox;
    if (!vb) {
      return;
    }
    const px = Math.max(1, this.width);
    const w = Math.min(vb.w, px / MIN_READABLE_SCALE);
    const hgt = w * (vb.h / vb.w);
    this.setView({ x: point.x - w / 2, y: point.y - hgt / 2, w, h: hgt }, animate);
  }
}
