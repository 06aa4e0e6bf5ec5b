/**
 * The minimap: the whole laid-out graph in a corner, with the part on screen framed. Clicking or dragging on it
 * centres the view there. It hides while the view shows the whole drawing (nothing to navigate).
 *
 * It stays small next to the graph: at most MAX_WIDTH_SHARE of the canvas's width and MAX_HEIGHT_SHARE of its
 * height (and MAX_WIDTH_PX x MAX_HEIGHT_PX), and on a canvas smaller than MIN_CANVAS_PX (a narrow notebook
 * output) it is off until the toolbar's "map" button turns it on. It never covers a node of the graph: it sits in
 * a corner of the canvas over blank canvas (edges and module frames may pass under it), keeping its corner while
 * that stays clear, else moving to another (the top left only while the legend is closed there), else shrinking
 * to SMALL_SHARE of its size; while the graph lies under every corner (a pan or zoom brings nodes there) it hides,
 * and comes back as soon as a corner is clear.
 *
 * It watches the canvas rather than being told: a new picture (child list), a pan or zoom (the SVG's `viewBox`)
 * and a change of highlights (`class`) each schedule one redraw per frame. Shapes are read from the SVG's
 * attributes; colours are the drawn shapes' computed paint (minimapPicture.ts).
 */

import { Box, contains, fitInto } from '../model/geometry';
import { h } from '../state/dom';
import { isMarked, MapPicture, paintBase, paintMarks, readPicture, Shape } from './minimapPicture';

/**
 * The largest the map gets: CSS px, and shares of the canvas's width and height; a very tall or wide graph keeps
 * at least MIN_SIDE_PX on its short side, so it can still be clicked.
 */
const MAX_WIDTH_PX = 180;
const MAX_HEIGHT_PX = 220;
const MAX_WIDTH_SHARE = 0.22;
const MAX_HEIGHT_SHARE = 0.35;
const MIN_SIDE_PX = 40;
/** Below this canvas size the map would hide too much of a graph drawn at a readable size: off by default. */
export const MIN_CANVAS_PX = { w: 480, h: 300 };
/** How often, and how far apart, a redraw is tried again while the canvas has no size. */
const MAX_RETRIES = 20;
const RETRY_MS = 150;
/** Gap between the map and the canvas's edges, and around the node in focus. */
const MARGIN_PX = 8;
/** Where the map may sit, in order of preference (the legend opens at the top left: that corner comes last). */
const CORNERS = ['bottom-right', 'bottom-left', 'top-right', 'top-left'] as const;
type Corner = (typeof CORNERS)[number];
/** The map's size when no corner has room for it whole (a share of its full size). */
const SMALL_SHARE = 0.6;
/** Where the map goes: a corner, at its full size (1) or small (SMALL_SHARE). */
interface Place {
  corner: Corner;
  share: number;
}
/** The "map" button's title, and its words while the map hides because the graph lies under every corner. */
const MAP_TITLE = 'overview map of the whole graph (shown while the view is a part of it)';
const COVERED_TITLE = 'overview map: hidden while the graph lies under every corner of the canvas (pan or zoom out)';
/** The performance measure of each redraw. */
export const MEASURE_MINIMAP = 'tracejit:minimap';
export class Minimap {
  readonly element: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  /** the picture's plain shapes and edges, drawn once per picture (and theme): marks are drawn over a copy */
  private readonly base: HTMLCanvasElement = document.createElement('canvas');
  private readonly frame: HTMLElement;
  private picture: SVGSVGElement | null = null;
  /** what the map draws of the picture, read once per picture */
  private parts: MapPicture = { shapes: [], shapeOf: new Map(), marked: new Set(), edges: [], world: null };
  /** the whole drawing, in the SVG's user units; null: the picture is read again at the next redraw */
  private world: Box | null = null;
  private map = { scale: 1, dx: 0, dy: 0 };
  private size: [number, number] = [0, 0];
  private pending = 0;
  /** what the next frame redraws: the base layer (new picture, theme, size), the marks, or only the frame */
  private dirtyBase = false;
  private dirtyMarks = new Set<Element>();
  private baseDrawn = false;
  /** the marks changed while the map was hidden */
  private marksStale = false;
  /** the user's choice from the toolbar's "map" button; null: on when the canvas is big enough */
  private userChoice: boolean | null = null;
  /** the toolbar's "map" button (aria-pressed: whether the map is on) */
  readonly button: HTMLButtonElement;
  /** the corner the map is in, and its size (a share of the full size) */
  private corner: Corner = 'bottom-right';
  private share = 1;
  /** redraws put off while the canvas had no size */
  private retries = 0;

  /**
   * @param host the canvas element the pictures are drawn in
   * @param centerAt pan the view so this point (SVG user units) is in its middle
   * @param hostSize the canvas's size in pixels as the viewport knows it (read on every view change: the
   *   canvas's own clientWidth would force a layout of the picture each frame of a pan)
   */
  constructor(
    private readonly host: HTMLElement,
    private readonly centerAt: (x: number, y: number) => void,
    private readonly hostSize: () => { w: number; h: number }
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
    new MutationObserver(() => {
      this.dirtyBase = true;
      this.schedule();
    }).observe(document.body, { attributes: true, attributeFilter: ['data-jp-theme-name', 'data-jp-theme-light'] });
    this.installPointer();
    // the map's size follows the canvas's
    new ResizeObserver(() => {
      this.dirtyBase = true;
      this.schedule();
    }).observe(host);
    this.button = h(
      'button',
      {
        type: 'button',
        class: 'jp-TraceExplorer-button jp-TraceExplorer-mapButton',
        'aria-pressed': 'true',
        title: MAP_TITLE
      },
      'map'
    ) as HTMLButtonElement;
    this.button.addEventListener('click', () => {
      this.userChoice = !this.on;
      this.dirtyBase = true;
      this.schedule();
    });
  }

  /** Whether the map is on: the user's choice, else whether the canvas leaves room for it. */
  get on(): boolean {
    return this.userChoice ?? this.roomy;
  }

  /** Whether the canvas is big enough for the map next to a readable graph. */
  private get roomy(): boolean {
    const { w, h: hgt } = this.hostSize();
    return w >= MIN_CANVAS_PX.w && hgt >= MIN_CANVAS_PX.h;
  }

  private onMutations(records: MutationRecord[]): void {
    for (const r of records) {
      if (r.type === 'childList' && r.target === this.host) {
        this.picture = this.host.querySelector('svg');
        this.world = null; // read again when drawn
        this.dirtyBase = true;
      } else if (r.type === 'attributes' && r.attributeName === 'class') {
        this.dirtyMarks.add(r.target as Element);
      }
    }
    this.schedule();
  }

  /**
   * One redraw per frame, of what changed. A new picture is read after the frame that paints it (a task of its
   * own after the animation frame): the paint lays it out first, so the map's `getBBox` calls find it laid out.
   */
  private schedule(): void {
    if (this.pending) {
      return;
    }
    const run = (): void => {
      this.pending = 0;
      const start = performance.now();
      this.update();
      // what the map costs on the main thread (the browser benchmark reads it)
      performance.measure(MEASURE_MINIMAP, { start, detail: { shapes: this.parts.shapes.length } });
    };
    this.pending = requestAnimationFrame(() => (this.world ? run() : setTimeout(run, 0)));
  }

  private update(): void {
    const svg = this.picture;
    if (svg && (this.hostSize().w === 0 || this.hostSize().h === 0)) {
      // no size: a hidden output, or a moment inside a theme switch (its stylesheets swapped): try again soon,
      // rather than decide on a size that is not the canvas's
      if (this.retries++ < MAX_RETRIES) {
        setTimeout(() => this.schedule(), RETRY_MS);
      }
      return;
    }
    this.retries = 0;
    this.button.setAttribute('aria-pressed', String(this.on));
    if (!svg || !svg.isConnected || !this.on) {
      this.element.hidden = true;
      this.button.title = MAP_TITLE;
      return;
    }
    if (!this.world) {
      this.parts = readPicture(svg);
      // nothing laid out yet (a hidden tab): read again at the next change, once it is on screen
      this.world = this.parts.world;
      this.dirtyMarks.clear();
    }
    const { shapeOf, marked } = this.parts;
    for (const el of this.dirtyMarks) {
      const shape = shapeOf.get(el);
      if (shape) {
        if (isMarked(el)) {
          marked.add(shape);
        } else {
          marked.delete(shape);
        }
      }
    }
    this.marksStale = this.marksStale || this.dirtyMarks.size > 0;
    this.dirtyMarks.clear();
    const world = this.world;
    if (!world) {
      this.element.hidden = true;
      return;
    }
    const vb = svg.viewBox.baseVal;
    const view: Box = { x: vb.x, y: vb.y, w: vb.width, h: vb.height };
    if (contains(view, world)) {
      this.element.hidden = true;
      return;
    }
    if (this.dirtyBase || !this.baseDrawn) {
      this.drawBase(world);
      this.dirtyBase = false;
      this.baseDrawn = true;
      this.marksStale = true;
    }
    const place = this.freePlace(view);
    this.element.dataset.covered = String(place === null);
    this.button.title = place === null ? COVERED_TITLE : MAP_TITLE;
    if (place === null) {
      this.element.hidden = true; // the graph lies under every corner: back when one is clear
      return;
    }
    if (place.share !== this.share) {
      this.share = place.share;
      this.drawBase(world);
      this.marksStale = true;
    }
    this.place(place.corner);
    this.element.hidden = false;
    if (this.marksStale) {
      this.drawMarks(world);
      this.marksStale = false;
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

  /** The boxes of `shapes` on the canvas (CSS px from its top left), from the boxes read with the picture. */
  private onCanvas(view: Box, shapes: Iterable<Shape>): Box[] {
    const k = this.hostSize().w / Math.max(view.w, 1e-9);
    const out: Box[] = [];
    for (const s of shapes) {
      out.push({ x: (s.box.x - view.x) * k, y: (s.box.y - view.y) * k, w: s.box.w * k, h: s.box.h * k });
    }
    return out;
  }

  /** The map's box on the canvas in `corner`, `share` of its full size (CSS px from the canvas's top left). */
  private boxIn(corner: Corner, share = this.share): Box {
    const [mw, mh] = this.size.map(v => (v / this.share) * share);
    const w = mw + 6; // padding and border
    const hgt = mh + 6;
    const host = this.hostSize();
    const right = corner.endsWith('right');
    const bottom = corner.startsWith('bottom');
    return {
      x: right ? host.w - w - MARGIN_PX : MARGIN_PX,
      y: bottom ? host.h - hgt - MARGIN_PX : MARGIN_PX,
      w,
      h: hgt
    };
  }

  /**
   * Where the map goes: a corner whose box (and a margin) holds no node of the view, its current corner first, at
   * its full size, else small; null when every corner has a node under it.
   */
  private freePlace(view: Box): Place | null {
    const nodes = this.onCanvas(
      view,
      this.parts.shapes.filter(
        s =>
          !s.cluster &&
          s.box.x < view.x + view.w &&
          s.box.x + s.box.w > view.x &&
          s.box.y < view.y + view.h &&
          s.box.y + s.box.h > view.y
      )
    );
    const covers = (m: Box): boolean =>
      nodes.some(
        f =>
          f.x < m.x + m.w + MARGIN_PX &&
          f.x + f.w > m.x - MARGIN_PX &&
          f.y < m.y + m.h + MARGIN_PX &&
          f.y + f.h > m.y - MARGIN_PX
      );
    const legend = this.element.parentElement?.querySelector<HTMLElement>('.jp-TraceExplorer-legend');
    const corners = [this.corner, ...CORNERS.filter(c => c !== this.corner)].filter(
      c => c !== 'top-left' || !legend || legend.hidden
    );
    for (const share of [1, SMALL_SHARE]) {
      const corner = corners.find(c => !covers(this.boxIn(c, share)));
      if (corner) {
        return { corner, share };
      }
    }
    return null;
  }

  /** Put the map in `corner` of the canvas (it is positioned in the graph element, which also holds the toolbar). */
  private place(corner: Corner): void {
    this.corner = corner;
    this.element.dataset.corner = corner;
    const b = this.boxIn(corner);
    Object.assign(this.element.style, {
      left: `${this.host.offsetLeft + b.x}px`,
      top: `${this.host.offsetTop + b.y}px`,
      right: 'auto',
      bottom: 'auto'
    });
  }

  /** Size the map to the picture and draw its plain layer: clusters, nodes in their unmarked paint, edges. */
  private drawBase(world: Box): void {
    const host = this.hostSize();
    const maxWidth = Math.max(MIN_SIDE_PX, Math.min(MAX_WIDTH_PX, host.w * MAX_WIDTH_SHARE));
    const maxHeight = Math.max(MIN_SIDE_PX, Math.min(MAX_HEIGHT_PX, host.h * MAX_HEIGHT_SHARE));
    const scale0 = Math.min(maxWidth / world.w, maxHeight / world.h);
    const side = (v: number, most: number): number =>
      Math.round(Math.min(most, Math.max(MIN_SIDE_PX, Math.round(v * scale0))) * this.share);
    const mw = side(world.w, maxWidth);
    const mh = side(world.h, maxHeight);
    this.size = [mw, mh];
    this.map = fitInto(world, mw, mh);
    const ratio = window.devicePixelRatio || 1;
    for (const c of [this.canvas, this.base]) {
      c.width = Math.round(mw * ratio);
      c.height = Math.round(mh * ratio);
    }
    this.canvas.style.width = `${mw}px`;
    this.canvas.style.height = `${mh}px`;
    const g = this.base.getContext('2d');
    if (!g) {
      return;
    }
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, mw, mh);
    const edges = getComputedStyle(this.element).getPropertyValue('--jp-border-color1').trim() || 'gray';
    paintBase(g, this.parts, world, this.map, edges);
  }

  /** The base layer, then the marked nodes (selection, warnings, roots...), as the graph paints them. */
  private drawMarks(world: Box): void {
    const g = this.canvas.getContext('2d');
    if (!g) {
      return;
    }
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, this.canvas.width, this.canvas.height);
    g.drawImage(this.base, 0, 0);
    const ratio = window.devicePixelRatio || 1;
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    paintMarks(g, this.parts.marked, world, this.map, this.size);
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
