/**
 * A tab that walks the places where two graphs differ, one step at a time, and shows both graphs side by side over
 * the graph area (SteppedPanes): the "Diff" tab (two runs of one model, a step per module scope) and the "Trace vs
 * export" tab (a trace and its export, a step per source line). This holds what they share: the model worked out
 * once per run, the current step, the stepper's keys, the button that opens the panes, the stepper with its card
 * and list, and a click on an op marking its partner on the other side. A tab says what its steps are and how it
 * draws them.
 */

import { PanesContent, SteppedPanes, bindStepKeys, stepperBar } from './SteppedPanes';
import { ComparePanes } from './ComparePanes';
import { TraceRunModel } from '../model/run';
import { StepCommand, Stepper } from '../model/stepper';
import { plural } from '../model/words';
import { ExplorerContext } from '../state/context';
import { append, button, Child, clear, h, section } from '../state/dom';
import { StatePanel } from '../state/panels';

/** What a tab has worked out of a run: its steps, and whatever else it draws. */
export interface StepsModel<Step> {
  steps: Step[];
}

/** A tab's words and classes. */
export interface StepsWords {
  /** the section's class and accessible name */
  className: string;
  label: string;
  /** what the tab says of a run with nothing to walk */
  empty: string;
  /** a step in the stepper's words ("line", "change") */
  unit: string;
  /** the open button: its `data-action`, its text, its title */
  action: string;
  open: string;
  openTitle: string;
}

/** `3 trace ops`, or what stands for none (`none in the trace`). */
export function opsText(ids: readonly number[], side: string, none = `none in the ${side}`): string {
  return ids.length ? plural(ids.length, `${side} op`) : none;
}

export abstract class StepsTab<Model extends StepsModel<Step>, Step> extends StatePanel {
  protected readonly stepped: SteppedPanes;
  private worked: { key: string; model: Model | null } | null = null;
  private current = 0;

  constructor(
    ctx: ExplorerContext,
    private readonly words: StepsWords
  ) {
    super(ctx, h('section', { class: words.className, tabindex: 0, 'aria-label': words.label }), ['run']);
    bindStepKeys(this.element, command => {
      if (!this.model()?.steps.length) {
        return false;
      }
      this.step(command);
      return true;
    });
    this.stepped = new SteppedPanes(this.element, () => {
      this.render();
      this.element.querySelector<HTMLElement>(`[data-action="${words.action}"]`)?.focus();
    });
  }

  /** What the tab works out of `run`; null when the run has nothing for it. */
  protected abstract derive(run: TraceRunModel): Model | null;
  /** The tab's sections for a run it has a model of. */
  protected abstract sections(model: Model): (HTMLElement | null)[];
  /** What the panes show at `step` (undefined: the model has no steps); null when they cannot show it. */
  protected abstract panesContent(model: Model, step: Step | undefined): PanesContent | null;

  /** Whether the run has something to walk (the explorer shows the tab only then). */
  get available(): boolean {
    return this.model() !== null;
  }

  /** The steps (tests read them). */
  get steps(): Step[] {
    return this.model()?.steps ?? [];
  }

  get currentStep(): number {
    return this.current;
  }

  /** The panes on screen, if any. */
  get panes(): ComparePanes | null {
    return this.stepped.panes;
  }

  /** Settles when the panes on screen (if any) show both pictures with the current step marked. */
  get rendered(): Promise<void> {
    return this.stepped.rendered;
  }

  dispose(): void {
    super.dispose();
    this.stepped.dispose();
  }

  /** The run's model, worked out once per run (a new run starts on its first step). */
  protected model(): Model | null {
    const run = this.ctx.run;
    if (!run) {
      return null;
    }
    const key = `${run.runId}:${run.raw.created}`;
    if (this.worked?.key !== key) {
      this.worked = { key, model: this.derive(run) };
      this.current = 0;
    }
    return this.worked.model;
  }

  /** The run's key: panes on screen for another are replaced. */
  protected get key(): string {
    return this.worked?.key ?? '';
  }

  step(command: StepCommand): void {
    this.select(new Stepper(this.steps.length, this.current).step(command));
  }

  /** Make step `index` current and show it in the panes (opening them). */
  select(index: number): void {
    if (index < 0 || index >= this.steps.length) {
      return;
    }
    this.current = index;
    this.stepped.showing = true;
    this.render();
  }

  /** Open or close the panes. */
  toggle(open = !this.stepped.showing): void {
    this.stepped.showing = open;
    this.render();
    if (open) {
      this.stepped.panes?.element.focus();
    }
  }

  render(): void {
    clear(this.element);
    const model = this.model();
    if (!model) {
      append(this.element, h('p', { class: 'jp-TraceExplorer-empty' }, this.words.empty));
      this.stepped.sync(null);
      return;
    }
    append(this.element, ...this.sections(model));
    this.stepped.sync(this.panesContent(model, model.steps[this.current]));
  }

  /** The button that opens the panes, or closes them. */
  protected toggleButton(): HTMLButtonElement {
    const showing = this.stepped.showing;
    return button(showing ? 'close the comparison' : this.words.open, () => this.toggle(), {
      class: 'jp-TraceExplorer-button jp-TraceExplorer-openCompare',
      'data-action': this.words.action,
      'aria-pressed': String(showing),
      title: showing ? 'back to the graph (Esc in the panes)' : this.words.openTitle
    });
  }

  /** The tab's verdict: its words, then the button that opens the panes where they can show something. */
  protected verdictLine(words: Child[], canOpen = true): HTMLElement {
    return h('p', { class: 'jp-TraceExplorer-verdict' }, ...words, ' ', canOpen ? this.toggleButton() : null);
  }

  /** The section that walks the steps under `heading` (the stepper, as `stepper` draws it); null when none. */
  protected stepsSection(
    heading: string,
    card: (step: Step) => HTMLElement,
    item: (step: Step) => { text: string; attributes?: Record<string, string> },
    listClass: string
  ): HTMLElement | null {
    return this.steps.length ? section(heading, ...this.stepper(card, item, listClass)) : null;
  }

  /**
   * The stepper, the current step's card, and every step as a link: `item` gives a step's text and attributes,
   * `listClass` the list's class.
   */
  protected stepper(
    card: (step: Step) => HTMLElement,
    item: (step: Step) => { text: string; attributes?: Record<string, string> },
    listClass: string
  ): HTMLElement[] {
    const steps = this.steps;
    const stepper = new Stepper(steps.length, this.current);
    const unit = this.words.unit;
    return [
      stepperBar(stepper, { unit, label: `${unit} ${stepper.label}`, onStep: command => this.step(command) }),
      card(steps[this.current]),
      h(
        'ol',
        { class: listClass },
        ...steps.map((s, i) => {
          const { text, attributes } = item(s);
          return h(
            'li',
            { class: i === this.current ? 'jp-mod-active' : '', ...attributes },
            button(text, () => this.select(i), { class: 'jp-TraceExplorer-link' })
          );
        })
      )
    ];
  }

  /** A click on an op in the panes marks it and its partner on the other side. */
  protected readonly markPartners = (side: 0 | 1, name: string): void => this.stepped.markPartners(side, name);
}
