/**
 * Full screen: the explorer fills the browser window (over JupyterLab or Notebook 7) until Esc or the button.
 *
 * The explorer is moved to `document.body` while it is full screen, and a placeholder of its height keeps its
 * place in the notebook: a `position: fixed` element inside the notebook would be positioned against the nearest
 * ancestor with `contain` or `transform` (JupyterLab's windowed notebook has such ancestors), not the window.
 * It is not the browser's Fullscreen API: that hides the browser around the page and needs a fresh user gesture
 * every time, while this is one click in and Esc out, and the rest of JupyterLab stays one click away.
 */

import { h } from '../state/dom';

export class FullScreen {
  private placeholder: HTMLElement | null = null;
  private readonly onKeydown = (e: KeyboardEvent): void => {
    // a view that used Esc itself (the graph clears its selection) called preventDefault: the next Esc leaves
    if (e.key === 'Escape' && !e.defaultPrevented) {
      e.preventDefault();
      e.stopPropagation();
      this.leave();
    }
  };

  /** `onChange(active)` runs after every switch (the shell updates its button and refits the graph). */
  constructor(
    private readonly element: HTMLElement,
    private readonly onChange: (active: boolean) => void
  ) {}

  get active(): boolean {
    return this.placeholder !== null;
  }

  toggle(): void {
    if (this.active) {
      this.leave();
    } else {
      this.enter();
    }
  }

  enter(): void {
    const parent = this.element.parentNode;
    if (this.active || !parent) {
      return;
    }
    this.placeholder = h('div', {
      class: 'jp-TraceExplorer-placeholder',
      style: `height: ${this.element.offsetHeight}px`
    });
    parent.replaceChild(this.placeholder, this.element);
    this.element.classList.add('jp-mod-fullscreen');
    document.body.appendChild(this.element);
    document.addEventListener('keydown', this.onKeydown);
    this.onChange(true);
  }

  leave(): void {
    const placeholder = this.placeholder;
    if (!placeholder) {
      return;
    }
    this.placeholder = null;
    document.removeEventListener('keydown', this.onKeydown);
    this.element.classList.remove('jp-mod-fullscreen');
    if (placeholder.parentNode) {
      placeholder.parentNode.replaceChild(this.element, placeholder);
    } else {
      this.element.remove(); // the output it came from is gone
    }
    this.onChange(false);
  }
}
