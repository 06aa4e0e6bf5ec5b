/**
 * The "Recompilations" tab of a torch.compile run: per call (the example inputs, then each of `calls`), the inputs,
 * the graphs it compiled, and each guard that failed for it, in the inputs' terms (`x.size()[0] was 2, now 3`) with
 * the line that uses the guarded value (a link that finds its nodes), the usual fix and torch's own words. A click on
 * a recompilation shows the graph it compiled. A function torch gave up on after its recompile limit heads the tab:
 * torch runs it eagerly from then on, without a word.
 */

import type { CompileReport, Recompilation } from '../../model/protocol.generated';
import { ExplorerContext } from '../../state/context';
import { append, card, clear, fixHint, h, location } from '../../state/dom';
import { countingTab, StatePanel } from '../../state/panels';
import type { PanelSpec } from '../../state/panels';
import { CallRow, compileRecords, compiledText, recompiledRegion, recompilesModel } from './compileReport';

export class RecompilationsPanel extends StatePanel {
  constructor(ctx: ExplorerContext) {
    super(ctx, h('section', { class: 'jp-TraceExplorer-recompilations', 'aria-label': 'recompilations' }), [
      'run',
      'selectedMethod'
    ]);
    this.render();
  }

  private item(report: CompileReport, r: Recompilation): HTMLElement {
    const region = recompiledRegion(report, r);
    const showGraph = (): void => {
      if (region) {
        this.ctx.host.set({ selectedMethod: region.graph, selectedNode: -1 });
      }
    };
    return card(
      { class: `jp-TraceExplorer-guard jp-mod-${r.kind}`, 'data-recompile-kind': r.kind },
      [
        h('code', { class: 'jp-TraceExplorer-guardExpr' }, r.reason),
        r.file
          ? location(r.file, r.line, this.ctx.run, (file, line) => {
              showGraph();
              this.ctx.showPlace(file, line);
            })
          : h('span', { class: 'jp-TraceExplorer-muted' }, 'no line recorded'),
        h('span', { class: 'jp-TraceExplorer-chip', title: 'what kind of guard failed' }, r.kind.replace('_', ' '))
      ],
      [
        r.code ? h('pre', { class: 'jp-TraceExplorer-code' }, r.code) : null,
        h(
          'p',
          { class: 'jp-TraceExplorer-muted' },
          `${r.func} compiled again` +
            (region ? ` as ${region.graph}` : '') +
            (r.compile_id ? ` (torch's ${r.compile_id})` : '')
        ),
        fixHint(r.hint),
        h(
          'details',
          {},
          h('summary', {}, "torch's words"),
          h('pre', { class: 'jp-TraceExplorer-code jp-TraceExplorer-detail' }, r.torch_reason)
        )
      ],
      region
        ? {
            title: `show ${region.graph}, the graph it compiled`,
            run: showGraph,
            active: this.ctx.method === region.graph
          }
        : null
    );
  }

  private callSection(report: CompileReport, row: CallRow): HTMLElement {
    return h(
      'div',
      { class: 'jp-TraceExplorer-section', 'data-call': String(row.call) },
      h('h4', {}, row.label),
      h('p', { class: 'jp-TraceExplorer-muted' }, compiledText(row)),
      row.recompilations.length
        ? h('ul', { class: 'jp-TraceExplorer-list' }, ...row.recompilations.map(r => this.item(report, r)))
        : row.call > 0
          ? h('p', { class: 'jp-TraceExplorer-muted' }, 'no guard failed: it ran the graphs compiled before')
          : null
    );
  }

  render(): void {
    clear(this.element);
    const report = compileRecords(this.ctx.run?.raw);
    const run = this.ctx.run;
    const model = run ? recompilesModel(report, run.raw) : null;
    if (!report || !model) {
      append(
        this.element,
        h('p', { class: 'jp-TraceExplorer-muted' }, 'recompilations are recorded by torch.compile runs')
      );
      return;
    }
    for (const limit of model.limits) {
      append(
        this.element,
        h(
          'p',
          { class: 'jp-TraceExplorer-verdict jp-mod-limit', 'data-limit': 'true' },
          h('strong', {}, 'Recompile limit: '),
          limit
        )
      );
    }
    append(
      this.element,
      h(
        'p',
        { class: 'jp-TraceExplorer-verdict' },
        model.count
          ? `${model.count} recompilation${model.count === 1 ? '' : 's'} over ${model.calls.length} calls`
          : model.calls.length > 1
            ? `no recompilation: every call after the first ran the graphs compiled for it`
            : 'one call: pass calls=[...] (--calls) to see what further inputs recompile'
      ),
      ...model.calls.map(row => this.callSection(report, row))
    );
  }
}

/** The "Recompilations" tab: a back end that records recompilations adds it (its row's `tabs`), counting them. */
export const RECOMPILATIONS_PANEL: PanelSpec<RecompilationsPanel> = countingTab({
  id: 'recompilations',
  title: 'Recompilations',
  create: ctx => new RecompilationsPanel(ctx),
  count: run => compileRecords(run.raw)?.recompilations.length ?? 0,
  // recompilations without a break open here (a break opens the Graph breaks tab first)
  opensAt: 1.6
});
