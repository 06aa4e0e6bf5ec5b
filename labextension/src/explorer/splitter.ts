/**
 * The bar between the graph and the side panel: drag it, or focus it and use the arrow keys (Home / End for the
 * limits, Enter for the default), as the WAI-ARIA window splitter pattern describes. It sets the graph's share of
 * the main area as the CSS variable `--jp-TraceExplorer-split`; the stylesheet turns that into a width (side by
 * side) or a height (stacked, on narrow outputs).
 */

import { h } from '../state/dom';

/** The graph's share of the main area, in percent. */
export const SPLIT_DEFAULT = 60;
export const SPLIT_MIN = 20;
export const SPLIT_MAX = 85;
/** How far one arrow key press moves the bar (percent). */
const SPLIT_STEP = 5;

export class Splitter {
  readonly element: HTMLElement;
  private percent = SPLIT_DEFAULT;
  private stacked = false;

  /** `container` holds the graph, this bar and the side panel; `onMove` runs after every change. */
  constructor(
    private readonly container: HTMLElement,
    private readonly onMove: () => void = () => undefined
  ) {
    this.element = h('div', {
      class: 'jp-TraceExplorer-splitter',
      role: 'separator',
      tabindex: 0,
      'aria-label': 'resize the graph and the side panel',
      'aria-valuemin': SPLIT_MIN,
      'aria-valuemax': SPLIT_MAX,
      title: 'drag, or use the arrow keys, to resize (Enter: back to the default)',
      // its keys are its own: without this the notebook's shortcuts (arrows, Enter in command mode) take them first
      'data-lm-suppress-shortcuts': 'true'
    });
    this.installPointer();
    this.element.addEventListener('keydown', e => this.onKey(e));
    this.element.addEventListener('dblclick', () => this.set(SPLIT_DEFAULT));
    this.setStacked(false);
    this.set(SPLIT_DEFAULT);
  }

  /** The graph's share, in percent. */
  get value(): number {
    return this.percent;
  }

  /** Side by side (a vertical bar, moved left and right) or stacked (a horizontal bar, moved up and down). */
  setStacked(stacked: boolean): void {
    this.stacked = stacked;
    this.element.setAttribute('aria-orientation', stacked ? 'horizontal' : 'vertical');
  }

  set(percent: number): void {
    this.percent = Math.round(Math.min(SPLIT_MAX, Math.max(SPLIT_MIN, percent)) * 10) / 10;
    this.container.style.setProperty('--jp-TraceExplorer-split', `${this.percent}%`);
    this.element.setAttribute('aria-valuenow', String(Math.round(this.percent)));
    this.element.setAttribute('aria-valuetext', `graph ${Math.round(this.percent)}%`);
    this.onMove();
  }

  private onKey(e: KeyboardEvent): void {
    const back = this.stacked ? 'ArrowUp' : 'ArrowLeft';
    const forward = this.stacked ? 'ArrowDown' : 'ArrowRight';
    const moves: Record<string, number> = {
      [back]: this.percent - SPLIT_STEP,
      [forward]: this.percent + SPLIT_STEP,
      Home: SPLIT_MIN,
      End: SPLIT_MAX,
      Enter: SPLIT_DEFAULT
    };
    if (e.key in moves) {
      e.preventDefault();
      this.set(moves[e.key]);
    }
  }

  private installPointer(): void {
    const bar = this.element;
    let dragging = false;
    bar.addEventListener('pointerdown', e => {
      if (e.button !== 0) {
        return;
      }
      e.preventDefault();
      dragging = true;
      bar.setPointerCapture(e.pointerId);
      bar.classList.add('jp-mod-dragging');
    });
    bar.addEventListener('pointermove', e => {
      if (!dragging) {
        return;
      }
      const box = this.container.getBoundingClientRect();
      const share = this.stacked ? (e.clientY - box.top) / box.height : (e.clientX - box.left) / box.width;
      if (Number.isFinite(share)) {
        this.set(share * 100);
      }
    });
    const stop = (): void => {
      dragging = false;
      bar.classList.remove('jp-mod-dragging');
    };
    bar.addEventListener('pointerup', stop);
    bar.addEventListener('pointercancel', stop);
  }
}
