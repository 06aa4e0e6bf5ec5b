/**
 * The node inspector: kind, inputs by their argument names with constant values inline (`dropout_p=0.0`,
 * `is_causal=False`) and parameters with their path and shape, like Netron; outputs with types and shapes (click to
 * walk the graph), a "copy node info" button,
 * the module scope with its types, attributes, the user's source line and the full stack, the
 * warnings and divergences on the node, other nodes recorded at the same line, and the method's
 * `.graph` text (current node highlighted) and `.code`.
 */

import { ExplorerContext } from '../state/context';
import { append, button, clear, fixHint, h, location, section } from '../state/dom';
import { formatAttribute, NodeInfo, shapeText, TraceGraph, userFrame, ValueInfo } from '../model/graph';
import { ArgumentInfo, argumentsOf, TraceRunModel } from '../model/run';
import { fixButton } from '../controls/fix';
import { plural } from '../model/words';
import { StatePanel } from '../state/panels';
import type { PanelSpec } from '../state/panels';
import { codeSection } from './codeSection';

export class Inspector extends StatePanel {
  private readonly body: HTMLElement;

  constructor(ctx: ExplorerContext) {
    const body = h('div', { class: 'jp-TraceExplorer-inspectorBody' });
    super(ctx, h('section', { class: 'jp-TraceExplorer-inspector', 'aria-label': 'node inspector' }, body), [
      'selectedNode',
      'run',
      'selectedMethod',
      'currentDivergence',
      'options'
    ]);
    this.body = body;
    this.render();
  }

  private select(id: number): void {
    this.ctx.host.set({ selectedNode: id });
  }

  private nodeLink(graph: TraceGraph, id: number): HTMLElement {
    const n = graph.nodes[id];
    return button(`%${n.outputs.length ? graph.values[n.outputs[0]].name : n.id} ${n.kind}`, () => this.select(id), {
      class: 'jp-TraceExplorer-link',
      title: `select node ${id}`
    });
  }

  render(): void {
    clear(this.body);
    const graph = this.ctx.graph;
    const id = this.ctx.host.get('selectedNode');
    if (!graph) {
      append(this.body, h('p', { class: 'jp-TraceExplorer-empty' }, 'No graph.'));
      return;
    }
    if (id < 0 || id >= graph.size) {
      append(
        this.body,
        h(
          'p',
          { class: 'jp-TraceExplorer-empty' },
          'Click a node in the graph (or a warning or divergence) to inspect it.'
        ),
        codeSection(graph, null, id => this.select(id))
      );
      return;
    }
    const node = graph.nodes[id];
    const run = this.ctx.run;
    const args = run ? argumentsOf(run, graph, node) : [];
    const copy = button('copy node info', () => this.copy(run, graph, node, args), {
      class: 'jp-TraceExplorer-button jp-TraceExplorer-copy',
      title: 'copy the kind, arguments, outputs, module and source line as text'
    });
    append(
      this.body,
      h(
        'h3',
        { class: 'jp-TraceExplorer-nodeKind' },
        node.kind,
        h('span', { class: 'jp-TraceExplorer-muted' }, ` #${node.id} · ${node.role}`),
        copy
      ),
      node.nondeterministic
        ? h('p', { class: 'jp-TraceExplorer-badge jp-mod-warning' }, 'nondeterministic (torch)')
        : null,
      this.argumentsSection(graph, args),
      this.valuesSection(graph, node, 'outputs'),
      this.scopeSection(graph, node),
      this.attributesSection(node),
      this.sourceSection(graph, node),
      this.problemsSection(node),
      codeSection(graph, node, id => this.select(id))
    );
  }

  /** Inputs by argument name: `p = 0.0`, `weight = fc.weight Float(8, 8)`, `input = %x Float(2, 8) ← linear`. */
  private argumentsSection(graph: TraceGraph, args: ArgumentInfo[]): HTMLElement | null {
    if (!args.length) {
      return null;
    }
    const rows = args.map((a, i) => {
      const value = graph.values[a.valueId];
      const producer = graph.producer(a.valueId);
      let shown: (HTMLElement | string)[];
      if (a.constant !== null) {
        shown = [h('span', { class: 'jp-TraceExplorer-mono jp-TraceExplorer-constant' }, a.constant)];
      } else if (a.parameter !== null) {
        shown = [
          h('span', { class: 'jp-TraceExplorer-mono', title: 'a parameter or buffer of the module' }, a.parameter),
          ' ',
          h('span', { class: 'jp-TraceExplorer-mono jp-TraceExplorer-muted' }, a.parameterType ?? shapeText(value))
        ];
      } else {
        shown = [
          h('span', { class: 'jp-TraceExplorer-mono' }, `%${value.name} `),
          h(
            'span',
            { class: 'jp-TraceExplorer-mono jp-TraceExplorer-muted', ...this.symbolic(value) },
            shapeText(value) + (value.requiresGrad ? ' · grad' : '')
          ),
          ' ',
          producer ? this.nodeLink(graph, producer.id) : h('span', { class: 'jp-TraceExplorer-muted' }, 'graph input')
        ];
      }
      return h(
        'tr',
        { 'data-argument': a.name ?? String(i) },
        h('td', { class: 'jp-TraceExplorer-mono jp-TraceExplorer-argName' }, a.name ?? `#${i}`),
        h('td', {}, ...shown)
      );
    });
    return section(
      'Inputs',
      h('table', { class: 'jp-TraceExplorer-table jp-TraceExplorer-arguments' }, h('tbody', {}, ...rows))
    );
  }

  /** The node as text, for a bug report or a chat: what the inspector shows, in the order it shows it. */
  static nodeInfo(run: TraceRunModel | null, graph: TraceGraph, node: NodeInfo, args: ArgumentInfo[]): string {
    const lines = [`${node.kind} (node ${node.id} of ${graph.method})`];
    args.forEach((a, i) => {
      const value = graph.values[a.valueId];
      const what =
        a.constant ??
        (a.parameter !== null
          ? `${a.parameter}: ${a.parameterType ?? shapeText(value)}`
          : `%${value.name}: ${shapeText(value)}`);
      lines.push(`  ${a.name ?? `#${i}`} = ${what}`);
    });
    node.outputs.forEach(v => lines.push(`  -> %${graph.values[v].name}: ${shapeText(graph.values[v])}`));
    if (node.scope) {
      const type = graph.scopes.get(node.scope)?.type;
      lines.push(`module: ${node.scope}${type ? ` (${type})` : ''}`);
    }
    const frame = userFrame(node.source);
    if (frame) {
      const where = run ? run.locationLabel(frame.file, frame.line) : `${frame.file}:${frame.line}`;
      lines.push(`source: ${where}${frame.code ? `: ${frame.code.trim()}` : ''}`);
    }
    return lines.join('\n');
  }

  private copy(run: TraceRunModel | null, graph: TraceGraph, node: NodeInfo, args: ArgumentInfo[]): void {
    const text = Inspector.nodeInfo(run, graph, node, args);
    const done = (): void => {
      this.flash('copied');
    };
    const clipboard = navigator.clipboard as Clipboard | undefined;
    if (clipboard?.writeText) {
      clipboard.writeText(text).then(done, () => this.flash('copy failed: the browser refused'));
    } else {
      this.flash('copy failed: no clipboard here');
    }
  }

  private flash(message: string): void {
    const b = this.body.querySelector('.jp-TraceExplorer-copy');
    if (b) {
      b.textContent = message;
      setTimeout(() => (b.textContent = 'copy node info'), 1500);
    }
  }

  /** An export's shape with symbols (`Float(s77, 8)`): their ranges and sources as its tooltip. */
  private symbolic(value: ValueInfo): Record<string, string> {
    const title = this.ctx.shapeTitle(value.shape);
    return title ? { title, 'data-symbolic': 'true' } : {};
  }

  private valuesSection(graph: TraceGraph, node: NodeInfo, which: 'inputs' | 'outputs'): HTMLElement | null {
    const ids = node[which];
    if (!ids.length) {
      return null;
    }
    const rows = ids.map(v => {
      const value = graph.values[v];
      const links: HTMLElement[] = [];
      if (which === 'inputs') {
        const p = graph.producer(v);
        links.push(p ? this.nodeLink(graph, p.id) : h('span', { class: 'jp-TraceExplorer-muted' }, 'graph input'));
      } else {
        graph
          .users(v)
          .slice(0, 8)
          .forEach(u => links.push(this.nodeLink(graph, u)));
        if (graph.outputs.includes(v)) {
          links.push(h('span', { class: 'jp-TraceExplorer-muted' }, 'graph output'));
        }
      }
      return h(
        'tr',
        {},
        h('td', { class: 'jp-TraceExplorer-mono' }, `%${value.name}`),
        h(
          'td',
          { class: 'jp-TraceExplorer-mono', ...this.symbolic(value) },
          shapeText(value) + (value.requiresGrad ? ' · grad' : '')
        ),
        h('td', {}, ...links)
      );
    });
    return section(
      which === 'inputs' ? 'Inputs' : 'Outputs',
      h('table', { class: 'jp-TraceExplorer-table' }, h('tbody', {}, ...rows))
    );
  }

  private scopeSection(graph: TraceGraph, node: NodeInfo): HTMLElement {
    const parts: (HTMLElement | string)[] = [];
    const root = graph.scopes.get('');
    parts.push(h('span', {}, root?.type || graph.method));
    if (node.scope) {
      const names = node.scope.split('.');
      names.forEach((name, i) => {
        const path = names.slice(0, i + 1).join('.');
        const type = graph.scopes.get(path)?.type;
        parts.push(' › ', h('span', { title: path }, type ? `${name} (${type})` : name));
      });
    }
    return section('Module', h('p', { class: 'jp-TraceExplorer-scope' }, ...parts));
  }

  private attributesSection(node: NodeInfo): HTMLElement | null {
    const entries = Object.entries(node.attributes);
    if (!entries.length) {
      return null;
    }
    return section(
      'Attributes',
      h(
        'table',
        { class: 'jp-TraceExplorer-table' },
        h(
          'tbody',
          {},
          ...entries.map(([k, v]) =>
            h('tr', {}, h('td', {}, k), h('td', { class: 'jp-TraceExplorer-mono' }, formatAttribute(v)))
          )
        )
      )
    );
  }

  private sourceSection(graph: TraceGraph, node: NodeInfo): HTMLElement {
    const frame = userFrame(node.source);
    if (!node.source || !frame) {
      return section(
        'Source',
        h(
          'p',
          { class: 'jp-TraceExplorer-muted' },
          'no source recorded (constants and attribute reads often have none)'
        )
      );
    }
    const others = graph.nodesAt(frame.file, frame.line).filter(i => i !== node.id && graph.nodes[i].role === 'op');
    const stack = h(
      'details',
      { class: 'jp-TraceExplorer-stack' },
      h('summary', {}, `full stack (${node.source.stack.length} frames)`),
      h(
        'ol',
        {},
        ...node.source.stack.map((f, i) =>
          h(
            'li',
            {
              class: f.internal
                ? 'jp-TraceExplorer-internal'
                : i === node.source!.userIndex
                  ? 'jp-TraceExplorer-user'
                  : ''
            },
            location(f.file, f.line, this.ctx.run),
            ` in ${f.func}`,
            f.code ? h('code', {}, f.code) : null
          )
        )
      )
    );
    return section(
      'Source',
      h(
        'p',
        {},
        location(frame.file, frame.line, this.ctx.run, (f, l) => this.ctx.showPlace(f, l)),
        ` in ${frame.func}`
      ),
      h('pre', { class: 'jp-TraceExplorer-code jp-TraceExplorer-sourceLine' }, frame.code || '(source not available)'),
      others.length
        ? h(
            'p',
            {},
            `${plural(others.length, 'other op')} at this line: `,
            ...others.slice(0, 12).map(i => this.nodeLink(graph, i))
          )
        : null,
      stack
    );
  }

  private problemsSection(node: NodeInfo): HTMLElement | null {
    const run = this.ctx.run;
    if (!run) {
      return null;
    }
    const method = this.ctx.method;
    const warnings = run.userWarnings.filter(w => w.method === method && w.node_ids.includes(node.id));
    const findings = run.findings.filter(f => f.method === method && f.node_ids.includes(node.id));
    const divergences = this.ctx.divergences
      .map((d, index) => ({ d, index }))
      .filter(({ d }) => d.method === method && d.traceNode === node.id);
    if (!warnings.length && !findings.length && !divergences.length) {
      return null;
    }
    return section(
      'On this node',
      h(
        'ul',
        { class: 'jp-TraceExplorer-problems' },
        ...warnings.map(w =>
          h('li', { class: 'jp-mod-warning' }, `[${w.category}] `, w.message.split('\n')[0], fixHint(w.advice))
        ),
        ...findings.map(f =>
          h(
            'li',
            { class: `jp-mod-${f.severity}` },
            `[${f.kind}] ${f.title}`,
            fixHint(f.hint),
            fixButton(this.ctx, f.fix)
          )
        ),
        ...divergences.map(({ d, index }) =>
          h(
            'li',
            { class: 'jp-mod-error' },
            button(`${d.kind} divergence ${index + 1}`, () => this.ctx.host.set({ currentDivergence: index }), {
              class: 'jp-TraceExplorer-link'
            }),
            d.reason ? `: ${d.reason}` : ''
          )
        )
      )
    );
  }
}

/** The Inspector tab: always there; the explorer brings it up when a node is picked. */
export const INSPECTOR_PANEL: PanelSpec<Inspector> = {
  id: 'inspector',
  title: 'Inspector',
  create: ctx => new Inspector(ctx)
};
