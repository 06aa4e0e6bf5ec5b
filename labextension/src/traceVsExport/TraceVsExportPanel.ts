/**
 * The "Trace vs export" tab of an export run made with `compare_trace=True` (`run.compared`): how much of the
 * trace the export matched and the differences counted per reason, then a stepper through the source lines where
 * they differ (the code, each reason in words and in full). The two graphs are shown side by side over the graph
 * area in the check's comparison panes (check/ComparePanes.ts: "trace" and "export", moving together); each step
 * marks its line's ops in both and brings them into view, and a click on an op marks its partner on the other side.
 * The model (steps, words, coverage, pictures) is model/traceVsExport.ts.
 */

import { ComparePanes } from '../check/ComparePanes';
import { decodeGraph, TraceGraph } from '../model/graph';
import { STEP_KEYS, StepCommand, Stepper } from '../model/stepper';
import {
  CapturePictures,
  capturePictures,
  Coverage,
  coverage,
  LineStep,
  lineSteps,
  ReasonCount,
  reasonCounts
} from '../model/traceVsExport';
import { ExplorerContext } from '../state/context';
import { append, button, clear, h, location } from '../state/dom';

/** The class a step's ops get in the panes; a picked op and its partner get the graph's `selected`. */
const STEP_CLASS = 'step';
const LINKED_CLASS = 'selected';

interface Compared {
  /** the run it belongs to: a new run starts over */
  key: string;
  steps: LineStep[];
  coverage: Coverage;
  counts: ReasonCount[];
  trace: TraceGraph;
  exported: TraceGraph;
  title: string;
  /** drawn when the panes first open (a layout of both graphs) */
  pictures: CapturePictures | null;
}

export class TraceVsExportPanel {
  readonly element: HTMLElement;
  /** Settles when the panes on screen (if any) show both pictures with the current step marked. */
  rendered: Promise<void> = Promise.resolve();
  /** The panes on screen, if any. */
  panes: ComparePanes | null = null;
  private compared: Compared | null = null;
  /** the run whose pictures the panes show */
  private panesKey = '';
  private current = 0;
  /** the panes are wanted (opened by the button or a step; closed by close, Esc or the button) */
  private showing = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly ctx: ExplorerContext) {
    this.element = h('section', {
      class: 'jp-TraceExplorer-traceVsExport',
      tabindex: 0,
      'aria-label': 'trace versus export'
    });
    this.element.addEventListener('keydown', e => {
      const target = e.target as HTMLElement;
      if (target.tagName === 'SELECT' || target.tagName === 'INPUT') {
        return;
      }
      const command = STEP_KEYS[e.key];
      if (command && this.compared?.steps.length) {
        e.preventDefault();
        this.step(command);
      }
    });
    this.unsubscribe = ctx.onChange(keys => {
      if (keys.has('run')) {
        this.render();
      }
    });
    this.render();
  }

  /** Whether the run carries a comparison (the explorer shows the tab only then). */
  get available(): boolean {
    return this.model() !== null;
  }

  /** The steps of the run's comparison (tests read them). */
  get steps(): LineStep[] {
    return this.model()?.steps ?? [];
  }

  get currentStep(): number {
    return this.current;
  }

  dispose(): void {
    this.unsubscribe();
    this.panes?.dispose();
  }

  /** The run's comparison, worked out once per run; null when it has none (or no export graph). */
  private model(): Compared | null {
    const run = this.ctx.run;
    const compared = run?.raw.compared;
    const method = run?.defaultMethod;
    const exported = method ? run?.graphs.get(method) : undefined;
    if (!run || !compared || !exported) {
      return null;
    }
    const key = `${run.runId}:${run.raw.created}`;
    if (this.compared?.key !== key) {
      const cov = coverage(compared.comparison);
      this.compared = {
        key,
        steps: lineSteps(compared.comparison),
        coverage: cov,
        counts: reasonCounts(compared.comparison),
        trace: decodeGraph(compared.trace),
        exported,
        title: `trace ↔ export: ${cov.text}`,
        pictures: null
      };
      this.current = 0;
    }
    return this.compared;
  }

  step(command: StepCommand): void {
    const steps = this.steps;
    const stepper = new Stepper(steps.length, this.current);
    this.select(stepper.step(command));
  }

  /** Make step `index` current and show it in the panes (opening them). */
  select(index: number): void {
    if (index < 0 || index >= this.steps.length) {
      return;
    }
    this.current = index;
    this.showing = true;
    this.render();
  }

  /** Open or close the panes. */
  toggle(open = !this.showing): void {
    this.showing = open;
    this.render();
    if (open) {
      this.panes?.element.focus();
    }
  }

  render(): void {
    clear(this.element);
    const cmp = this.model();
    if (!cmp) {
      append(
        this.element,
        h(
          'p',
          { class: 'jp-TraceExplorer-empty' },
          'Export with compare_trace=True to compare the export with a trace of the same model.'
        )
      );
      this.syncPanes();
      return;
    }
    const run = this.ctx.run!;
    const toggle = button(this.showing ? 'close the comparison' : 'trace ↔ export side by side', () => this.toggle(), {
      class: 'jp-TraceExplorer-button jp-TraceExplorer-openCompare',
      'data-action': 'trace-vs-export',
      'aria-pressed': String(this.showing),
      title: this.showing
        ? 'back to the graph (Esc in the panes)'
        : "the trace's graph and the export's side by side over the graph area; they follow the stepper"
    });
    append(
      this.element,
      h(
        'div',
        { class: 'jp-TraceExplorer-section jp-TraceExplorer-coverage' },
        h(
          'p',
          { class: 'jp-TraceExplorer-verdict' },
          h('span', { class: 'jp-TraceExplorer-coverageText' }, cmp.coverage.text),
          ' ',
          toggle
        ),
        h(
          'p',
          { class: 'jp-TraceExplorer-muted' },
          `${cmp.coverage.exportOps} export ops; the trace: ${run.raw.compared!.trace_summary}`
        ),
        cmp.counts.length
          ? h(
              'ul',
              { class: 'jp-TraceExplorer-reasonCounts' },
              ...cmp.counts.map(c =>
                h('li', { class: 'jp-TraceExplorer-chip', 'data-reason': c.reason, title: c.text }, c.text)
              )
            )
          : h('p', {}, 'Every op of the trace has its counterpart in the export.')
      )
    );
    if (cmp.steps.length) {
      append(this.element, this.stepperSection(cmp));
    }
    this.syncPanes();
  }

  private stepperSection(cmp: Compared): HTMLElement {
    const stepper = new Stepper(cmp.steps.length, this.current);
    const nav = (command: StepCommand, text: string, what: string, key: string): HTMLButtonElement =>
      button(text, () => this.step(command), {
        title: `${what} line (${key})`,
        'aria-label': `${what} line`,
        disabled: !stepper.canStep(command)
      });
    const step = cmp.steps[this.current];
    const showPlace = (file: string, line: number): void => void this.ctx.showPlace(file, line);
    return h(
      'div',
      { class: 'jp-TraceExplorer-section' },
      h('h4', {}, 'Where they differ, line by line'),
      h(
        'div',
        { class: 'jp-TraceExplorer-stepper', role: 'toolbar', 'aria-label': 'line stepper' },
        nav('first', '«', 'first', 'Home'),
        nav('previous', '‹', 'previous', '← or k'),
        h('span', { class: 'jp-TraceExplorer-stepLabel', 'aria-live': 'polite' }, `line ${stepper.label}`),
        nav('next', '›', 'next', '→ or j'),
        nav('last', '»', 'last', 'End')
      ),
      this.stepCard(step, showPlace),
      h(
        'ol',
        { class: 'jp-TraceExplorer-lineSteps' },
        ...cmp.steps.map((s, i) =>
          h(
            'li',
            { class: i === this.current ? 'jp-mod-active' : '' },
            button(`${this.placeText(s)}: ${s.reasons.map(r => r.words).join(', ')}`, () => this.select(i), {
              class: 'jp-TraceExplorer-link'
            })
          )
        )
      )
    );
  }

  private placeText(step: LineStep): string {
    return step.file ? (this.ctx.run?.locationLabel(step.file, step.line) ?? '') : '(no source line)';
  }

  /** The current line: where, its code, and each reason in words and in full with its ops per side. */
  private stepCard(step: LineStep, showPlace: (file: string, line: number) => void): HTMLElement {
    return h(
      'div',
      { class: 'jp-TraceExplorer-lineStep' },
      h(
        'div',
        { class: 'jp-TraceExplorer-causeHead' },
        step.file
          ? location(step.file, step.line, this.ctx.run, showPlace)
          : h('span', { class: 'jp-TraceExplorer-muted' }, "(no source line: torch's own code)")
      ),
      step.code ? h('pre', { class: 'jp-TraceExplorer-code' }, step.code) : null,
      h(
        'ul',
        { class: 'jp-TraceExplorer-because-list' },
        ...step.reasons.map(r =>
          h(
            'li',
            { class: 'jp-TraceExplorer-because', 'data-reason': r.reason },
            h('strong', {}, r.words),
            h(
              'span',
              { class: 'jp-TraceExplorer-muted' },
              ` · ${opsText(r.traceNodes, 'trace')}, ${opsText(r.exportNodes, 'export')}`
            ),
            h('p', { class: 'jp-TraceExplorer-message' }, r.detail)
          )
        )
      )
    );
  }

  /** Put the panes on screen (or take them off) and mark the current step in them. */
  private syncPanes(): void {
    const cmp = this.showing ? this.model() : null;
    if (!cmp) {
      this.panes?.dispose();
      this.panes = null;
      this.rendered = Promise.resolve();
      return;
    }
    if (this.panes && this.panesKey !== cmp.key) {
      // a new run (a re-export) on screen: its pictures, not the last run's
      this.panes.dispose();
      this.panes = null;
    }
    if (!this.panes) {
      const graphArea = this.element.closest('.jp-TraceExplorer-root')?.querySelector('.jp-TraceExplorer-graph');
      if (!graphArea) {
        return;
      }
      const run = this.ctx.run!;
      cmp.pictures ??= capturePictures(cmp.trace, cmp.exported, run.raw.compared!, run.fileNames);
      const pictures = cmp.pictures;
      // a matched pair has one name in both pictures: a click on either marks both
      const link = (names: Map<string, number>, side: 0 | 1) => (name: string) => {
        const paired = name.startsWith('p');
        const own = names.has(name) ? [name] : [];
        panes.mark(LINKED_CLASS, side === 0 ? [own, paired ? [name] : []] : [paired ? [name] : [], own]);
      };
      const panes = new ComparePanes(
        cmp.title,
        [
          { label: 'trace', dot: pictures.traceDot, onNode: link(pictures.traceNames, 0) },
          { label: 'export', dot: pictures.exportDot, onNode: link(pictures.exportNames, 1) }
        ],
        () => {
          if (this.panes === panes) {
            this.panes = null;
            this.showing = false;
            this.render();
            this.element.querySelector<HTMLElement>('[data-action="trace-vs-export"]')?.focus();
          }
        }
      );
      this.panes = panes;
      this.panesKey = cmp.key;
      panes.showIn(graphArea);
    }
    const panes = this.panes;
    const step = cmp.steps[this.current];
    const pictures = cmp.pictures!;
    this.rendered = panes.rendered.then(() => {
      if (this.panes === panes && step) {
        panes.mark(
          STEP_CLASS,
          [step.traceNodes.map(pictures.traceName), step.exportNodes.map(pictures.exportName)],
          true
        );
      }
    });
  }
}

function opsText(ids: number[], side: string): string {
  return ids.length ? `${ids.length} ${side} op${ids.length === 1 ? '' : 's'}` : `none in the ${side}`;
}
