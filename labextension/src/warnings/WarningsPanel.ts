/**
 * Tracer warnings grouped by category with counts; each shows its message, file:line and code.
 * Clicking one selects its first node (the graph reveals and highlights all of them). Findings
 * (hazards torch does not report) and the generalization probe are listed below.
 */

import { ExplorerContext } from '../state/context';
import { append, clear, formatNumber, h, location } from '../state/dom';
import { floatValue, TraceWarningJSON } from '../model/protocol';

/** Category order and titles (mirrors jupyter_tracejit/core/tracer_warnings.py CATEGORIES). */
const CATEGORY_TITLES: Record<string, string> = {
  to_bool: 'tensor → Python bool (frozen branch)',
  to_int: 'tensor → Python int',
  to_float: 'tensor → Python float',
  to_complex: 'tensor → Python complex',
  to_number: 'tensor → Python number (.item())',
  to_list: 'tensor → Python list',
  to_numpy: 'tensor → NumPy',
  tensor_const: 'torch.tensor(...) frozen as a constant',
  from_numpy_const: 'torch.from_numpy(...) frozen as a constant',
  iterate: 'iterating over a tensor',
  len: 'len(tensor)',
  live_refs: 'in-place op on a viewed tensor',
  nondeterministic: 'nondeterministic nodes',
  output_mismatch_python: 'trace ≠ Python function',
  output_mismatch_retrace: 'trace ≠ re-trace',
  list_output: 'list output',
  already_script: 'already TorchScript',
  deprecated: 'deprecation notice',
  other: 'other warnings'
};

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

export class WarningsPanel {
  readonly element: HTMLElement;
  private readonly unsubscribe: () => void;

  constructor(private readonly ctx: ExplorerContext) {
    this.element = h('section', { class: 'jp-TraceExplorer-warnings', 'aria-label': 'warnings and findings' });
    this.unsubscribe = ctx.onChange(keys => {
      if (keys.has('run') || keys.has('selectedNode')) {
        this.render();
      }
    });
    this.render();
  }

  dispose(): void {
    this.unsubscribe();
  }

  /** Number shown on the tab: distinct user warnings plus findings that are not info. */
  get count(): number {
    const run = this.ctx.run;
    return run ? run.userWarnings.length + run.findings.filter(f => f.severity !== 'info').length : 0;
  }

  private show(nodeIds: number[], method: string): void {
    if (nodeIds.length) {
      this.ctx.host.set({ selectedMethod: method, selectedNode: nodeIds[0] });
    }
  }

  render(): void {
    clear(this.element);
    const run = this.ctx.run;
    if (!run) {
      return;
    }
    const selected = this.ctx.host.get('selectedNode');
    const groups = groupWarnings(run.warnings);
    if (!run.userWarnings.length) {
      append(this.element, h('p', { class: 'jp-TraceExplorer-empty' }, 'No tracer warnings.'));
    }
    for (const [category, list] of groups) {
      const total = list.reduce((s, w) => s + w.count, 0);
      const items = list.map(w => {
        const active = w.node_ids.includes(selected) && w.method === this.ctx.method;
        const item = h(
          'li',
          {
            class: `jp-TraceExplorer-warning${active ? ' jp-mod-active' : ''}${w.node_ids.length ? ' jp-mod-clickable' : ''}`,
            tabindex: w.node_ids.length ? 0 : undefined,
            role: w.node_ids.length ? 'button' : undefined,
            'data-category': category
          },
          h(
            'div',
            { class: 'jp-TraceExplorer-warningHead' },
            location(w.file, w.line, this.ctx.run),
            w.count > 1 ? h('span', { class: 'jp-TraceExplorer-count' }, `×${w.count}`) : null,
            w.node_ids.length
              ? h(
                  'span',
                  { class: 'jp-TraceExplorer-muted' },
                  `${w.node_ids.length} node${w.node_ids.length === 1 ? '' : 's'}`
                )
              : null
          ),
          w.code ? h('pre', { class: 'jp-TraceExplorer-code' }, w.code) : null,
          h('p', { class: 'jp-TraceExplorer-message' }, w.message.split('\n')[0]),
          w.torch_location
            ? h(
                'p',
                { class: 'jp-TraceExplorer-muted' },
                `torch raised it in ${w.torch_location.split(/[\\/]/).pop()}; shown at your line`
              )
            : null
        );
        const activate = (): void => this.show(w.node_ids, w.method);
        item.addEventListener('click', activate);
        item.addEventListener('keydown', e => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            activate();
          }
        });
        return item;
      });
      append(
        this.element,
        h(
          'details',
          { class: 'jp-TraceExplorer-group', open: category !== 'deprecated' },
          h(
            'summary',
            {},
            CATEGORY_TITLES[category] ?? category,
            h('span', { class: 'jp-TraceExplorer-count' }, String(total))
          ),
          h('ul', { class: 'jp-TraceExplorer-list' }, ...items)
        )
      );
    }
    if (run.findings.length) {
      append(
        this.element,
        h('h4', {}, 'Findings torch does not report'),
        h(
          'ul',
          { class: 'jp-TraceExplorer-list' },
          ...run.findings.map(f => {
            const li = h(
              'li',
              {
                class: `jp-TraceExplorer-finding jp-mod-${f.severity}${f.node_ids.length ? ' jp-mod-clickable' : ''}`,
                tabindex: f.node_ids.length ? 0 : undefined
              },
              h('strong', {}, f.title),
              h('p', { class: 'jp-TraceExplorer-message' }, f.message),
              f.hint ? h('p', { class: 'jp-TraceExplorer-hint' }, `Fix: ${f.hint}`) : null
            );
            li.addEventListener('click', () => this.show(f.node_ids, f.method));
            return li;
          })
        )
      );
    }
    const probe = run.probe;
    if (probe) {
      append(
        this.element,
        h(
          'h4',
          {},
          probe.cases.some(c => c.status === 'disagree' || c.status === 'trace_error')
            ? 'Generalization probe: the trace does not generalize'
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
      );
    }
  }
}
