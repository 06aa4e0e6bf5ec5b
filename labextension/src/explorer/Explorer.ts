/**
 * The trace explorer: header (verdict badge, what was traced, counts, full screen), options bar, then the graph
 * and the tabs (inspector, warnings & findings, check & divergences; an export's guards and its comparison with a
 * trace; a displayed tj.diff's changes against the old run) with a splitter between them; on a narrow
 * output the tabs go below the graph. The same component serves the live widget, the kernel-free MIME renderer
 * and the offline report; only the host differs.
 */

import { OptionsBar } from '../controls/OptionsBar';
import { GraphView, MARK_STATE } from '../graph/GraphView';
import { CHECK_PANEL } from '../check/CheckPanel';
import { INSPECTOR_PANEL } from '../inspector/Inspector';
import { BACKEND_VIEWS } from '../backends';
import { backendLabel, backendTitle } from '../model/backends';
import { headerFacts, TraceRunModel } from '../model/run';
import { ExplorerContext } from '../state/context';
import { append, clear, h, withCode } from '../state/dom';
import { ExplorerHost } from '../state/host';
import type { PanelSpec, PanelView } from '../state/panels';
import { FullScreen } from './fullscreen';
import { PANELS } from './panels';
import { Splitter } from './splitter';

/** A tab of the side panel: its declaration, its view, its button and the panel that holds the view. */
interface Tab {
  spec: PanelSpec;
  view: PanelView;
  button: HTMLButtonElement;
  panel: HTMLElement;
}

/** Below this width (px) the side panel goes under the graph (a 1024 px window with the file browser open). */
export const STACK_BELOW_PX = 760;

export class Explorer {
  readonly element: HTMLElement;
  readonly ctx: ExplorerContext;
  readonly graph: GraphView;
  readonly options: OptionsBar;
  readonly splitter: Splitter;
  readonly fullScreen: FullScreen;
  private readonly header: HTMLElement;
  private readonly fullScreenButton: HTMLButtonElement;
  /** the side panel's tabs (explorer/panels.ts), by id, in order */
  private readonly tabs = new Map<string, Tab>();
  /** the back ends' lines under the header (each hides itself for runs it does not concern) */
  private readonly banners: PanelView[];
  private active = INSPECTOR_PANEL.id;
  private readonly unsubscribe: () => void;
  private readonly resizeObserver: ResizeObserver;

  constructor(host: ExplorerHost) {
    performance.mark(MARK_STATE);
    this.ctx = new ExplorerContext(host, BACKEND_VIEWS);
    this.header = h('div', { class: 'jp-TraceExplorer-header' });
    this.options = new OptionsBar(this.ctx);
    this.graph = new GraphView(this.ctx);
    this.graph.onNodeClicked = () => this.showTab(INSPECTOR_PANEL.id);
    this.ctx.searchGraph = query => this.graph.search(query);
    this.ctx.repaintGraph = () => this.graph.applyHighlights();
    const side = this.buildTabs();
    const main = h('div', { class: 'jp-TraceExplorer-main' });
    this.splitter = new Splitter(main);
    append(main, this.graph.element, this.splitter.element, side);
    this.banners = BACKEND_VIEWS.flatMap(b => b.banners ?? []).map(make => make(this.ctx));
    this.element = h(
      'div',
      { class: 'jp-TraceExplorer-root' },
      this.header,
      ...this.banners.map(b => b.element),
      this.options.element,
      main
    );
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
    this.fullScreen = new FullScreen(this.element, active => this.fullScreenChanged(active));
    this.fullScreenButton.addEventListener('click', () => this.fullScreen.toggle());

    // stack the side panel under the graph when the output is narrow; side by side again when it widens
    this.resizeObserver = new ResizeObserver(() => this.updateStacking());
    this.resizeObserver.observe(this.element);

    this.unsubscribe = this.ctx.onChange(keys => {
      if (keys.has('run')) {
        performance.mark(MARK_STATE);
        this.renderHeader();
      }
      this.follow(keys);
    });
    this.renderHeader();
    this.showTab(this.openingTab(this.ctx.run));
  }

  dispose(): void {
    this.fullScreen.leave();
    this.resizeObserver.disconnect();
    this.unsubscribe();
    (this.ctx.host as { dispose?: () => void }).dispose?.();
    this.graph.dispose();
    for (const view of [...this.banners, ...[...this.tabs.values()].map(t => t.view)]) {
      view.dispose();
    }
    this.options.dispose();
  }

  showTab(id: string): void {
    this.active = id;
    for (const [n, { button, panel }] of this.tabs) {
      const on = n === id;
      button.setAttribute('aria-selected', String(on));
      button.tabIndex = on ? 0 : -1;
      button.classList.toggle('jp-mod-active', on);
      panel.hidden = !on;
    }
  }

  /** Whether the side panel is under the graph (a narrow output). */
  get stacked(): boolean {
    return this.element.classList.contains('jp-mod-stacked');
  }

  /** The tabs and their panels, one per panel that PANELS declares; arrow keys move between the shown tabs. */
  private buildTabs(): HTMLElement {
    const tabList = h('div', { class: 'jp-TraceExplorer-tabs', role: 'tablist' });
    const panels = h('div', { class: 'jp-TraceExplorer-panels' });
    for (const spec of PANELS) {
      const id = spec.id;
      const view = spec.create(this.ctx);
      const button = h(
        'button',
        { type: 'button', role: 'tab', class: 'jp-TraceExplorer-tab', 'data-tab': id },
        spec.title
      ) as HTMLButtonElement;
      button.addEventListener('click', () => this.showTab(id));
      button.addEventListener('keydown', e => {
        if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
          e.preventDefault();
          const shown = [...this.tabs.keys()].filter(n => !this.tabs.get(n)!.button.hidden);
          const i = shown.indexOf(id);
          const next = shown[(i + (e.key === 'ArrowRight' ? 1 : shown.length - 1)) % shown.length];
          this.showTab(next);
          this.tabs.get(next)!.button.focus();
        }
      });
      const panel = h('div', { role: 'tabpanel', class: 'jp-TraceExplorer-panel', 'data-panel': id }, view.element);
      tabList.appendChild(button);
      panels.appendChild(panel);
      this.tabs.set(id, { spec, view, button, panel });
    }
    return h('div', { class: 'jp-TraceExplorer-sidebar' }, tabList, panels);
  }

  /** A displayed diff opens on what changed; a run, on what went wrong first (the panels' `opening`). */
  private openingTab(run: TraceRunModel | null): string {
    let best: { id: string; rank: number } | null = null;
    for (const { spec, view } of this.tabs.values()) {
      const rank = spec.opening?.(run, view) ?? null;
      if (rank !== null && (!best || rank < best.rank)) {
        best = { id: spec.id, rank };
      }
    }
    return best?.id ?? INSPECTOR_PANEL.id;
  }

  /** A picked node shows in the Inspector, unless the tab up keeps its list in view; a divergence, in the Check. */
  private follow(keys: Set<string>): void {
    const host = this.ctx.host;
    if (keys.has('selectedNode') && host.get('selectedNode') >= 0) {
      if (this.tabs.get(this.active)?.spec.keepsSelection) {
        return; // keep the list in view while walking its items (warnings, guards, lines, changes)
      }
      this.showTab(INSPECTOR_PANEL.id);
    }
    if (keys.has('currentDivergence') && host.get('currentDivergence') >= 0) {
      this.showTab(CHECK_PANEL.id);
    }
  }

  private fullScreenChanged(active: boolean): void {
    this.fullScreenButton.setAttribute('aria-pressed', String(active));
    this.fullScreenButton.textContent = active ? 'exit full screen' : 'full screen';
    this.fullScreenButton.title = active
      ? 'back to the notebook (Esc)'
      : 'fill the window with the explorer (Esc leaves)';
    this.fullScreenButton.focus();
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

  /** Each tab shown when it applies to the run, titled with what it counts; a hidden tab is not left up. */
  private renderTabs(run: TraceRunModel | null): void {
    for (const { spec, view, button } of this.tabs.values()) {
      button.hidden = !(spec.applies?.(run, view) ?? true);
      button.textContent = run && spec.label ? spec.label(run) : spec.title;
      if (button.hidden && this.active === spec.id) {
        this.showTab(INSPECTOR_PANEL.id);
      }
    }
  }

  private renderHeader(): void {
    clear(this.header);
    const run = this.ctx.run;
    // no graph to show (tracing failed): no empty graph pane; the error is in the header, the tabs keep what they
    // have (the warnings raised before it failed); a re-trace that works brings the graph back
    this.element.classList.toggle('jp-mod-noGraph', run !== null && run.graphs.size === 0);
    // a graph that is not a program the back end made (export's draft): the graph area says so too
    const draftNote = this.ctx.draftNote;
    this.graph.element.classList.toggle('jp-mod-draft', draftNote !== null);
    this.renderTabs(run);
    const tools = h('span', { class: 'jp-TraceExplorer-headerTools' }, this.fullScreenButton);
    if (!run) {
      append(this.header, h('span', { class: 'jp-TraceExplorer-summary' }, this.ctx.error ?? 'no trace yet'), tools);
      return;
    }
    const verdict = run.verdict;
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
      this.errorLine(run, draftNote)
    );
  }

  /** The run's error under the header: its type and first line, where, the hint, and a draft graph's note. */
  private errorLine(run: TraceRunModel, draftNote: string | null): HTMLElement | null {
    const error = run.error;
    if (!error) {
      return null;
    }
    return h(
      'div',
      { class: 'jp-TraceExplorer-error' },
      h('strong', {}, `${error.type}: `),
      error.message.split('\n')[0],
      error.file
        ? h('span', { class: 'jp-TraceExplorer-muted' }, ` (${run.locationLabel(error.file, error.line)})`)
        : null,
      error.hint ? h('p', { class: 'jp-TraceExplorer-hint' }, 'Hint: ', ...withCode(error.hint)) : null,
      draftNote ? h('p', { class: 'jp-TraceExplorer-draftNote' }, draftNote) : null
    );
  }
}
