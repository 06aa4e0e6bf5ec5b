/**
 * The Guards tab of an export run: what the exported program assumes about its inputs. First the dims that failed,
 * with the fixes that apply (AdviceSection.ts); its symbols (name, range,
 * sources), then its specialisations, guards and runtime asserts (the expression, its kind, the user's line as a
 * link like a warning's place, the line's code), then draft_export's failures. Clicking an assumption marks its
 * nodes in the graph and selects the first. A trace has no such tab (the explorer hides it).
 */

import type { DraftFailure, ExportGuard, ExportSymbol } from '../../model/protocol.generated';
import { plural } from '../../model/words';
import { ExplorerContext } from '../../state/context';
import { append, card, clear, h, location, section } from '../../state/dom';
import { countingTab, StatePanel } from '../../state/panels';
import type { PanelSpec } from '../../state/panels';
import { adviceSection } from './AdviceSection';
import { exportRecords, guardInInputs, guardsModel, rangeText } from './exportReport';

export class GuardsPanel extends StatePanel {
  constructor(ctx: ExplorerContext) {
    super(ctx, h('section', { class: 'jp-TraceExplorer-guards', 'aria-label': 'export guards and symbols' }), [
      'run',
      'selectedNode'
    ]);
    this.render();
  }

  /** The graph the report's node ids index: export records the forward graph's. */
  private get method(): string {
    const run = this.ctx.run;
    return run?.graphs.has('forward') ? 'forward' : (run?.defaultMethod ?? 'forward');
  }

  private symbolsSection(symbols: ExportSymbol[]): HTMLElement {
    const rows = symbols.map(s =>
      h(
        'tr',
        { 'data-symbol': s.name },
        h('td', { class: 'jp-TraceExplorer-mono' }, s.name),
        h('td', { class: 'jp-TraceExplorer-mono' }, rangeText(s)),
        h('td', { class: 'jp-TraceExplorer-mono' }, s.sources.join(', ') || '–'),
        h('td', { class: 'jp-TraceExplorer-muted' }, s.kind === 'unbacked' ? 'data-dependent' : 'input size')
      )
    );
    return section(
      `Symbols (${symbols.length})`,
      symbols.length
        ? h(
            'table',
            { class: 'jp-TraceExplorer-table jp-TraceExplorer-symbols' },
            h(
              'thead',
              {},
              h('tr', {}, h('th', {}, 'symbol'), h('th', {}, 'range'), h('th', {}, 'from'), h('th', {}, 'kind'))
            ),
            h('tbody', {}, ...rows)
          )
        : h('p', { class: 'jp-TraceExplorer-muted' }, 'no symbolic sizes: every shape of the program is static')
    );
  }

  private guardItem(g: ExportGuard, symbols: readonly ExportSymbol[]): HTMLElement {
    const run = this.ctx.run;
    const method = this.method;
    const selected = this.ctx.host.get('selectedNode');
    const clickable = g.node_ids.length > 0;
    return card(
      { class: `jp-TraceExplorer-guard jp-mod-${g.kind}`, 'data-guard-kind': g.kind },
      [
        h('code', { class: 'jp-TraceExplorer-guardExpr' }, g.expr),
        g.file
          ? location(g.file, g.line, run, (file, line) => this.ctx.showPlace(file, line))
          : h('span', { class: 'jp-TraceExplorer-muted' }, 'no line recorded'),
        clickable ? h('span', { class: 'jp-TraceExplorer-muted' }, plural(g.node_ids.length, 'node')) : null
      ],
      [g.code ? h('pre', { class: 'jp-TraceExplorer-code' }, g.code) : null, inputsTerms(g.expr, symbols)],
      clickable
        ? {
            title: 'show its nodes in the graph',
            run: () => this.ctx.markNodes(method, g.node_ids),
            active: g.node_ids.includes(selected) && this.ctx.method === method
          }
        : null
    );
  }

  private draftItem(f: DraftFailure): HTMLElement {
    return card(
      { class: 'jp-TraceExplorer-guard jp-mod-draft', 'data-failure-type': f.failure_type },
      [
        h('strong', {}, f.failure_type.replace(/_/g, ' ')),
        f.expr ? h('code', { class: 'jp-TraceExplorer-guardExpr' }, f.expr) : null,
        f.file ? location(f.file, f.line, this.ctx.run, (file, line) => this.ctx.showPlace(file, line)) : null
      ],
      [f.message ? h('pre', { class: 'jp-TraceExplorer-code jp-TraceExplorer-detail' }, f.message) : null]
    );
  }

  render(): void {
    clear(this.element);
    const report = exportRecords(this.ctx.run?.raw);
    const model = guardsModel(report);
    if (!model) {
      append(this.element, h('p', { class: 'jp-TraceExplorer-muted' }, 'guards are recorded by torch.export runs'));
      return;
    }
    append(this.element, adviceSection(report, this.ctx), this.symbolsSection(model.symbols));
    for (const section of model.sections) {
      append(
        this.element,
        h(
          'div',
          { class: 'jp-TraceExplorer-section', 'data-section': section.kind },
          h('h4', { title: section.what }, `${section.title} (${section.guards.length})`),
          h('p', { class: 'jp-TraceExplorer-muted' }, section.what),
          h('ul', { class: 'jp-TraceExplorer-list' }, ...section.guards.map(g => this.guardItem(g, model.symbols)))
        )
      );
    }
    if (!model.sections.length) {
      append(
        this.element,
        h(
          'p',
          { class: 'jp-TraceExplorer-muted' },
          'no guards: the program holds for every size in its symbols’ ranges'
        )
      );
    }
    if (model.draft !== null) {
      append(
        this.element,
        h(
          'div',
          { class: 'jp-TraceExplorer-section', 'data-section': 'draft' },
          h('h4', {}, `draft_export (${model.draft.length})`),
          model.draft.length
            ? h('ul', { class: 'jp-TraceExplorer-list' }, ...model.draft.map(f => this.draftItem(f)))
            : h('p', { class: 'jp-TraceExplorer-muted' }, 'draft_export reported nothing')
        )
      );
    }
  }
}

/** The Guards tab: a back end that records guards adds it (the registry row's `tabs`), counting what it lists. */
export const GUARDS_PANEL: PanelSpec<GuardsPanel> = countingTab({
  id: 'guards',
  title: 'Guards',
  create: ctx => new GuardsPanel(ctx),
  count: run => guardsModel(exportRecords(run.raw))?.count ?? 0
});

/** "on the inputs: Eq(attention_mask.size()[1], input_ids.size()[1])", or nothing when no symbol has a source. */
function inputsTerms(expr: string, symbols: readonly ExportSymbol[]): HTMLElement | null {
  const spelled = guardInInputs(expr, symbols);
  return spelled
    ? h(
        'div',
        { class: 'jp-TraceExplorer-muted jp-TraceExplorer-guardInputs' },
        'on the inputs: ',
        h('code', {}, spelled)
      )
    : null;
}
