/**
 * The comparison panes' life over the graph area, and the stepper that walks them, for every view that shows two
 * graphs side by side: the Check tab (a divergence of the trace and its check), the "Trace vs export" tab (a trace
 * and its export, line by line) and the "Diff" tab (two runs of one model, module by module). One definition of the
 * toolbar (« ‹ n of m › »), its keys, and the panes: opened by a button or a step, closed by the button, "close" or
 * Esc, replaced when what they compare changes; a step marks its ops in both pictures and brings them into view.
 */

import { ComparePanes, PaneSpec } from './ComparePanes';
import { STEP_KEYS, StepCommand, Stepper } from '../model/stepper';
import { button, h } from '../state/dom';

/** The class a step's ops get in the panes; a picked op and its partner get the graph's `selected`. */
const STEP_CLASS = 'step';
const LINKED_CLASS = 'selected';

/** The two pictures the panes draw. */
export interface PanesPictures {
  dots: [string, string];
  /** DOT name -> node id, per side; a matched pair has one name in both pictures */
  names: [Map<string, number>, Map<string, number>];
  /** node id -> DOT name, per side: how a step's ops are found (needed only by a content with steps) */
  nameOf?: [(id: number) => string, (id: number) => string];
  /** per side, what its nodes stand for when none matches the other side's divergent node (model/align.ts) */
  notes?: [string, string];
}

/** What the panes show. */
export interface PanesContent {
  /** what they compare: panes on screen for another key are replaced */
  key: string;
  title: string;
  /** each pane's name ("trace" / "export", "old" / "new", "trace" / "check with check_inputs[0]") */
  labels: [string, string];
  /** the pictures, drawn when the panes first open for this key */
  pictures: () => PanesPictures;
  /** node ids per side of the current step (marked and brought into view); null: none */
  step: [readonly number[], readonly number[]] | null;
  /** a click on a node of side `side` (its DOT name); absent: clicks do nothing */
  onNode?: (side: 0 | 1, name: string) => void;
}

export interface StepperBarOptions {
  /** names a step in the buttons' titles ("line", "change", "root") */
  unit: string;
  /** the position, between the buttons ("line 2 of 5") */
  label: string;
  onStep: (command: StepCommand) => void;
  /** the toolbar's accessible name; `<unit> stepper` when absent */
  name?: string;
  /** after the buttons (the check's "downstream too") */
  after?: HTMLElement;
}

/** The « ‹ n of m › » toolbar. */
export function stepperBar(stepper: Stepper, options: StepperBarOptions): HTMLElement {
  const { unit, onStep } = options;
  const nav = (command: StepCommand, text: string, what: string, key: string): HTMLButtonElement =>
    button(text, () => onStep(command), {
      title: `${what} ${unit} (${key})`,
      'aria-label': `${what} ${unit}`,
      disabled: !stepper.canStep(command)
    });
  return h(
    'div',
    { class: 'jp-TraceExplorer-stepper', role: 'toolbar', 'aria-label': options.name ?? `${unit} stepper` },
    nav('first', '«', 'first', 'Home'),
    nav('previous', '‹', 'previous', '← or k'),
    h('span', { class: 'jp-TraceExplorer-stepLabel', 'aria-live': 'polite' }, options.label),
    nav('next', '›', 'next', '→ or j'),
    nav('last', '»', 'last', 'End'),
    options.after ?? null
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
  private pictures: PanesPictures | null = null;

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
      this.dispose(); // something else to compare (a re-trace, a re-export, another divergence): its pictures
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
    const nameOf = this.pictures!.nameOf;
    const step = content.step;
    this.rendered = panes.rendered.then(() => {
      if (this.panes === panes && step && nameOf) {
        panes.mark(STEP_CLASS, [step[0].map(nameOf[0]), step[1].map(nameOf[1])], true);
      }
    });
  }

  /** The node of DOT name `name` on `side` of the pictures on screen. */
  nodeId(side: 0 | 1, name: string): number | undefined {
    return this.pictures?.names[side].get(name);
  }

  /** Mark a clicked node and its partner on the other side (a matched pair has one name in both pictures). */
  markPartners(side: 0 | 1, name: string): void {
    const names = this.pictures?.names;
    if (!this.panes || !names) {
      return;
    }
    const own = names[side].has(name) ? [name] : [];
    const partner = names[1 - side].has(name) ? [name] : [];
    this.panes.mark(LINKED_CLASS, side === 0 ? [own, partner] : [partner, own]);
  }

  private open(content: PanesContent, pictures: PanesPictures): ComparePanes {
    const onNode = content.onNode;
    const side = (i: 0 | 1): PaneSpec => ({
      label: content.labels[i],
      dot: pictures.dots[i],
      note: pictures.notes?.[i],
      onNode: onNode && (name => onNode(i, name))
    });
    const panes = new ComparePanes(content.title, [side(0), side(1)], () => {
      if (this.panes === panes) {
        this.panes = null;
        this.showing = false;
        this.onClosed();
      }
    });
    this.panes = panes;
    return panes;
  }
}
