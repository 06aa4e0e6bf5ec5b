/**
 * Tracer warnings grouped by category with counts; each shows its message, its place (a link that selects that
 * line's nodes), code, torch's detail (an output mismatch's numbers) and its fix (the core's advice, the text the
 * CLI and the HTML report print). Clicking one selects its first node (the graph reveals and highlights all of
 * them). Findings (hazards torch does not report) follow, with their fix as one click where it is an option; then
 * the portability findings (a device baked into the graph) in a group of their own, shown in full whether they
 * make the badge amber or not; then the generalization probe.
 */

import { ExplorerContext } from '../state/context';
import { append, clear, fixHint, formatNumber, h, location, onActivate, withCode } from '../state/dom';
import { FindingJSON, floatValue, ProbeReportJSON, TraceWarningJSON } from '../model/protocol';
import { categoryOf, WARNING_TITLES as CATEGORY_TITLES } from '../model/run';
import { fixButton } from '../controls/fix';
import { detailOf, headlineOf, warningSets } from '../model/warningSets';
import { plural } from '../model/words';
import { StatePanel } from '../state/panels';
import type { PanelSpec } from '../state/panels';

function groupWarnings(warnings: TraceWarningJSON[]): [string, TraceWarningJSON[]][] {
  const order = Object.keys(CATEGORY_TITLES);
  const groups = new Map<string, TraceWarningJSON[]>();
  for (const w of warnings) {
    const list = groups.get(w.category) ?? [];
    list.push(w);
    groups.set(w.category, list);
  }
  return [...groups].sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
}

/** torch's paragraph (a message's first line): on a warning's card, or once above a set that says the same. */
function paragraph(headline: string): HTMLElement {
  return h('p', { class: 'jp-TraceExplorer-message' }, headline);
}

export class WarningsPanel extends StatePanel {
  constructor(ctx: ExplorerContext) {
    super(ctx, h('section', { class: 'jp-TraceExplorer-warnings', 'aria-label': 'warnings and findings' }), [
      'run',
      'selectedNode',
      'options',
      'live'
    ]);
    this.render();
  }

  private show(nodeIds: number[], method: string): void {
    if (nodeIds.length) {
      this.ctx.host.set({ selectedMethod: method, selectedNode: nodeIds[0] });
    }
  }

  /** One finding: its title, what and why, the fix (one click where it is an option); its nodes on click. */
  private findingItem(f: FindingJSON, expanded = false): HTMLElement {
    const body = [
      h('p', { class: 'jp-TraceExplorer-message' }, ...withCode(f.message)),
      fixHint(f.hint),
      fixButton(this.ctx, f.fix)
    ];
    const li = h(
      'li',
      {
        class: `jp-TraceExplorer-finding jp-mod-${f.severity}${f.node_ids.length ? ' jp-mod-clickable' : ''}`,
        tabindex: f.node_ids.length ? 0 : undefined,
        'data-kind': f.kind
      },
      // a note (how often the Python code ran) says nothing is wrong: one line, opened on demand
      ...(f.severity === 'info' && !expanded
        ? [h('details', {}, h('summary', {}, h('strong', {}, f.title)), ...body)]
        : [h('strong', {}, f.title), ...body])
    );
    li.addEventListener('click', () => this.show(f.node_ids, f.method));
    return li;
  }

  /** A warning's card: its place, count, code and torch's detail; torch's paragraph and the fix when `saying`. */
  private card(w: TraceWarningJSON, selected: number, saying: boolean): HTMLElement {
    const detail = detailOf(w);
    const active = w.node_ids.includes(selected) && w.method === this.ctx.method;
    const item = h(
      'li',
      {
        class: `jp-TraceExplorer-warning${active ? ' jp-mod-active' : ''}${w.node_ids.length ? ' jp-mod-clickable' : ''}`,
        tabindex: w.node_ids.length ? 0 : undefined,
        role: w.node_ids.length ? 'button' : undefined,
        'data-category': w.category
      },
      h(
        'div',
        { class: 'jp-TraceExplorer-warningHead' },
        location(w.file, w.line, this.ctx.run, (file, line) => this.ctx.showPlace(file, line)),
        w.count > 1
          ? h('span', { class: 'jp-TraceExplorer-muted', title: `torch raised it ${w.count} times` }, `×${w.count}`)
          : null,
        w.node_ids.length ? h('span', { class: 'jp-TraceExplorer-muted' }, plural(w.node_ids.length, 'node')) : null
      ),
      w.code ? h('pre', { class: 'jp-TraceExplorer-code' }, w.code) : null,
      saying ? paragraph(headlineOf(w)) : null,
      // torch's own detail (an output mismatch's "Mismatched elements… Greatest absolute difference…")
      detail ? h('pre', { class: 'jp-TraceExplorer-code jp-TraceExplorer-detail' }, detail) : null,
      saying ? fixHint(w.advice) : null,
      w.placement ? h('p', { class: 'jp-TraceExplorer-muted jp-TraceExplorer-placement' }, w.placement) : null,
      w.torch_location
        ? h(
            'p',
            { class: 'jp-TraceExplorer-muted' },
            `torch raised it in ${w.torch_location.split(/[\\/]/).pop()}; shown at your line`
          )
        : null
    );
    onActivate(item, () => this.show(w.node_ids, w.method));
    return item;
  }

  render(): void {
    clear(this.element);
    const run = this.ctx.run;
    if (!run) {
      return;
    }
    if (!run.userWarnings.length) {
      append(this.element, h('p', { class: 'jp-TraceExplorer-empty' }, 'No tracer warnings.'));
    }
    const selected = this.ctx.host.get('selectedNode');
    for (const [category, list] of groupWarnings(run.warnings)) {
      append(this.element, this.categorySection(category, list, selected));
    }
    const findings = run.findings.filter(f => !f.portability);
    if (findings.length) {
      append(
        this.element,
        h('h4', {}, 'Findings torch does not report'),
        h('ul', { class: 'jp-TraceExplorer-list' }, ...findings.map(f => this.findingItem(f)))
      );
    }
    // where the trace can run: listed in full whatever their severity (a note here is still worth reading before
    // serving the model elsewhere); amber only when this run's devices or its target differ
    const portability = run.findings.filter(f => f.portability);
    if (portability.length) {
      append(
        this.element,
        h(
          'section',
          { class: 'jp-TraceExplorer-portability', 'aria-label': 'portability' },
          h('h4', {}, 'Portability: where the trace can run'),
          h(
            'p',
            { class: 'jp-TraceExplorer-muted' },
            'Fine where it was traced; a warning when the inputs, the parameters or the target device are elsewhere.'
          ),
          h('ul', { class: 'jp-TraceExplorer-list' }, ...portability.map(f => this.findingItem(f, true)))
        )
      );
    }
    if (run.probe) {
      append(this.element, ...probeSection(run.probe));
    }
  }

  /** A category's warnings, open when it counts: a card each, or a set's words once above its places. */
  private categorySection(category: string, list: TraceWarningJSON[], selected: number): HTMLElement {
    const raised = list.reduce((s, w) => s + w.count, 0);
    const counted = categoryOf(category).counted; // the deprecation notice says nothing about this trace
    const items = warningSets(list).map(set =>
      set.warnings.length === 1
        ? this.card(set.warnings[0], selected, true)
        : h(
            'li',
            { class: 'jp-TraceExplorer-warningSet' },
            // said once for the set (every warning one library raised reads alike), then each place
            paragraph(set.headline),
            fixHint(set.advice),
            h(
              'ul',
              { class: 'jp-TraceExplorer-list', 'aria-label': `${set.warnings.length} places` },
              ...set.warnings.map(w => this.card(w, selected, false))
            )
          )
    );
    return h(
      'details',
      { class: 'jp-TraceExplorer-group', open: counted },
      h(
        'summary',
        {},
        CATEGORY_TITLES[category] ?? category,
        counted
          ? h(
              'span',
              {
                class: 'jp-TraceExplorer-count',
                title: `${plural(list.length, 'warning')}, raised ${plural(raised, 'time')}`
              },
              String(list.length)
            )
          : h('span', { class: 'jp-TraceExplorer-muted' }, ' (not counted)')
      ),
      h('ul', { class: 'jp-TraceExplorer-list' }, ...items)
    );
  }
}

/** The generalization probe: its verdict, then a row per input set it tried. */
function probeSection(probe: ProbeReportJSON): HTMLElement[] {
  const bad = probe.cases.filter(c => c.status === 'disagree' || c.status === 'trace_error').length;
  return [
    h(
      'h4',
      {},
      bad
        ? `Generalization probe: the trace does not generalize (${bad} of ${probe.cases.length} input sets)`
        : 'Generalization probe: ok'
    ),
    h(
      'table',
      { class: 'jp-TraceExplorer-table' },
      h(
        'tbody',
        {},
        ...probe.cases.map(c =>
          h(
            'tr',
            { class: `jp-mod-${c.status}` },
            h('td', {}, c.status),
            h('td', { title: c.description }, c.name),
            h('td', { class: 'jp-TraceExplorer-mono' }, c.input_shapes.join(', ')),
            h('td', {}, c.max_abs !== null ? formatNumber(floatValue(c.max_abs)) : ''),
            h('td', {}, c.message)
          )
        )
      )
    )
  ];
}

/** The Warnings tab, counting the run's problems; a run whose verdict is a warning opens on it. */
export const WARNINGS_PANEL: PanelSpec<WarningsPanel> = {
  id: 'warnings',
  title: 'Warnings',
  create: ctx => new WarningsPanel(ctx),
  label: run => (run.problems ? `Warnings (${run.problems})` : 'Warnings'),
  keepsSelection: true,
  opening: run => (run?.verdict.level === 'warning' ? 2 : null)
};
