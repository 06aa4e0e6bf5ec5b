/**
 * The trace explorer: header (summary, verdict, options bar), the graph on the left and tabs on
 * the right (inspector, warnings & findings, check & divergences). The same component serves the
 * live widget and the kernel-free MIME renderer; only the host differs.
 */

import { CheckPanel } from '../check/CheckPanel';
import { OptionsBar } from '../controls/OptionsBar';
import { GraphView, MARK_STATE } from '../graph/GraphView';
import { Inspector } from '../inspector/Inspector';
import { WarningsPanel } from '../warnings/WarningsPanel';
import { ExplorerContext } from '../state/context';
import { append, clear, h } from '../state/dom';
import { ExplorerHost } from '../state/host';

type TabName = 'inspector' | 'warnings' | 'check';

export class Explorer {
  readonly element: HTMLElement;
  readonly ctx: ExplorerContext;
  readonly graph: GraphView;
  readonly inspector: Inspector;
  readonly warnings: WarningsPanel;
  readonly check: CheckPanel;
  readonly options: OptionsBar;
  private readonly header: HTMLElement;
  private readonly tabs = new Map<TabName, { tab: HTMLButtonElement; panel: HTMLElement }>();
  private active: TabName = 'inspector';
  private readonly unsubscribe: () => void;

  constructor(host: ExplorerHost) {
    performance.mark(MARK_STATE);
    this.ctx = new ExplorerContext(host);
    this.header = h('div', { class: 'jp-TraceExplorer-header' });
    this.options = new OptionsBar(this.ctx);
    this.graph = new GraphView(this.ctx);
    this.graph.onNodeClicked = () => this.showTab('inspector');
    this.inspector = new Inspector(this.ctx);
    this.warnings = new WarningsPanel(this.ctx);
    this.check = new CheckPanel(this.ctx);
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
        const names = [...this.tabs.keys()];
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
    const side = h('div', { class: 'jp-TraceExplorer-sidebar' }, tabList, panels);
    this.element = h(
      'div',
      { class: 'jp-TraceExplorer-root' },
      this.header,
      this.options.element,
      h('div', { class: 'jp-TraceExplorer-main' }, this.graph.element, side)
    );
    this.unsubscribe = this.ctx.onChange(keys => {
      if (keys.has('run')) {
        performance.mark(MARK_STATE);
        this.renderHeader();
      }
      if (keys.has('selectedNode') && this.ctx.host.get('selectedNode') >= 0 && this.active === 'warnings') {
        return; // keep the list in view while walking its warnings
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
    this.showTab(
      run && run.cases.some(c => !c.ok) ? 'check' : run && run.userWarnings.length ? 'warnings' : 'inspector'
    );
  }

  dispose(): void {
    this.unsubscribe();
    (this.ctx.host as { dispose?: () => void }).dispose?.();
    this.graph.dispose();
    this.inspector.dispose();
    this.warnings.dispose();
    this.check.dispose();
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

  private renderHeader(): void {
    clear(this.header);
    const run = this.ctx.run;
    if (!run) {
      append(this.header, h('span', { class: 'jp-TraceExplorer-summary' }, this.ctx.error ?? 'no trace yet'));
      return;
    }
    const error = run.error;
    append(
      this.header,
      h(
        'span',
        { class: run.ok ? 'jp-TraceExplorer-badge jp-mod-ok' : 'jp-TraceExplorer-badge jp-mod-error' },
        run.ok ? 'ok' : error ? 'failed' : 'problems'
      ),
      h('span', { class: 'jp-TraceExplorer-summary' }, run.summary),
      error
        ? h(
            'div',
            { class: 'jp-TraceExplorer-error' },
            h('strong', {}, `${error.type}: `),
            error.message.split('\n')[0],
            error.file
              ? h('span', { class: 'jp-TraceExplorer-muted' }, ` (${error.file.split(/[\\/]/).pop()}:${error.line})`)
              : null,
            error.hint ? h('p', { class: 'jp-TraceExplorer-hint' }, `Hint: ${error.hint}`) : null
          )
        : null
    );
    const warnTab = this.tabs.get('warnings')?.tab;
    if (warnTab) {
      warnTab.textContent = this.warnings.count ? `Warnings (${this.warnings.count})` : 'Warnings';
    }
    const checkTab = this.tabs.get('check')?.tab;
    if (checkTab) {
      const n = this.ctx.divergences.filter(d => d.kind === 'root').length;
      checkTab.textContent = run.raw.check && !run.raw.check.ok ? `Check (${n} root${n === 1 ? '' : 's'})` : 'Check';
    }
  }
}
