/**
 * The "Trace vs export" tab of an export run made with `compare_trace=True` (`run.compared`): how much of the
 * trace the export matched and the differences counted per reason, then a stepper through the source lines where
 * they differ (the code, each reason in words and in full). The two graphs are shown side by side over the graph
 * area in the check's comparison panes ("trace" and "export", moving together), stepped as the Diff tab steps
 * (check/SteppedPanes.ts): each step marks its line's ops in both and brings them into view, and a click on an op
 * marks its partner on the other side. The model (steps, words, coverage, pictures) is model/traceVsExport.ts.
 */

import { ComparePanes } from '../check/ComparePanes';
import { bindStepKeys, PanesContent, SteppedPanes, stepperBar } from '../check/SteppedPanes';
import { decodeGraph, TraceGraph } from '../model/graph';
import { StepCommand, Stepper } from '../model/stepper';
import {
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
import { plural } from '../model/words';

interface Compared {
  /** the run it belongs to: a new run starts over */
  key: string;
  steps: LineStep[];
  coverage: Coverage;
  counts: ReasonCount[];
  trace: TraceGraph;
  exported: TraceGraph;
  title: string;
}

export class TraceVsExportPanel {
  readonly element: HTMLElement;
  private readonly stepped: SteppedPanes;
  private compared: Compared | null = null;
  private current = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly ctx: ExplorerContext) {
    this.element = h('section', {
      class: 'jp-TraceExplorer-traceVsExport',
      tabindex: 0,
      'aria-label': 'trace versus export'
    });
    bindStepKeys(this.element, command => {
      if (!this.compared?.steps.length) {
        return false;
      }
      this.step(command);
      return true;
    });
    this.stepped = new SteppedPanes(this.element, () => {
      this.render();
      this.element.querySelector<HTMLElement>('[data-action="trace-vs-export"]')?.focus();
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

  /** The panes on screen, if any. */
  get panes(): ComparePanes | null {
    return this.stepped.panes;
  }

  /** Settles when the panes on screen (if any) show both pictures with the current step marked. */
  get rendered(): Promise<void> {
    return this.stepped.rendered;
  }

  dispose(): void {
    this.unsubscribe();
    this.stepped.dispose();
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
        title: `trace ↔ export: ${cov.text}`
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
    this.stepped.showing = true;
    this.render();
  }

  /** Open or close the panes. */
  toggle(open = !this.stepped.showing): void {
    this.stepped.showing = open;
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
    const showing = this.stepped.showing;
    const toggle = button(showing ? 'close the comparison' : 'trace ↔ export side by side', () => this.toggle(), {
      class: 'jp-TraceExplorer-button jp-TraceExplorer-openCompare',
      'data-action': 'trace-vs-export',
      'aria-pressed': String(showing),
      title: showing
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
          (cmp.coverage.uncounted ? `${cmp.coverage.uncounted}. ` : '') +
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
    const step = cmp.steps[this.current];
    const showPlace = (file: string, line: number): void => void this.ctx.showPlace(file, line);
    return h(
      'div',
      { class: 'jp-TraceExplorer-section' },
      h('h4', {}, 'Where they differ, line by line'),
      stepperBar(stepper, 'line', `line ${stepper.label}`, command => this.step(command)),
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
    const cmp = this.model();
    this.stepped.sync(cmp && this.panesContent(cmp));
  }

  private panesContent(cmp: Compared): PanesContent {
    const step = cmp.steps[this.current];
    return {
      key: cmp.key,
      title: cmp.title,
      labels: ['trace', 'export'],
      pictures: () => capturePictures(cmp.trace, cmp.exported, this.ctx.run!.raw.compared!, this.ctx.run!.fileNames),
      step: step ? [step.traceNodes, step.exportNodes] : null
    };
  }
}

function opsText(ids: number[], side: string): string {
  return ids.length ? plural(ids.length, `${side} op`) : `none in the ${side}`;
}
