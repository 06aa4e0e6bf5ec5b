/**
 * The trace explorer: header (verdict badge, what was traced, counts, full screen), options bar, then the graph
 * and the tabs (inspector, warnings & findings, check & divergences; an export's guards and its comparison with a
 * trace; a displayed tj.diff's changes against the old run) with a splitter between them; on a narrow
 * output the tabs go below the graph. The same component serves the live widget, the kernel-free MIME renderer
 * and the offline report; only the host differs.
 */

import { CheckPanel } from '../check/CheckPanel';
import { GuardsPanel } from '../guards/GuardsPanel';
import { addsTab, backendLabel, backendTitle } from '../model/backends';
import { DRAFT_GRAPH_NOTE, exportRecords, guardsModel, showsDraftGraph } from '../model/exportReport';
import { OptionsBar } from '../controls/OptionsBar';
import { GraphView, MARK_STATE } from '../graph/GraphView';
import { Inspector } from '../inspector/Inspector';
import { WarningsPanel } from '../warnings/WarningsPanel';
import { headerFacts, plural } from '../model/run';
import { ExplorerContext } from '../state/context';
import { append, clear, h, withCode } from '../state/dom';
import { ExplorerHost } from '../state/host';
import { FullScreen } from './fullscreen';
import { Splitter } from './splitter';
import { TraceVsExportPanel } from '../traceVsExport/TraceVsExportPanel';
import { DiffPanel } from '../diff/DiffPanel';

type TabName = 'inspector' | 'warnings' | 'check' | 'guards' | 'traceVsExport' | 'diff';

/** Below this width (px) the side panel goes under the graph (a 1024 px window with the file browser open). */
export const STACK_BELOW_PX = 760;

export class Explorer {
  readonly element: HTMLElement;
  readonly ctx: ExplorerContext;
  readonly graph: GraphView;
  readonly inspector: Inspector;
  readonly warnings: WarningsPanel;
  readonly check: CheckPanel;
  /** The Guards tab's panel; its tab is shown for export runs only. */
  readonly guards: GuardsPanel;
  /** The "Trace vs export" tab's panel; its tab is shown for export runs made with compare_trace=True only. */
  readonly traceVsExport: TraceVsExportPanel;
  /** The "Diff" tab's panel; its tab is shown for a run displayed as the new side of tj.diff(old, new) only. */
  readonly diff: DiffPanel;
  readonly options: OptionsBar;
  readonly splitter: Splitter;
  readonly fullScreen: FullScreen;
  private readonly header: HTMLElement;
  private readonly fullScreenButton: HTMLButtonElement;
  private readonly tabs = new Map<TabName, { tab: HTMLButtonElement; panel: HTMLElement }>();
  private active: TabName = 'inspector';
  private readonly unsubscribe: () => void;
  private readonly resizeObserver: ResizeObserver;

  constructor(host: ExplorerHost) {
    performance.mark(MARK_STATE);
    this.ctx = new ExplorerContext(host);
    this.header = h('div', { class: 'jp-TraceExplorer-header' });
    this.options = new OptionsBar(this.ctx);
    this.graph = new GraphView(this.ctx);
    this.graph.onNodeClicked = () => this.showTab('inspector');
    this.ctx.searchGraph = query => this.graph.search(query);
    this.ctx.repaintGraph = () => this.graph.applyHighlights();
    this.inspector = new Inspector(this.ctx);
    this.warnings = new WarningsPanel(this.ctx);
    this.check = new CheckPanel(this.ctx);
    this.guards = new GuardsPanel(this.ctx);
    this.traceVsExport = new TraceVsExportPanel(this.ctx);
    this.diff = new DiffPanel(this.ctx);
    const tabList = h('div', { class: 'jp-TraceExplorer-tabs', role: 'tablist' });
    const panels = h('div', { class: 'jp-TraceExplorer-panels' });
    const add = (name: TabName, title: string, panel: HTMLElement): void => {
      const tab = h(
        'button',
        { type: 'button', role: 'tab', class: 'jp-TraceExplorer-tab', 'data-tab': name },
        title
      ) as HTMLButtonElement;
      tab.addEventListener('click', () => this.showTab(name));
      tab.addEventListener('keydown', e => {
        const names = [...this.tabs.keys()].filter(n => !this.tabs.get(n)!.tab.hidden);
        const i = names.indexOf(name);
        if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
          e.preventDefault();
          const next = names[(i + (e.key === 'ArrowRight' ? 1 : names.length - 1)) % names.length];
          this.showTab(next);
          this.tabs.get(next)!.tab.focus();
        }
      });
      const wrapper = h('div', { role: 'tabpanel', class: 'jp-TraceExplorer-panel', 'data-panel': name }, panel);
      tabList.appendChild(tab);
      panels.appendChild(wrapper);
      this.tabs.set(name, { tab, panel: wrapper });
    };
    add('inspector', 'Inspector', this.inspector.element);
    add('warnings', 'Warnings', this.warnings.element);
    add('check', 'Check', this.check.element);
    add('guards', 'Guards', this.guards.element);
    add('traceVsExport', 'Trace vs export', this.traceVsExport.element);
    add('diff', 'Diff', this.diff.element);
    const side = h('div', { class: 'jp-TraceExplorer-sidebar' }, tabList, panels);
    const main = h('div', { class: 'jp-TraceExplorer-main' });
    this.splitter = new Splitter(main);
    append(main, this.graph.element, this.splitter.element, side);
    this.element = h('div', { class: 'jp-TraceExplorer-root' }, this.header, this.options.element, main);

    this.fullScreenButton = h(
      'button',
      {
        type: 'button',
        class: 'jp-TraceExplorer-button jp-TraceExplorer-fullScreen',
        'aria-pressed': 'false',
        title: 'fill the window with the explorer (Esc leaves)'
      },
      'full screen'
    ) as HTMLButtonElement;
    this.fullScreen = new FullScreen(this.element, active => {
      this.fullScreenButton.setAttribute('aria-pressed', String(active));
      this.fullScreenButton.textContent = active ? 'exit full screen' : 'full screen';
      this.fullScreenButton.title = active
        ? 'back to the notebook (Esc)'
        : 'fill the window with the explorer (Esc leaves)';
      this.fullScreenButton.focus();
    });
    this.fullScreenButton.addEventListener('click', () => this.fullScreen.toggle());

    // stack the side panel under the graph when the output is narrow; side by side again when it widens
    this.resizeObserver = new ResizeObserver(() => this.updateStacking());
    this.resizeObserver.observe(this.element);

    this.unsubscribe = this.ctx.onChange(keys => {
      if (keys.has('run')) {
        performance.mark(MARK_STATE);
        this.renderHeader();
      }
      if (
        keys.has('selectedNode') &&
        this.ctx.host.get('selectedNode') >= 0 &&
        ['warnings', 'guards', 'traceVsExport', 'diff'].includes(this.active)
      ) {
        return; // keep the list in view while walking its warnings (or an export's guards, or its lines)
      }
      if (keys.has('selectedNode') && this.ctx.host.get('selectedNode') >= 0 && this.active !== 'check') {
        this.showTab('inspector');
      }
      if (keys.has('currentDivergence') && this.ctx.host.get('currentDivergence') >= 0) {
        this.showTab('check');
      }
    });
    this.renderHeader();
    const run = this.ctx.run;
    // a displayed diff opens on what changed; a run, on what went wrong first
    this.showTab(
      this.diff.available
        ? 'diff'
        : run && run.cases.some(c => !c.ok)
          ? 'check'
          : run && run.verdict.level === 'warning'
            ? 'warnings'
            : 'inspector'
    );
  }

  dispose(): void {
    this.fullScreen.leave();
    this.resizeObserver.disconnect();
    this.unsubscribe();
    (this.ctx.host as { dispose?: () => void }).dispose?.();
    this.graph.dispose();
    this.inspector.dispose();
    this.warnings.dispose();
    this.check.dispose();
    this.guards.dispose();
    this.traceVsExport.dispose();
    this.diff.dispose();
    this.options.dispose();
  }

  showTab(name: TabName): void {
    this.active = name;
    for (const [n, { tab, panel }] of this.tabs) {
      const on = n === name;
      tab.setAttribute('aria-selected', String(on));
      tab.tabIndex = on ? 0 : -1;
      tab.classList.toggle('jp-mod-active', on);
      panel.hidden = !on;
    }
  }

  /** Whether the side panel is under the graph (a narrow output). */
  get stacked(): boolean {
    return this.element.classList.contains('jp-mod-stacked');
  }

  private updateStacking(): void {
    const width = this.element.clientWidth;
    if (width === 0) {
      return; // not on screen (a hidden tab): keep the layout it had
    }
    const stacked = width < STACK_BELOW_PX;
    if (stacked !== this.stacked) {
      this.element.classList.toggle('jp-mod-stacked', stacked);
      this.splitter.setStacked(stacked);
    }
  }

  private renderHeader(): void {
    clear(this.header);
    const run = this.ctx.run;
    // no graph to show (tracing failed): no empty graph pane; the error is in the header, the tabs keep what they
    // have (the warnings raised before it failed); a re-trace that works brings the graph back
    this.element.classList.toggle('jp-mod-noGraph', run !== null && run.graphs.size === 0);
    // a failed export's draft graph: the graph area says so too (it is not a program that export accepted)
    this.graph.element.classList.toggle('jp-mod-draft', showsDraftGraph(run?.raw));
    const tools = h('span', { class: 'jp-TraceExplorer-headerTools' }, this.fullScreenButton);
    const guardsTab = this.tabs.get('guards')?.tab;
    if (guardsTab) {
      guardsTab.hidden = !addsTab(run?.raw, 'guards'); // a back end that records guards (export) adds it
    }
    const compareTab = this.tabs.get('traceVsExport')?.tab;
    if (compareTab) {
      compareTab.hidden = !this.traceVsExport.available; // export runs made with compare_trace=True only
      if (compareTab.hidden && this.active === 'traceVsExport') {
        this.showTab('inspector');
      }
    }
    const diffTab = this.tabs.get('diff')?.tab;
    if (diffTab) {
      diffTab.hidden = !this.diff.available; // a displayed tj.diff only
      if (diffTab.hidden && this.active === 'diff') {
        this.showTab('inspector');
      }
    }
    if (!run) {
      append(this.header, h('span', { class: 'jp-TraceExplorer-summary' }, this.ctx.error ?? 'no trace yet'), tools);
      return;
    }
    const verdict = run.verdict;
    const error = run.error;
    const why = verdict.reasons.join('\n');
    append(
      this.header,
      h(
        'span',
        {
          class: `jp-TraceExplorer-badge jp-mod-${verdict.level}`,
          'data-level': verdict.level,
          // focusable, so keyboard users reach the reasons too (the title is the tooltip)
          tabindex: 0,
          title: why,
          'aria-label': `verdict: ${verdict.label}${why ? `. ${verdict.reasons.join('. ')}` : ''}`
        },
        verdict.label
      ),
      // which capture made the run (beside the summary, whose text stays the run's own summary)
      h(
        'span',
        {
          class: 'jp-TraceExplorer-backend',
          'data-backend': run.raw.backend ?? 'trace',
          title: backendTitle(run.raw)
        },
        backendLabel(run.raw)
      ),
      h(
        'span',
        { class: 'jp-TraceExplorer-summary', title: run.summary },
        h('span', { class: 'jp-TraceExplorer-target' }, run.target.name),
        ...headerFacts(run).map(f => h('span', { class: 'jp-TraceExplorer-fact' }, f))
      ),
      tools,
      error
        ? h(
            'div',
            { class: 'jp-TraceExplorer-error' },
            h('strong', {}, `${error.type}: `),
            error.message.split('\n')[0],
            error.file
              ? h('span', { class: 'jp-TraceExplorer-muted' }, ` (${run.locationLabel(error.file, error.line)})`)
              : null,
            error.hint ? h('p', { class: 'jp-TraceExplorer-hint' }, 'Hint: ', ...withCode(error.hint)) : null,
            showsDraftGraph(run.raw) ? h('p', { class: 'jp-TraceExplorer-draftNote' }, DRAFT_GRAPH_NOTE) : null
          )
        : null
    );
    const warnTab = this.tabs.get('warnings')?.tab;
    if (warnTab) {
      const n = run.problems;
      warnTab.textContent = n ? `Warnings (${n})` : 'Warnings';
    }
    if (guardsTab) {
      const model = guardsModel(exportRecords(run.raw));
      guardsTab.textContent = model && model.count ? `Guards (${model.count})` : 'Guards';
      if (guardsTab.hidden && this.active === 'guards') {
        this.showTab('inspector');
      }
    }
    const checkTab = this.tabs.get('check')?.tab;
    if (checkTab) {
      const n = verdict.roots;
      const failed = run.raw.check && !run.raw.check.ok;
      checkTab.textContent = failed ? (n > 0 ? `Check (${plural(n, 'root')})` : 'Check (failed)') : 'Check';
    }
  }
}
