/**
 * Any two runs of the history compared (the live explorer only): two pickers and "compare" ask the kernel for the
 * structural diff of their graphs; its roots are listed, one in detail, and shown side by side in the check's
 * comparison panes ("run 1" / "run 2", as the history names them). The check panel owns the panes and whether
 * they follow this or the check.
 */

import { ExplorerContext } from '../state/context';
import { append, button, h } from '../state/dom';
import { decodeGraph, TraceGraph } from '../model/graph';
import { historyLabel } from '../model/history';
import type { HistoryEntry } from '../model/protocol';
import { GraphDiff, plural } from '../model/run';
import { Comparison } from './comparison';

export class RunComparison {
  /** the root of the comparison the panes show */
  root = 0;
  private compareA = '';
  private compareB = '';

  /**
   * `show(root, render)`: the panes follow the two runs, on `root` (re-drawn now when `render`); `detail(cmp)`:
   * the check panel's detail of one divergence, both source lines.
   */
  constructor(
    private readonly ctx: ExplorerContext,
    private readonly show: (root: number, render: boolean) => void,
    private readonly detail: (cmp: Comparison) => HTMLElement
  ) {}

  /** The roots of the two runs compared, as comparisons named "run 1" / "run 2" as the history lists them. */
  comparisons(): Comparison[] {
    const history = this.ctx.host.get('history');
    const cmp = this.ctx.host.get('comparison');
    if (!cmp || !cmp.graph_a || !cmp.graph_b || this.ctx.host.readOnly) {
      return [];
    }
    const runLabel = (id: string): string => {
      const i = history.findIndex(e => e.run_id === id);
      return i >= 0 ? `run ${i + 1}` : 'other run';
    };
    const labels: [string, string] = [runLabel(cmp.a), runLabel(cmp.b)];
    const key = `runs:${cmp.a}:${cmp.b}`;
    if (this.decoded?.key !== key) {
      this.decoded = {
        key,
        a: decodeGraph(cmp.graph_a),
        b: decodeGraph(cmp.graph_b),
        diff: new GraphDiff(cmp.diff)
      };
    }
    const { a, b, diff } = this.decoded;
    return diff.roots.map((r, i) => ({
      key: `${key}:${i}`,
      title: `${labels[0]} ↔ ${labels[1]}: ${r.reason || r.kind}`,
      labels,
      a,
      b,
      diff,
      divergence: r
    }));
  }

  /** The two runs' graphs, decoded once per comparison. */
  private decoded: { key: string; a: TraceGraph; b: TraceGraph; diff: GraphDiff } | null = null;

  /** The section: two pickers, compare, and the roots of the comparison the kernel sent (one shown in detail). */
  section(): HTMLElement {
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
    append(section, this.pickers(history));
    const cmp = this.ctx.host.get('comparison');
    if (cmp && cmp.graph_a && cmp.graph_b) {
      append(section, ...this.roots());
    }
    return section;
  }

  /** The two runs' pickers (the two last runs at first) and "compare". */
  private pickers(history: readonly HistoryEntry[]): HTMLElement {
    const options = (selected: string): HTMLOptionElement[] =>
      history.map((e, i) =>
        h('option', { value: e.run_id, selected: e.run_id === selected }, historyLabel(history, i))
      );
    this.compareA ||= history[history.length - 2].run_id;
    this.compareB ||= history[history.length - 1].run_id;
    const a = h('select', { 'aria-label': 'run A' }, ...options(this.compareA));
    const b = h('select', { 'aria-label': 'run B' }, ...options(this.compareB));
    a.addEventListener('change', () => (this.compareA = a.value));
    b.addEventListener('change', () => (this.compareB = b.value));
    return h(
      'div',
      { class: 'jp-TraceExplorer-row' },
      a,
      b,
      button('compare', () => {
        // the two runs' first root is shown side by side when the kernel's answer comes
        const shown = this.ctx.host.get('comparison');
        // the same two runs as before: the answer changes nothing, show what is here
        const same = shown !== null && shown.a === a.value && shown.b === b.value;
        this.show(0, false);
        this.ctx.host.send({ type: 'compare', a: a.value, b: b.value, method: this.ctx.method });
        if (same) {
          this.show(0, true);
        }
      })
    );
  }

  /** What the kernel's comparison found: how many roots, each a link, and the one shown in detail. */
  private roots(): HTMLElement[] {
    const roots = this.comparisons();
    const count = h(
      'p',
      {},
      roots.length
        ? `${plural(roots.length, 'root divergence')}, ${roots[0].diff.downstream.length} downstream`
        : 'The two graphs are structurally identical.'
    );
    if (!roots.length) {
      return [count];
    }
    const shown = Math.min(this.root, roots.length - 1);
    return [
      count,
      h(
        'ol',
        { class: 'jp-TraceExplorer-divergences' },
        ...roots.map((r, i) =>
          h(
            'li',
            { class: i === shown ? 'jp-mod-active' : '' },
            // a root picked from the list is shown side by side at once
            button(r.divergence.reason, () => this.show(i, true), { class: 'jp-TraceExplorer-link' })
          )
        )
      ),
      this.detail(roots[shown])
    ];
  }
}
