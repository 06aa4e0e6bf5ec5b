/**
 * What moves a viewport (viewport.ts) by hand: a drag pans, the wheel zooms at the pointer, the arrow keys pan and
 * `+` / `-` / `0` zoom and fit. In a notebook the wheel belongs to the page until the graph is engaged (as Plotly
 * and Bokeh leave scroll-zoom off in notebooks, and an embedded map asks for Ctrl): it zooms with Ctrl or ⌘ held
 * (a trackpad pinch), once the canvas was pressed or has focus, and always in full screen; a plain wheel over a
 * graph it does not zoom scrolls the notebook and says how to zoom.
 */

import { h } from '../state/dom';
import type { ViewBox } from './viewport';

/** How far the pointer moves before a press becomes a drag (and the click that ends it is no click). */
const DRAG_THRESHOLD_PX = 4;
/** How long the "how to zoom" hint stays after a wheel that scrolled the page instead. */
const WHEEL_HINT_MS = 1500;
/** The key held to zoom with the wheel, as the platform names it (the hint and the canvases' labels say it). */
export const ZOOM_KEY = /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl';

/** What the input moves: the viewport's canvas and view. */
export interface ViewportControls {
  readonly element: HTMLElement;
  readonly view: ViewBox | null;
  readonly svg: SVGSVGElement | null;
  readonly canvasSize: { w: number; h: number };
  /** show `box` at once (a drag, a key) */
  setViewBox(box: ViewBox): void;
  stopAnimation(): void;
  zoom(factor: number, fx?: number, fy?: number): void;
  fit(animate?: boolean): void;
}

export class ViewportInput {
  /** True from a drag's first move until just after it ends: the click that ends a drag is not a click on the graph. */
  dragged = false;
  /** pressed since the pointer came over the canvas: the wheel zooms until the pointer leaves */
  private pressed = false;
  private wheelHint: HTMLElement | null = null;
  private wheelHintTimer = 0;

  constructor(private readonly viewport: ViewportControls) {
    this.installPointer();
    this.installWheel();
    viewport.element.addEventListener('keydown', e => this.onKey(e));
  }

  private onKey(e: KeyboardEvent): void {
    const vp = this.viewport;
    const view = vp.view;
    const step = (view?.w ?? 100) * 0.1;
    const moves: Record<string, [number, number]> = {
      ArrowLeft: [-step, 0],
      ArrowRight: [step, 0],
      ArrowUp: [0, -step],
      ArrowDown: [0, step]
    };
    if (e.key in moves && view) {
      const [dx, dy] = moves[e.key];
      vp.setViewBox({ ...view, x: view.x + dx, y: view.y + dy });
    } else if (e.key === '+' || e.key === '=') {
      vp.zoom(0.8);
    } else if (e.key === '-') {
      vp.zoom(1.25);
    } else if (e.key === '0') {
      vp.fit(true);
    } else {
      return;
    }
    e.preventDefault();
  }

  private installPointer(): void {
    const vp = this.viewport;
    const canvas = vp.element;
    let start: { x: number; y: number; box: ViewBox } | null = null;
    canvas.addEventListener('pointerdown', e => {
      this.pressed = true;
      if (!vp.view || e.button !== 0) {
        return;
      }
      vp.stopAnimation();
      start = { x: e.clientX, y: e.clientY, box: { ...vp.view } };
      this.dragged = false;
    });
    canvas.addEventListener('pointermove', e => {
      if (!start || !vp.svg) {
        return;
      }
      const dx = e.clientX - start.x;
      const dy = e.clientY - start.y;
      if (!this.dragged && Math.hypot(dx, dy) < DRAG_THRESHOLD_PX) {
        return;
      }
      if (!this.dragged) {
        canvas.setPointerCapture(e.pointerId);
      }
      this.dragged = true;
      const scale = start.box.w / Math.max(1, vp.canvasSize.w);
      vp.setViewBox({ ...start.box, x: start.box.x - dx * scale, y: start.box.y - dy * scale });
    });
    const end = (): void => {
      start = null;
      // after the click that this pointerup fires, so that click still sees the drag
      setTimeout(() => (this.dragged = false), 0);
    };
    canvas.addEventListener('pointerup', end);
    canvas.addEventListener('pointercancel', end);
    canvas.addEventListener('pointerleave', () => (this.pressed = false));
  }

  private installWheel(): void {
    const vp = this.viewport;
    const canvas = vp.element;
    canvas.addEventListener(
      'wheel',
      e => {
        if (!vp.view) {
          return;
        }
        if (!this.wheelZooms(e)) {
          this.showWheelHint(); // the page scrolls
          return;
        }
        this.hideWheelHint();
        e.preventDefault();
        vp.stopAnimation();
        const rect = canvas.getBoundingClientRect();
        const fx = (e.clientX - rect.left) / Math.max(1, rect.width);
        const fy = (e.clientY - rect.top) / Math.max(1, rect.height);
        vp.zoom(e.deltaY > 0 ? 1.15 : 1 / 1.15, fx, fy);
      },
      { passive: false }
    );
  }

  /** Whether a wheel event over the canvas zooms the graph rather than scrolling the page (see the header). */
  private wheelZooms(e: WheelEvent): boolean {
    const canvas = this.viewport.element;
    return (
      e.ctrlKey ||
      e.metaKey ||
      this.pressed ||
      canvas.contains(document.activeElement) ||
      canvas.closest('.jp-mod-fullscreen') !== null
    );
  }

  private showWheelHint(): void {
    if (!this.wheelHint) {
      this.wheelHint = h(
        'div',
        { class: 'jp-TraceExplorer-wheelHint', 'aria-hidden': 'true' },
        `${ZOOM_KEY} + wheel zooms the graph (or click it first)`
      );
    }
    if (!this.wheelHint.isConnected) {
      this.viewport.element.appendChild(this.wheelHint);
    }
    window.clearTimeout(this.wheelHintTimer);
    this.wheelHintTimer = window.setTimeout(() => this.hideWheelHint(), WHEEL_HINT_MS);
  }

  private hideWheelHint(): void {
    window.clearTimeout(this.wheelHintTimer);
    this.wheelHint?.remove();
  }
}
