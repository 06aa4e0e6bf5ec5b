/**
 * The "Trace vs export" tab of an export run made with `compare_trace=True` (`run.compared`): how much of the
 * trace the export matched and the differences counted per reason, then a stepper through the source lines where
 * they differ (the code, each reason in words and in full). The two graphs are shown side by side over the graph
 * area in the comparison panes ("trace" and "export", moving together), stepped as the Diff tab steps
 * (panes/StepsTab.ts): each step marks its line's ops in both and brings them into view, and a click on an op
 * marks its partner on the other side. The model (steps, words, coverage, pictures) is traceVsExport.ts.
 */

import { PanesContent } from '../../panes/SteppedPanes';
import { opsText, StepsTab } from '../../panes/StepsTab';
import { addsTab } from '../../model/backends';
import { decodeGraph, TraceGraph } from '../../model/graph';
import type { TraceComparison } from '../../model/protocol.generated';
import { TraceRunModel } from '../../model/run';
import { ExplorerContext } from '../../state/context';
import { h, location } from '../../state/dom';
import type { PanelSpec } from '../../state/panels';
import { capturePictures, Coverage, coverage, LineStep, lineSteps, ReasonCount, reasonCounts } from './traceVsExport';

interface Compared {
  compared: TraceComparison;
  steps: LineStep[];
  coverage: Coverage;
  counts: ReasonCount[];
  trace: TraceGraph;
  exported: TraceGraph;
}

export class TraceVsExportPanel extends StepsTab<Compared, LineStep> {
  constructor(ctx: ExplorerContext) {
    super(ctx, {
      className: 'jp-TraceExplorer-traceVsExport',
      label: 'trace versus export',
      empty: 'Export with compare_trace=True to compare the export with a trace of the same model.',
      unit: 'line',
      action: 'trace-vs-export',
      open: 'trace ↔ export side by side',
      openTitle: "the trace's graph and the export's side by side over the graph area; they follow the stepper"
    });
    this.render();
  }

  /** The run's comparison; null when it has none (or no export graph). */
  protected derive(run: TraceRunModel): Compared | null {
    const compared = run.raw.compared;
    const exported = run.defaultMethod ? run.graphs.get(run.defaultMethod) : undefined;
    if (!compared || !exported) {
      return null;
    }
    return {
      compared,
      steps: lineSteps(compared.comparison),
      coverage: coverage(compared.comparison),
      counts: reasonCounts(compared.comparison),
      trace: decodeGraph(compared.trace),
      exported
    };
  }

  protected sections(cmp: Compared): (HTMLElement | null)[] {
    const coverageSection = h(
      'div',
      { class: 'jp-TraceExplorer-section jp-TraceExplorer-coverage' },
      this.verdictLine([h('span', { class: 'jp-TraceExplorer-coverageText' }, cmp.coverage.text)]),
      h(
        'p',
        { class: 'jp-TraceExplorer-muted' },
        (cmp.coverage.uncounted ? `${cmp.coverage.uncounted}. ` : '') +
          `${cmp.coverage.exportOps} export ops; the trace: ${cmp.compared.trace_summary}`
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
    );
    const stepsSection = this.stepsSection(
      'Where they differ, line by line',
      step => this.stepCard(step),
      s => ({ text: `${this.placeText(s)}: ${s.reasons.map(r => r.words).join(', ')}` }),
      'jp-TraceExplorer-lineSteps'
    );
    return [coverageSection, stepsSection];
  }

  private placeText(step: LineStep): string {
    return step.file ? (this.ctx.run?.locationLabel(step.file, step.line) ?? '') : '(no source line)';
  }

  /** The current line: where, its code, and each reason in words and in full with its ops per side. */
  private stepCard(step: LineStep): HTMLElement {
    const showPlace = (file: string, line: number): void => void this.ctx.showPlace(file, line);
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

  protected panesContent(cmp: Compared, step: LineStep | undefined): PanesContent {
    const fileNames = this.ctx.run?.fileNames;
    return {
      key: this.key,
      title: `trace ↔ export: ${cmp.coverage.text}`,
      labels: ['trace', 'export'],
      pictures: () => capturePictures(cmp.trace, cmp.exported, cmp.compared, fileNames),
      step: step ? [step.traceNodes, step.exportNodes] : null,
      onNode: this.markPartners
    };
  }
}

/** The "Trace vs export" tab: an export made with compare_trace=True carries the comparison. */
export const TRACE_VS_EXPORT_PANEL: PanelSpec<TraceVsExportPanel> = {
  id: 'traceVsExport',
  title: 'Trace vs export',
  create: ctx => new TraceVsExportPanel(ctx),
  applies: (run, panel) => addsTab(run?.raw, 'traceVsExport') && panel.available,
  keepsSelection: true
};
