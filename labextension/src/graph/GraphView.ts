/**
 * The SSA graph: Graphviz layout off the main thread, module groups that expand and collapse on
 * click, folded constants (toggle), highlights, search with next / previous, and the toolbar. Pan,
 * zoom and fit are the viewport's (viewport.ts); the downloads are in export.ts.
 *
 * Only the visible part is laid out: a big graph opens with its modules collapsed (repeated blocks folded
 * into one box) and each expansion lays out one more level. Selection and other highlights are applied to
 * the drawn SVG directly, so they never cost a re-layout.
 *
 * The first picture of a run opens on what matters (`openingFocus`): the check's root divergence, else the
 * first warned node, else the inputs and the top-level modules. Jumps to a node (search, inspector links,
 * warnings, `revealNode`) open the groups hiding it and pan there in a short animation.
 *
 * Other graph features hook in from outside: `viewport` (its view and `onViewChange`), `onRendered` (each new
 * picture) and `revealNode`.
 */

import { ExplorerContext } from '../state/context';
import { button, clear, h } from '../state/dom';
import { HostKey } from '../state/host';
import { visibleDot, VisibleGraph } from '../model/dot';
import { domId } from '../model/dotText';
import { TraceGraph } from '../model/graph';
import { GroupTree } from '../model/groups';
import { inputsAnchor, openingFocus, Point } from '../model/opening';
import { layoutDot } from './layout';
import { exportDot, exportJson } from './export';
import { GraphSearch } from './graphSearch';
import { elementFor, markHighlights } from './highlights';
import { onLabelRow, svgElement, textAnchor } from './svg';
import { GraphTools } from './tools';
import { Viewport } from './viewport';

/**
 * "expand all" opens groups breadth-first up to this many drawn items: Graphviz lays out and the page draws a
 * few thousand boxes in a second or two; 70,000 would take minutes and exhaust Graphviz's stack.
 */
const MAX_LAYOUT_ITEMS = 2000;

/** Performance marks the browser benchmark reads. */
export const MARK_STATE = 'tracejit:state';
export const MARK_INTERACTIVE = 'tracejit:interactive';

export class GraphView {
  readonly element: HTMLElement;
  /** Called after the user clicked a node in the picture (the explorer then shows the inspector). */
  onNodeClicked: ((nodeId: number) => void) | null = null;
  /** Settles when the latest requested picture is on screen (tests and benchmarks wait on it). */
  rendered: Promise<void> = Promise.resolve();

  /** Pan and zoom of the canvas (public so other views, a minimap, can follow and move it). */
  readonly viewport = new Viewport();
  private readonly tools: GraphTools;
  private readonly status: HTMLElement;
  private readonly finder: GraphSearch;
  private readonly methodSelect: HTMLSelectElement;
  private readonly foldBox: HTMLInputElement;
  private visible: VisibleGraph | null = null;
  private expanded = new Map<string, Set<string>>();
  private fold = true;
  private seq = 0;
  /** svg element id -> group id, for clicks on boxes and clusters */
  private groupOfSvgId = new Map<string, string>();
  private marked: Element[] = [];
  private unsubscribe: () => void;
  private renderedKey = '';
  /** A message for the next picture's status line (why "expand all" stopped short). */
  private notice = '';
  private readonly renderedListeners: ((svg: SVGSVGElement) => void)[] = [];

  constructor(private readonly ctx: ExplorerContext) {
    this.tools = new GraphTools(ctx, {
      viewport: this.viewport,
      toggleGroup: id => this.toggleGroup(id),
      inspect: id => this.onNodeClicked?.(id)
    });
    this.methodSelect = h('select', { class: 'jp-TraceExplorer-method', 'aria-label': 'traced method' });
    this.methodSelect.addEventListener('change', () =>
      ctx.host.set({ selectedMethod: this.methodSelect.value, selectedNode: -1 })
    );
    this.foldBox = h('input', { type: 'checkbox', checked: true, 'aria-label': 'fold constants and plumbing' });
    this.foldBox.addEventListener('change', () => {
      this.fold = this.foldBox.checked;
      this.refresh();
    });
    this.finder = new GraphSearch(
      ctx,
      () => !this.fold,
      () => this.applyHighlights()
    );
    const toolbar = h(
      'div',
      { class: 'jp-TraceExplorer-toolbar', role: 'toolbar' },
      this.methodSelect,
      ...this.finder.toolbarItems,
      h('label', { class: 'jp-TraceExplorer-toggle' }, this.foldBox, 'fold constants'),
      button('−', () => this.viewport.zoom(1.25), { title: 'zoom out (-)', 'aria-label': 'zoom out' }),
      button('+', () => this.viewport.zoom(0.8), { title: 'zoom in (+)', 'aria-label': 'zoom in' }),
      button('fit', () => this.viewport.fit(true), { title: 'show the whole graph (0)' }),
      button('expand all', () => this.setAllExpanded(true)),
      button('collapse all', () => this.setAllExpanded(false)),
      ...this.tools.toolbarItems,
      button('DOT', () => exportDot(ctx, this.fold), { title: 'download the whole graph as DOT' }),
      button('JSON', () => exportJson(ctx), { title: 'download the run as JSON' })
    );
    this.status = h('div', { class: 'jp-TraceExplorer-graphStatus', 'aria-live': 'polite' });
    this.element = h('div', { class: 'jp-TraceExplorer-graph' }, toolbar, this.viewport.element, this.status);
    this.tools.attach(this.element);
    this.viewport.element.addEventListener('click', e => this.onClick(e));
    this.viewport.element.addEventListener('keydown', e => this.onKey(e));
    this.unsubscribe = ctx.onChange(keys => this.onHostChange(keys));
    // the explorer's other panels are built first; then the group tree and the first layout request each get a
    // task of their own, so no one task blocks the page for long on a big graph
    const nextTask = (): Promise<void> => new Promise(resolve => setTimeout(resolve, 0));
    this.rendered = nextTask()
      .then(() => {
        this.tree();
        return nextTask();
      })
      .then(() => {
        this.refresh();
        return this.rendered;
      });
  }

  dispose(): void {
    this.unsubscribe();
    this.tools.dispose();
  }

  /** Call `listener` each time a new picture is on screen (after its highlights and first placing). */
  onRendered(listener: (svg: SVGSVGElement) => void): void {
    this.renderedListeners.push(listener);
  }

  /** Open the groups hiding a node, and pan to it (or the box standing for it) in a short animation. */
  revealNode(nodeId: number): Promise<void> {
    if (this.reveal([nodeId])) {
      this.refresh(nodeId);
      return this.rendered;
    }
    this.centerOn(nodeId);
    return Promise.resolve();
  }

  /** The node the first picture of the method on screen is centred on (model/opening.ts), or null. */
  openingFocus(): number | null {
    const run = this.ctx.run;
    return run ? openingFocus(run, this.ctx.method, this.ctx.currentDivergence) : null;
  }

  private onHostChange(keys: Set<HostKey>): void {
    if (keys.has('run') || keys.has('selectedMethod')) {
      this.finder.cursor = null;
      this.refresh();
      return;
    }
    if (keys.has('selectedNode') || keys.has('currentDivergence')) {
      const node = this.ctx.host.get('selectedNode');
      const div = this.ctx.currentDivergence;
      const focus = keys.has('currentDivergence') && div && div.method === this.ctx.method ? div.traceNode : node;
      if (focus !== null && focus >= 0 && this.reveal([focus])) {
        this.refresh(focus);
      } else {
        this.applyHighlights();
        if (focus !== null && focus >= 0) {
          this.centerOn(focus);
        }
      }
    }
  }

  private tree(): GroupTree | null {
    return this.ctx.groups();
  }

  private expandedSet(): Set<string> {
    const method = this.ctx.method;
    let set = this.expanded.get(method);
    const tree = this.tree();
    if (!set && tree) {
      set = tree.autoExpanded();
      this.expanded.set(method, set);
    }
    return set ?? new Set(['']);
  }

  /** Open the groups hiding these nodes; true when something had to be opened. */
  reveal(nodeIds: number[]): boolean {
    const tree = this.tree();
    if (!tree) {
      return false;
    }
    const before = this.expandedSet();
    const after = tree.revealing(
      nodeIds.filter(id => id >= 0 && id < (this.ctx.graph?.size ?? 0)),
      before
    );
    if (after.size === before.size) {
      return false;
    }
    this.expanded.set(this.ctx.method, after);
    return true;
  }

  toggleGroup(groupId: string): void {
    const tree = this.tree();
    if (!tree) {
      return;
    }
    const before = this.expandedSet();
    const set = before.has(groupId) ? tree.closed(groupId, before) : tree.opened(groupId, before);
    this.expanded.set(this.ctx.method, set);
    // bring the group into view once it is drawn: its cluster when opened, its box when closed
    this.refresh(null, `${set.has(groupId) ? 'cluster' : 'scope'}-${domId(groupId)}`);
  }

  private setAllExpanded(open: boolean): void {
    const tree = this.tree();
    if (!tree) {
      return;
    }
    const set = open ? tree.autoExpanded(MAX_LAYOUT_ITEMS, true) : new Set(['']);
    this.expanded.set(this.ctx.method, set);
    // ("collapse all" closes everything on purpose: nothing to explain)
    this.notice =
      open && set.size < tree.groups.size
        ? `opened ${set.size.toLocaleString()} of ${tree.groups.size.toLocaleString()} groups: ` +
          `${tree.group('').opCount.toLocaleString()} ops are more than one picture holds; click a box to open it`
        : '';
    this.refresh();
    this.notice = '';
  }

  /** Re-lay out the visible graph; a newer call supersedes an older one still in the worker. */
  refresh(focus: number | null = null, focusElementId: string | null = null): void {
    const run = this.ctx.run;
    const graph = this.ctx.graph;
    const tree = this.tree();
    this.updateMethods();
    if (!run || !graph || !tree) {
      this.viewport.clear();
      this.status.textContent = this.ctx.error ?? (run?.error ? 'no graph: tracing failed' : 'no graph');
      this.rendered = Promise.resolve();
      return;
    }
    const seq = ++this.seq;
    const key = `${run.runId}:${this.ctx.method}`;
    const keepView = key === this.renderedKey;
    if (!keepView && focus === null && focusElementId === null) {
      // a new run or method: open on what matters, its groups opened
      const opening = this.openingFocus();
      if (opening !== null && opening >= 0 && opening < graph.size) {
        this.reveal([opening]);
        focus = opening;
      }
    }
    this.visible = visibleDot(graph, tree, { expanded: this.expandedSet(), fold: this.fold, fileNames: run.fileNames });
    const visible = this.visible;
    this.groupOfSvgId.clear();
    for (const id of tree.groups.keys()) {
      this.groupOfSvgId.set(`scope-${domId(id)}`, id);
      this.groupOfSvgId.set(`cluster-${domId(id)}`, id);
    }
    const notice = this.notice;
    this.status.textContent = `laying out ${visible.items.length} items…`;
    this.rendered = layoutDot(visible.dot)
      .then(svgText => {
        if (seq !== this.seq) {
          return null; // superseded: never show a stale picture
        }
        const parsed = svgElement(svgText);
        // parsing and inserting a big SVG are separate tasks, so neither blocks the page for long
        return new Promise<SVGSVGElement>(resolve => setTimeout(() => resolve(parsed), 0));
      })
      .then(
        svg => {
          if (svg !== null && seq === this.seq) {
            this.status.textContent = pictureStatus(visible, graph, notice);
            this.showPicture(svg, { seq, key, keepView, focus, focusElementId });
          }
        },
        (err: Error) => {
          if (seq === this.seq) {
            this.status.textContent = `layout failed: ${err.message}`;
          }
        }
      );
  }

  /**
   * Put a laid-out picture on screen: placed on `focus` (a first picture) or where the view was (`keepView`), its
   * highlights applied, then the view moved to `focus` or `focusElementId` (an expansion, a reveal).
   */
  private showPicture(
    svg: SVGSVGElement,
    shown: { seq: number; key: string; keepView: boolean; focus: number | null; focusElementId: string | null }
  ): void {
    const { seq, keepView, focus, focusElementId } = shown;
    this.viewport.show(svg, keepView, () => {
      const at = focus !== null ? this.anchorOf(svg, focus) : null;
      this.viewport.openAt(at ?? this.inputsAnchor(svg), at !== null);
    });
    this.marked = [];
    this.renderedKey = shown.key;
    this.applyHighlights();
    if (focus !== null && keepView) {
      this.centerOn(focus); // an expansion or a reveal: pan there (a first picture opened on it)
    }
    if (focusElementId !== null) {
      // measuring a cluster's box forces a layout: do it in the next frame, after the picture is up
      requestAnimationFrame(() => {
        const el = svg.querySelector<SVGGraphicsElement>(`[id="${CSS.escape(focusElementId)}"]`);
        if (seq === this.seq && el) {
          this.viewport.zoomTo(el);
        }
      });
    }
    performance.mark(MARK_INTERACTIVE);
    for (const listener of this.renderedListeners) {
      listener(svg);
    }
  }

  private updateMethods(): void {
    const run = this.ctx.run;
    const methods = run ? [...run.graphs.keys()] : [];
    const current = Array.from(this.methodSelect.options).map(o => o.value);
    if (current.join('\u0000') !== methods.join('\u0000')) {
      clear(this.methodSelect);
      methods.forEach(m => this.methodSelect.appendChild(h('option', { value: m }, m)));
    }
    this.methodSelect.value = this.ctx.method;
    this.methodSelect.style.display = methods.length > 1 ? '' : 'none';
  }

  private elementFor(nodeId: number): SVGGraphicsElement | null {
    const svg = this.viewport.svg;
    const tree = this.tree();
    return svg && this.visible && tree ? elementFor(svg, this.visible, tree, nodeId) : null;
  }

  /** Put the context's highlight classes (and search hits) on the drawn elements. */
  applyHighlights(): void {
    const svg = this.viewport.svg;
    const tree = this.tree();
    if (!svg) {
      return;
    }
    const classes = this.ctx.highlights();
    const cursor = this.finder.cursor;
    if (cursor) {
      cursor.hits.forEach(id => {
        let set = classes.get(id);
        if (!set) {
          classes.set(id, (set = new Set()));
        }
        set.add(id === cursor.current ? 'search-current' : 'search-hit');
      });
    }
    if (this.visible && tree) {
      this.marked = markHighlights(svg, this.visible, tree, classes, this.marked);
    }
  }

  private onClick(e: MouseEvent): void {
    if (this.viewport.dragged) {
      return;
    }
    const target = (e.target as Element).closest('g.node, g.cluster');
    if (!target) {
      return;
    }
    const id = target.getAttribute('id') ?? '';
    const group = this.groupOfSvgId.get(id);
    if (group !== undefined) {
      if (target.classList.contains('node') || onLabelRow(this.viewport.svg, target, e)) {
        this.toggleGroup(group);
      }
      return;
    }
    const m = /^n(\d+)$/.exec(id);
    if (m) {
      this.ctx.host.set({ selectedNode: Number(m[1]) });
      this.onNodeClicked?.(Number(m[1]));
    }
  }

  /**
   * Escape clears the selection; with nothing selected it is left to the explorer (it leaves full screen). The
   * viewport handles the keys that pan and zoom.
   */
  private onKey(e: KeyboardEvent): void {
    if (e.key === 'Escape' && this.ctx.host.get('selectedNode') >= 0) {
      this.ctx.host.set({ selectedNode: -1 });
      e.preventDefault();
    }
  }

  /** Pan to the node (or the box or op standing for it), read from the SVG's own coordinates: no forced layout. */
  private centerOn(nodeId: number): void {
    const svg = this.viewport.svg;
    const at = svg ? this.anchorOf(svg, nodeId) : null;
    if (at) {
      this.viewport.centerAt(at, true);
    }
  }

  private anchorOf(svg: SVGSVGElement, nodeId: number): { x: number; y: number } | null {
    const el = this.elementFor(nodeId);
    return el ? textAnchor(svg, el) : null;
  }

  /** Where a picture with no focus opens (model/opening.ts `inputsAnchor`), in layout units. */
  private inputsAnchor(svg: SVGSVGElement): Point | null {
    // drawn in the graph's input order (the DOT lists them so)
    const points = Array.from(svg.querySelectorAll<SVGGraphicsElement>('g.node.input'))
      .map(el => textAnchor(svg, el))
      .filter((p): p is Point => p !== null);
    return inputsAnchor(points, this.viewport.readableWidth);
  }

  /** Put `query` in the search box and select its first hit (a location link, a warning's line); the hits. */
  search(query: string): number[] {
    return this.finder.search(query);
  }
}

/** The status line under a picture: what it shows of the graph, and why "expand all" stopped short. */
function pictureStatus(visible: VisibleGraph, graph: TraceGraph, notice: string): string {
  const total = graph.nodes.filter(n => n.role === 'op').length;
  const count = (n: number, what: string): string => `${n.toLocaleString()} ${what}${n === 1 ? '' : 's'}`;
  return (
    `${count(visible.items.length, 'item')} shown (${count(visible.boxes.length, 'collapsed group')}) · ` +
    `${count(total, 'op')} · ${count(graph.size, 'node')}` +
    (notice ? ` · ${notice}` : '')
  );
}
