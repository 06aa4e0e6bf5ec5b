/**
 * A stepper whose steps are shown side by side in the comparison panes (ComparePanes.ts) over the graph area: the
 * "Trace vs export" tab (a trace and its export, line by line) and the "Diff" tab (two runs of one model, module by
 * module) both step this way. One definition of the toolbar (« ‹ n of m › »), its keys, and the panes' life: opened
 * by a button or a step, closed by the button, "close" or Esc, replaced when the run changes; each step marks its
 * ops in both pictures and brings them into view, and a click on an op marks its partner on the other side.
 */

import { ComparePanes } from './ComparePanes';
import { PairedPictures } from '../model/align';
import { STEP_KEYS, StepCommand, Stepper } from '../model/stepper';
import { button, h } from '../state/dom';

/** The class a step's ops get in the panes; a picked op and its partner get the graph's `selected`. */
const STEP_CLASS = 'step';
const LINKED_CLASS = 'selected';

/** What the panes show: two pictures, and the current step's ops on each side. */
export interface PanesContent {
  /** the run it belongs to: panes on screen for another key are replaced */
  key: string;
  title: string;
  /** each pane's name ("trace" / "export", "old" / "new") */
  labels: [string, string];
  /** the pictures, drawn when the panes first open for this key */
  pictures: () => PairedPictures;
  /** node ids per side of the current step (marked and brought into view); null: none */
  step: [readonly number[], readonly number[]] | null;
}

/** The « ‹ n of m › » toolbar; `unit` names a step ("line", "change"). */
export function stepperBar(
  stepper: Stepper,
  unit: string,
  label: string,
  onStep: (command: StepCommand) => void
): HTMLElement {
  const nav = (command: StepCommand, text: string, what: string, key: string): HTMLButtonElement =>
    button(text, () => onStep(command), {
      title: `${what} ${unit} (${key})`,
      'aria-label': `${what} ${unit}`,
      disabled: !stepper.canStep(command)
    });
  return h(
    'div',
    { class: 'jp-TraceExplorer-stepper', role: 'toolbar', 'aria-label': `${unit} stepper` },
    nav('first', '«', 'first', 'Home'),
    nav('previous', '‹', 'previous', '← or k'),
    h('span', { class: 'jp-TraceExplorer-stepLabel', 'aria-live': 'polite' }, label),
    nav('next', '›', 'next', '→ or j'),
    nav('last', '»', 'last', 'End')
  );
}

/** The stepper's keys on `element` (not while typing in a field); `onStep` returns whether it stepped. */
export function bindStepKeys(element: HTMLElement, onStep: (command: StepCommand) => boolean): void {
  element.addEventListener('keydown', e => {
    const target = e.target as HTMLElement;
    if (target.tagName === 'SELECT' || target.tagName === 'INPUT') {
      return;
    }
    const command = STEP_KEYS[e.key];
    if (command && onStep(command)) {
      e.preventDefault();
    }
  });
}

export class SteppedPanes {
  /** The panes on screen, if any. */
  panes: ComparePanes | null = null;
  /** Settles when the panes on screen (if any) show both pictures with the current step marked. */
  rendered: Promise<void> = Promise.resolve();
  /** the panes are wanted (opened by the owner's button or a step; closed by it, close or Esc) */
  showing = false;
  private key = '';
  private pictures: PairedPictures | null = null;

  /**
   * `owner`: the tab's element, inside the explorer whose graph area the panes cover; `onClosed`: the user closed
   * the panes (the owner re-renders its button and takes the focus back).
   */
  constructor(
    private readonly owner: HTMLElement,
    private readonly onClosed: () => void
  ) {}

  dispose(): void {
    this.panes?.dispose();
    this.panes = null;
  }

  /** Put the panes on screen (or take them off) and mark the current step in them. */
  sync(content: PanesContent | null): void {
    if (!this.showing || !content) {
      this.dispose();
      this.rendered = Promise.resolve();
      return;
    }
    if (this.panes && this.key !== content.key) {
      this.dispose(); // a new run on screen (a re-trace, a re-export): its pictures, not the last run's
    }
    if (!this.panes) {
      const graphArea = this.owner.closest('.jp-TraceExplorer-root')?.querySelector('.jp-TraceExplorer-graph');
      if (!graphArea) {
        return;
      }
      if (this.key !== content.key || !this.pictures) {
        this.pictures = content.pictures();
        this.key = content.key;
      }
      this.open(content, this.pictures).showIn(graphArea);
    }
    const panes = this.panes!;
    const pictures = this.pictures!;
    const step = content.step;
    this.rendered = panes.rendered.then(() => {
      if (this.panes === panes && step) {
        panes.mark(STEP_CLASS, [step[0].map(pictures.nameOf[0]), step[1].map(pictures.nameOf[1])], true);
      }
    });
  }

  private open(content: PanesContent, pictures: PairedPictures): ComparePanes {
    // a matched pair has one name in both pictures: a click on either marks both
    const link = (side: 0 | 1) => (name: string) => {
      const own = pictures.names[side].has(name) ? [name] : [];
      const partner = pictures.names[1 - side].has(name) ? [name] : [];
      panes.mark(LINKED_CLASS, side === 0 ? [own, partner] : [partner, own]);
    };
    const panes = new ComparePanes(
      content.title,
      [
        { label: content.labels[0], dot: pictures.dots[0], onNode: link(0) },
        { label: content.labels[1], dot: pictures.dots[1], onNode: link(1) }
      ],
      () => {
        if (this.panes === panes) {
          this.panes = null;
          this.showing = false;
          this.onClosed();
        }
      }
    );
    this.panes = panes;
    return panes;
  }
}
