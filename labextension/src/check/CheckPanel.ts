/**
 * The check: output mismatches per check input (max error vs tolerance), the divergences (roots
 * first, downstream counted), a stepper (first / previous / next / last, "n of m", keys), and the
 * trace and check graphs side by side around the current divergence, with both source lines.
 * Any two runs of the history can be compared the same way.
 */

import { ExplorerContext } from '../state/context';
import { append, button, clear, formatNumber, h, location } from '../state/dom';
import { sideBySide } from '../model/align';
import { decodeGraph, TraceGraph, userFrame } from '../model/graph';
import { floatValue } from '../model/protocol';
import { CheckCase, Divergence, GraphDiff, TraceRunModel } from '../model/run';
import { STEP_KEYS, StepCommand, Stepper } from '../model/stepper';
import { layoutDot } from '../graph/layout';
import { svgElement } from '../graph/svg';

/** Lays out a small DOT into `target`; a newer call for the same target supersedes an older one. */
const latest = new WeakMap<HTMLElement, number>();
let counter = 0;
function drawInto(target: HTMLElement, dot: string, onNode?: (name: string) => void): Promise<void> {
  const seq = ++counter;
  latest.set(target, seq);
  return layoutDot(dot).then(
    text => {
      if (latest.get(target) !== seq) {
        return;
      }
      const svg = svgElement(text);
      svg.classList.add('jp-TraceExplorer-svg');
      clear(target);
      target.appendChild(svg);
      if (onNode) {
        svg.addEventListener('click', e => {
          const g = (e.target as Element).closest('g.node');
          const id = g?.getAttribute('id');
          if (id) {
            onNode(id);
          }
        });
      }
    },
    (err: Error) => {
      if (latest.get(target) === seq) {
        target.textContent = `layout failed: ${err.message}`;
      }
    }
  );
}

function sourceLine(run: TraceRunModel | null, graph: TraceGraph | null, id: number | null, side: string): HTMLElement {
  if (!graph || id === null) {
    return h('p', { class: 'jp-TraceExplorer-muted' }, `${side}: no counterpart`);
  }
  const n = graph.nodes[id];
  const f = userFrame(n.source);
  return h(
    'div',
    { class: 'jp-TraceExplorer-side-source' },
    h('span', { class: 'jp-TraceExplorer-muted' }, `${side}: `),
    `${n.kind} `,
    f ? location(f.file, f.line, run) : h('span', { class: 'jp-TraceExplorer-muted' }, '(no source)'),
    f?.code ? h('pre', { class: 'jp-TraceExplorer-code' }, f.code) : null
  );
}

export class CheckPanel {
  readonly element: HTMLElement;
  /** Settles when the side-by-side pictures of the current divergence are drawn. */
  rendered: Promise<void> = Promise.resolve();
  private readonly unsubscribe: () => void;
  private compareA = '';
  private compareB = '';

  constructor(private readonly ctx: ExplorerContext) {
    this.element = h('section', {
      class: 'jp-TraceExplorer-check',
      tabindex: 0,
      'aria-label': 'check and divergences'
    });
    this.element.addEventListener('keydown', e => {
      const target = e.target as HTMLElement;
      if (target.tagName === 'SELECT' || target.tagName === 'INPUT') {
        return;
      }
      const command = STEP_KEYS[e.key];
      if (command) {
        e.preventDefault();
        this.step(command);
      }
    });
    this.unsubscribe = ctx.onChange(keys => {
      if (keys.has('run') || keys.has('currentDivergence') || keys.has('comparison') || keys.has('history')) {
        this.render();
      }
    });
    this.render();
  }

  dispose(): void {
    this.unsubscribe();
  }

  get count(): number {
    return this.ctx.run?.cases.filter(c => !c.ok).length ?? 0;
  }

  step(command: StepCommand): void {
    const stepper = new Stepper(this.ctx.divergences.length, this.ctx.host.get('currentDivergence'));
    const index = stepper.step(command);
    if (index >= 0) {
      const d = this.ctx.divergences[index];
      this.ctx.host.set({ currentDivergence: index, selectedMethod: d.method, selectedNode: d.traceNode ?? -1 });
    }
  }

  render(): void {
    clear(this.element);
    const run = this.ctx.run;
    if (!run) {
      return;
    }
    if (!run.raw.check) {
      append(
        this.element,
        h(
          'p',
          { class: 'jp-TraceExplorer-empty' },
          run.error ? 'Tracing failed: nothing was checked.' : 'The check was off (check_trace=False).'
        )
      );
    } else {
      append(
        this.element,
        h(
          'p',
          { class: run.raw.check.ok ? 'jp-TraceExplorer-verdict jp-mod-ok' : 'jp-TraceExplorer-verdict jp-mod-error' },
          run.raw.check.ok
            ? `Check passed on ${run.cases.length} input set(s).`
            : `Check failed (tolerance ${run.raw.check.tolerance}).`
        )
      );
      for (const c of run.cases) {
        append(this.element, this.caseSection(c));
      }
      append(this.element, this.stepperSection());
    }
    append(this.element, this.compareSection());
  }

  private caseSection(c: CheckCase): HTMLElement {
    const outputs = c.outputs.map(o =>
      h(
        'tr',
        { class: o.ok ? 'jp-mod-ok' : 'jp-mod-error' },
        h('td', {}, `output ${o.index + 1} vs ${o.against === 'python' ? 'Python' : 're-trace'}`),
        h('td', {}, o.ok ? 'ok' : 'MISMATCH'),
        h('td', {}, `max abs ${formatNumber(floatValue(o.max_abs))}`),
        h('td', {}, `max rel ${formatNumber(floatValue(o.max_rel))}`),
        h(
          'td',
          { class: 'jp-TraceExplorer-muted' },
          `rtol ${formatNumber(floatValue(o.rtol))}, atol ${formatNumber(floatValue(o.atol))}`
        )
      )
    );
    const diff = c.diff;
    const roots = diff?.roots.length ?? 0;
    const downstream = diff?.downstream.length ?? 0;
    return h(
      'div',
      { class: 'jp-TraceExplorer-case' },
      h(
        'h4',
        {},
        `${c.label}`,
        h('span', { class: 'jp-TraceExplorer-muted' }, ` ${c.method}(${c.inputs.join(', ')})`),
        h(
          'span',
          { class: c.ok ? 'jp-TraceExplorer-badge jp-mod-ok' : 'jp-TraceExplorer-badge jp-mod-error' },
          c.ok ? 'ok' : 'failed'
        )
      ),
      c.exception
        ? h('p', { class: 'jp-TraceExplorer-message jp-mod-error' }, c.exception.message.split('\n')[0])
        : null,
      outputs.length ? h('table', { class: 'jp-TraceExplorer-table' }, h('tbody', {}, ...outputs)) : null,
      diff && (roots || downstream)
        ? h('p', {}, `${roots} root divergence${roots === 1 ? '' : 's'}, ${downstream} downstream`)
        : null,
      c.textDiffers
        ? h('p', { class: 'jp-TraceExplorer-muted' }, "torch's printed graphs differ only in debug names")
        : null,
      diff && diff.constantDiffs.length
        ? h('p', {}, `${diff.constantDiffs.length} tensor constant(s) differ in value`)
        : null
    );
  }

  private stepperSection(): HTMLElement {
    const all = this.ctx.divergences;
    const current = this.ctx.host.get('currentDivergence');
    const stepper = new Stepper(all.length, current);
    const controls = h(
      'div',
      { class: 'jp-TraceExplorer-stepper', role: 'toolbar', 'aria-label': 'divergence stepper' },
      button('«', () => this.step('first'), {
        title: 'first (Home)',
        'aria-label': 'first divergence',
        disabled: !stepper.canStep('first')
      }),
      button('‹', () => this.step('previous'), {
        title: 'previous (← or k)',
        'aria-label': 'previous divergence',
        disabled: !stepper.canStep('previous')
      }),
      h('span', { class: 'jp-TraceExplorer-stepLabel', 'aria-live': 'polite' }, stepper.label),
      button('›', () => this.step('next'), {
        title: 'next (→ or j)',
        'aria-label': 'next divergence',
        disabled: !stepper.canStep('next')
      }),
      button('»', () => this.step('last'), {
        title: 'last (End)',
        'aria-label': 'last divergence',
        disabled: !stepper.canStep('last')
      })
    );
    const list = h(
      'ol',
      { class: 'jp-TraceExplorer-divergences' },
      ...all
        .map((d, i) => ({ d, i }))
        .filter(({ d }) => d.kind === 'root')
        .map(({ d, i }) =>
          h(
            'li',
            { class: i === current ? 'jp-mod-active' : '' },
            button(
              d.reason || d.kind,
              () =>
                this.ctx.host.set({ currentDivergence: i, selectedMethod: d.method, selectedNode: d.traceNode ?? -1 }),
              { class: 'jp-TraceExplorer-link' }
            )
          )
        )
    );
    const section = h(
      'div',
      { class: 'jp-TraceExplorer-section' },
      h('h4', {}, 'Divergences'),
      controls,
      all.length ? list : null
    );
    const d = this.ctx.currentDivergence;
    const run = this.ctx.run;
    if (d && run) {
      const c = run.caseOf(d);
      const trace = run.graphs.get(d.method) ?? null;
      const check = c?.graph ?? trace;
      if (c && c.diff && trace && check) {
        section.appendChild(this.sideBySideSection(trace, check, c.diff, d));
      }
    }
    return section;
  }

  private sideBySideSection(trace: TraceGraph, check: TraceGraph, diff: GraphDiff, d: Divergence): HTMLElement {
    const left = h('div', { class: 'jp-TraceExplorer-side', 'data-side': 'trace' });
    const right = h('div', { class: 'jp-TraceExplorer-side', 'data-side': 'check' });
    const sbs = sideBySide(trace, check, diff, d, this.ctx.run?.fileNames);
    this.rendered = Promise.all([
      drawInto(left, sbs.traceDot, name => {
        const id = sbs.traceNames.get(name);
        if (id !== undefined) {
          this.ctx.host.set({ selectedNode: id });
        }
      }),
      drawInto(right, sbs.checkDot)
    ]).then(() => undefined);
    return h(
      'div',
      { class: 'jp-TraceExplorer-sideBySide' },
      h('p', { class: 'jp-TraceExplorer-reason' }, `${d.kind}: ${d.reason || 'reads a diverged value'}`),
      h('div', { class: 'jp-TraceExplorer-sides' }, left, right),
      h(
        'div',
        { class: 'jp-TraceExplorer-sides' },
        sourceLine(this.ctx.run, trace, d.traceNode, 'trace'),
        sourceLine(this.ctx.run, check, d.checkNode, 'check')
      )
    );
  }

  private compareSection(): HTMLElement {
    const history = this.ctx.host.get('history');
    const section = h(
      'div',
      { class: 'jp-TraceExplorer-section jp-TraceExplorer-compare' },
      h('h4', {}, 'Compare two runs')
    );
    if (history.length < 2 || this.ctx.host.readOnly) {
      append(
        section,
        h(
          'p',
          { class: 'jp-TraceExplorer-muted' },
          this.ctx.host.readOnly
            ? 'Comparing runs needs the live explorer.'
            : 'Re-trace with other options to compare runs.'
        )
      );
      return section;
    }
    const options = (selected: string): HTMLOptionElement[] =>
      history.map((e, i) =>
        h(
          'option',
          { value: e.run_id, selected: e.run_id === selected },
          `#${i + 1} ${e.ok ? 'ok' : 'problems'} · ${e.summary.slice(0, 60)}`
        )
      );
    this.compareA ||= history[history.length - 2].run_id;
    this.compareB ||= history[history.length - 1].run_id;
    const a = h('select', { 'aria-label': 'run A' }, ...options(this.compareA));
    const b = h('select', { 'aria-label': 'run B' }, ...options(this.compareB));
    a.addEventListener('change', () => (this.compareA = a.value));
    b.addEventListener('change', () => (this.compareB = b.value));
    append(
      section,
      h(
        'div',
        { class: 'jp-TraceExplorer-row' },
        a,
        b,
        button('compare', () =>
          this.ctx.host.send({ type: 'compare', a: a.value, b: b.value, method: this.ctx.method })
        )
      )
    );
    const cmp = this.ctx.host.get('comparison');
    if (cmp && cmp.graph_a && cmp.graph_b) {
      const ga = decodeGraph(cmp.graph_a);
      const gb = decodeGraph(cmp.graph_b);
      const diff = new GraphDiff(cmp.diff);
      const roots = diff.roots;
      append(
        section,
        h(
          'p',
          {},
          roots.length
            ? `${roots.length} root divergence(s), ${diff.downstream.length} downstream`
            : 'The two graphs are structurally identical.'
        )
      );
      if (roots.length) {
        const list = h('ol', { class: 'jp-TraceExplorer-divergences' });
        const view = h('div');
        roots.forEach(r => {
          list.appendChild(
            h(
              'li',
              {},
              button(
                r.reason,
                () => {
                  clear(view);
                  view.appendChild(this.sideBySideSection(ga, gb, diff, r));
                },
                { class: 'jp-TraceExplorer-link' }
              )
            )
          );
        });
        append(section, list, view);
        view.appendChild(this.sideBySideSection(ga, gb, diff, roots[0]));
      }
    }
    return section;
  }
}
