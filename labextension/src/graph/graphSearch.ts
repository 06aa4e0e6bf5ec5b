/**
 * The graph's search box (model/search.ts reads the query: kind, %name, scope:…, file.py:12): its matches are
 * highlighted, Enter / Shift+Enter or ‹ › walk them, and the one reached is selected.
 */

import { SearchCursor, searchNodes } from '../model/search';
import { ExplorerContext } from '../state/context';
import { button, h } from '../state/dom';

export class GraphSearch {
  /** the box, ‹ and ›, and the `2 of 5` label, in the toolbar's order */
  readonly toolbarItems: HTMLElement[];
  /** the matches and the one reached; null when the box is empty */
  cursor: SearchCursor | null = null;
  private readonly input: HTMLInputElement;
  private readonly label: HTMLElement;

  /**
   * `includeFolded`: whether folded nodes can match (they are drawn when folding is off); `repaint`: put the
   * highlights on the picture again.
   */
  constructor(
    private readonly ctx: ExplorerContext,
    private readonly includeFolded: () => boolean,
    private readonly repaint: () => void
  ) {
    this.input = h('input', {
      type: 'search',
      class: 'jp-TraceExplorer-search',
      placeholder: 'search: kind, %name, scope:…, file.py:12',
      'aria-label': 'search nodes'
    });
    this.label = h('span', { class: 'jp-TraceExplorer-searchLabel', 'aria-live': 'polite' });
    this.input.addEventListener('input', () => this.run());
    this.input.addEventListener('keydown', e => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.step(e.shiftKey ? -1 : 1);
      }
    });
    this.toolbarItems = [
      this.input,
      button('‹', () => this.step(-1), { title: 'previous match (Shift+Enter)', 'aria-label': 'previous match' }),
      button('›', () => this.step(1), { title: 'next match (Enter)', 'aria-label': 'next match' }),
      this.label
    ];
  }

  /** Search the graph on screen for the box's query again (a new run or method: its own matches). */
  run(): void {
    const graph = this.ctx.graph;
    const q = this.input.value;
    this.cursor =
      graph && q.trim()
        ? new SearchCursor(
            searchNodes(graph, q, { ...this.ctx.searchOptions(graph.method), includeFolded: this.includeFolded() })
          )
        : null;
    this.label.textContent = this.cursor ? this.cursor.label : '';
    this.repaint();
  }

  /** Put `query` in the box and select its first hit (a location link, a warning's line); the hits. */
  search(query: string): number[] {
    this.input.value = query;
    this.run();
    this.step(1);
    return this.cursor?.hits ?? [];
  }

  /** Select the next (1) or previous (-1) match. */
  step(direction: number): void {
    if (!this.cursor) {
      this.run();
    }
    const cursor = this.cursor;
    if (!cursor) {
      return;
    }
    const id = direction > 0 ? cursor.next() : cursor.previous();
    this.label.textContent = cursor.label;
    if (id !== null) {
      this.ctx.host.set({ selectedNode: id });
    }
  }
}
