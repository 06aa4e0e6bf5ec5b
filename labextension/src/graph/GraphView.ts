/**
 * The SSA graph: Graphviz layout off the main thread, pan / zoom / fit, module groups that expand
 * and collapse on click, folded constants (toggle), highlights, search with next / previous, and
 * export (SVG of the view, DOT and JSON of the graph).
 *
 * Only the visible part is laid out: a big graph opens with its modules collapsed and each expansion
 * lays out one more level. Selection and other highlights are applied to the drawn SVG directly, so
 * they never cost a re-layout.
 */

import { ExplorerContext } from '../state/context';
import { button, clear, h } from '../state/dom';
import { HostKey } from '../state/host';
import { domId, visibleDot, VisibleGraph } from '../model/dot';
import { GroupTree } from '../model/groups';
import { SearchCursor, searchNodes } from '../model/search';
import { layoutDot } from './layout';
import { svgElement } from './svg';

interface ViewBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

const HIGHLIGHT_CLASSES = [
  'selected',
  'root',
  'downstream',
  'current',
  'warning',
  'hazard',
  'search-hit',
  'search-current',
  'has-selected',
  'has-root',
  'has-downstream',
  'has-current',
  'has-warning',
  'has-hazard',
  'has-search-hit',
  'has-search-current'
];

/** Performance marks the browser benchmark reads. */
export const MARK_STATE = 'tracejit:state';
export const MARK_INTERACTIVE = 'tracejit:interactive';
/** Screen pixels per layout unit below which labels are unreadable. */
const MIN_READABLE_SCALE = 0.8;

function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export class GraphView {
  readonly element: HTMLElement;
  /** Called after the user clicked a node in the picture (the explorer then shows the inspector). */
  onNodeClicked: ((nodeId: number) => void) | null = null;
  /** Settles when the latest requested picture is on screen (tests and benchmarks wait on it). */
  rendered: Promise<void> = Promise.resolve();

  private readonly canvas: HTMLElement;
  private readonly status: HTMLElement;
  private readonly searchInput: HTMLInputElement;
  private readonly searchLabel: HTMLElement;
  private readonly methodSelect: HTMLSelectElement;
  private readonly foldBox: HTMLInputElement;
  private svg: SVGSVGElement | null = null;
  private visible: VisibleGraph | null = null;
  private viewBox: ViewBox | null = null;
  private fullBox: ViewBox | null = null;
  private expanded = new Map<string, Set<string>>();
  private fold = true;
  private seq = 0;
  private cursor: SearchCursor | null = null;
  /** svg element id -> group id, for clicks on boxes and clusters */
  private groupOfSvgId = new Map<string, string>();
  private marked: Element[] = [];
  private unsubscribe: () => void;
  private renderedKey = '';
  private needsFit = false;

  constructor(private readonly ctx: ExplorerContext) {
    this.methodSelect = h('select', { class: 'jp-TraceExplorer-method', 'aria-label': 'traced method' });
    this.methodSelect.addEventListener('change', () =>
      ctx.host.set({ selectedMethod: this.methodSelect.value, selectedNode: -1 })
    );
    this.foldBox = h('input', { type: 'checkbox', checked: true, 'aria-label': 'fold constants and plumbing' });
    this.foldBox.addEventListener('change', () => {
      this.fold = this.foldBox.checked;
      this.refresh();
    });
    this.searchInput = h('input', {
      type: 'search',
      class: 'jp-TraceExplorer-search',
      placeholder: 'search: kind, %name, scope:…, file.py:12',
      'aria-label': 'search nodes'
    });
    this.searchLabel = h('span', { class: 'jp-TraceExplorer-searchLabel', 'aria-live': 'polite' });
    this.searchInput.addEventListener('input', () => this.runSearch());
    this.searchInput.addEventListener('keydown', e => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.stepSearch(e.shiftKey ? -1 : 1);
      }
    });
    const toolbar = h(
      'div',
      { class: 'jp-TraceExplorer-toolbar', role: 'toolbar' },
      this.methodSelect,
      this.searchInput,
      button('‹', () => this.stepSearch(-1), { title: 'previous match (Shift+Enter)', 'aria-label': 'previous match' }),
      button('›', () => this.stepSearch(1), { title: 'next match (Enter)', 'aria-label': 'next match' }),
      this.searchLabel,
      h('label', { class: 'jp-TraceExplorer-toggle' }, this.foldBox, 'fold constants'),
      button('−', () => this.zoom(1.25), { title: 'zoom out (-)', 'aria-label': 'zoom out' }),
      button('+', () => this.zoom(0.8), { title: 'zoom in (+)', 'aria-label': 'zoom in' }),
      button('fit', () => this.fit(), { title: 'fit the graph (0)' }),
      button('expand all', () => this.setAllExpanded(true)),
      button('collapse all', () => this.setAllExpanded(false)),
      button('SVG', () => this.exportSvg(), { title: 'download the current view as SVG' }),
      button('DOT', () => this.exportDot(), { title: 'download the whole graph as DOT' }),
      button('JSON', () => this.exportJson(), { title: 'download the run as JSON' })
    );
    this.canvas = h('div', {
      class: 'jp-TraceExplorer-canvas',
      tabindex: 0,
      'aria-label': 'graph; drag to pan, wheel to zoom'
    });
    this.status = h('div', { class: 'jp-TraceExplorer-graphStatus', 'aria-live': 'polite' });
    this.element = h('div', { class: 'jp-TraceExplorer-graph' }, toolbar, this.canvas, this.status);
    this.installPanZoom();
    new ResizeObserver(() => {
      if (this.needsFit && this.canvas.clientWidth > 0) {
        this.needsFit = false;
        this.fit();
      }
    }).observe(this.canvas);
    this.canvas.addEventListener('click', e => this.onClick(e));
    this.canvas.addEventListener('keydown', e => this.onKey(e));
    this.unsubscribe = ctx.onChange(keys => this.onHostChange(keys));
    // the first layout request in a task of its own: the explorer's other panels are built first
    this.rendered = new Promise(resolve => setTimeout(resolve, 0)).then(() => {
      this.refresh();
      return this.rendered;
    });
  }

  dispose(): void {
    this.unsubscribe();
  }

  private onHostChange(keys: Set<HostKey>): void {
    if (keys.has('run') || keys.has('selectedMethod')) {
      this.cursor = null;
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
    const set = new Set(this.expandedSet());
    if (set.has(groupId)) {
      // collapse it and everything inside it
      for (const g of [...set]) {
        if (g === groupId || g.startsWith(groupId === '' ? '' : groupId + '.') || g.startsWith(groupId + '#')) {
          if (g !== '') {
            set.delete(g);
          }
        }
      }
    } else {
      set.add(groupId);
    }
    this.expanded.set(this.ctx.method, set);
    // bring the group into view once it is drawn: its cluster when opened, its box when closed
    this.refresh(null, `${set.has(groupId) ? 'cluster' : 'scope'}-${domId(groupId)}`);
  }

  private setAllExpanded(open: boolean): void {
    const tree = this.tree();
    if (!tree) {
      return;
    }
    this.expanded.set(this.ctx.method, open ? new Set(tree.groups.keys()) : new Set(['']));
    this.refresh();
  }

  /** Re-lay out the visible graph; a newer call supersedes an older one still in the worker. */
  refresh(focus: number | null = null, focusElementId: string | null = null): void {
    const run = this.ctx.run;
    const graph = this.ctx.graph;
    const tree = this.tree();
    this.updateMethods();
    if (!run || !graph || !tree) {
      clear(this.canvas);
      this.svg = null;
      this.status.textContent = this.ctx.error ?? (run?.error ? 'no graph: tracing failed' : 'no graph');
      this.rendered = Promise.resolve();
      return;
    }
    const seq = ++this.seq;
    this.visible = visibleDot(graph, tree, { expanded: this.expandedSet(), fold: this.fold });
    const visible = this.visible;
    this.groupOfSvgId.clear();
    for (const id of tree.groups.keys()) {
      this.groupOfSvgId.set(`scope-${domId(id)}`, id);
      this.groupOfSvgId.set(`cluster-${domId(id)}`, id);
    }
    const key = `${run.runId}:${this.ctx.method}`;
    const keepView = key === this.renderedKey;
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
          if (svg === null || seq !== this.seq) {
            return;
          }
          svg.classList.add('jp-TraceExplorer-svg');
          svg.removeAttribute('width');
          svg.removeAttribute('height');
          clear(this.canvas);
          this.canvas.appendChild(svg);
          this.svg = svg;
          this.marked = [];
          const vb = svg.viewBox.baseVal;
          this.fullBox = { x: vb.x, y: vb.y, w: vb.width, h: vb.height };
          if (!keepView || !this.viewBox) {
            this.fit();
          } else {
            this.setViewBox(this.viewBox);
          }
          this.renderedKey = key;
          const total = graph.nodes.filter(n => n.role === 'op').length;
          this.status.textContent = `${visible.items.length} items shown (${visible.boxes.length} collapsed groups) · ${total} ops · ${graph.size} nodes`;
          this.applyHighlights();
          performance.mark(MARK_INTERACTIVE);
          if (focus !== null || focusElementId !== null) {
            // measuring positions forces a layout: do it in the next frame, after the picture is up
            requestAnimationFrame(() => {
              if (seq !== this.seq) {
                return;
              }
              if (focus !== null) {
                this.centerOn(focus);
              }
              const el = focusElementId
                ? svg.querySelector<SVGGraphicsElement>(`[id="${CSS.escape(focusElementId)}"]`)
                : null;
              if (el) {
                this.zoomTo(el);
              }
            });
          }
        },
        (err: Error) => {
          if (seq === this.seq) {
            this.status.textContent = `layout failed: ${err.message}`;
          }
        }
      );
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

  private svgIdOf(dotName: string): string {
    if (dotName.startsWith('g')) {
      const tree = this.tree();
      const box = this.visible?.boxes.find(b => `g${tree?.index(b)}` === dotName);
      return box !== undefined ? `scope-${domId(box)}` : dotName;
    }
    return dotName;
  }

  private elementFor(nodeId: number): SVGGraphicsElement | null {
    if (!this.svg || !this.visible) {
      return null;
    }
    const name = this.visible.representative.get(nodeId);
    if (!name) {
      return null;
    }
    return this.svg.querySelector(`[id="${CSS.escape(this.svgIdOf(name))}"]`);
  }

  /** Put the context's highlight classes (and search hits) on the drawn elements. */
  applyHighlights(): void {
    if (!this.svg) {
      return;
    }
    for (const el of this.marked) {
      el.classList.remove(...HIGHLIGHT_CLASSES);
    }
    this.marked = [];
    const classes = this.ctx.highlights();
    if (this.cursor) {
      this.cursor.hits.forEach(id => {
        let set = classes.get(id);
        if (!set) {
          classes.set(id, (set = new Set()));
        }
        set.add(id === this.cursor!.current ? 'search-current' : 'search-hit');
      });
    }
    for (const [id, set] of classes) {
      const el = this.elementFor(id);
      if (!el) {
        continue;
      }
      const direct = this.visible?.representative.get(id) === `n${id}`;
      el.classList.add(...[...set].map(c => (direct ? c : `has-${c}`)));
      this.marked.push(el);
    }
  }

  private onClick(e: MouseEvent): void {
    if (this.dragged) {
      return;
    }
    const target = (e.target as Element).closest('g.node, g.cluster');
    if (!target) {
      return;
    }
    const id = target.getAttribute('id') ?? '';
    const group = this.groupOfSvgId.get(id);
    if (group !== undefined) {
      this.toggleGroup(group);
      return;
    }
    const m = /^n(\d+)$/.exec(id);
    if (m) {
      this.ctx.host.set({ selectedNode: Number(m[1]) });
      this.onNodeClicked?.(Number(m[1]));
    }
  }

  private onKey(e: KeyboardEvent): void {
    const step = (this.viewBox?.w ?? 100) * 0.1;
    const moves: Record<string, [number, number]> = {
      ArrowLeft: [-step, 0],
      ArrowRight: [step, 0],
      ArrowUp: [0, -step],
      ArrowDown: [0, step]
    };
    if (e.key in moves && this.viewBox) {
      const [dx, dy] = moves[e.key];
      this.setViewBox({ ...this.viewBox, x: this.viewBox.x + dx, y: this.viewBox.y + dy });
    } else if (e.key === '+' || e.key === '=') {
      this.zoom(0.8);
    } else if (e.key === '-') {
      this.zoom(1.25);
    } else if (e.key === '0') {
      this.fit();
    } else if (e.key === 'Escape') {
      this.ctx.host.set({ selectedNode: -1 });
    } else {
      return;
    }
    e.preventDefault();
  }

  // -- pan and zoom (viewBox) ------------------------------------------------------------------
  private dragged = false;

  private installPanZoom(): void {
    let start: { x: number; y: number; box: ViewBox } | null = null;
    this.canvas.addEventListener('pointerdown', e => {
      if (!this.viewBox || e.button !== 0) {
        return;
      }
      start = { x: e.clientX, y: e.clientY, box: { ...this.viewBox } };
      this.dragged = false;
    });
    this.canvas.addEventListener('pointermove', e => {
      if (!start || !this.svg) {
        return;
      }
      const dx = e.clientX - start.x;
      const dy = e.clientY - start.y;
      if (!this.dragged && Math.hypot(dx, dy) < 4) {
        return;
      }
      if (!this.dragged) {
        this.canvas.setPointerCapture(e.pointerId);
      }
      this.dragged = true;
      const scale = start.box.w / Math.max(1, this.canvas.clientWidth);
      this.setViewBox({ ...start.box, x: start.box.x - dx * scale, y: start.box.y - dy * scale });
    });
    const end = (): void => {
      start = null;
      setTimeout(() => (this.dragged = false), 0);
    };
    this.canvas.addEventListener('pointerup', end);
    this.canvas.addEventListener('pointercancel', end);
    this.canvas.addEventListener(
      'wheel',
      e => {
        if (!this.viewBox) {
          return;
        }
        e.preventDefault();
        const rect = this.canvas.getBoundingClientRect();
        const fx = (e.clientX - rect.left) / Math.max(1, rect.width);
        const fy = (e.clientY - rect.top) / Math.max(1, rect.height);
        this.zoom(e.deltaY > 0 ? 1.15 : 1 / 1.15, fx, fy);
      },
      { passive: false }
    );
  }

  private setViewBox(box: ViewBox): void {
    this.viewBox = box;
    this.svg?.setAttribute('viewBox', `${box.x} ${box.y} ${box.w} ${box.h}`);
  }

  zoom(factor: number, fx = 0.5, fy = 0.5): void {
    if (!this.viewBox) {
      return;
    }
    const b = this.viewBox;
    const w = Math.max(10, b.w * factor);
    const hgt = Math.max(10, b.h * factor);
    this.setViewBox({ x: b.x + (b.w - w) * fx, y: b.y + (b.h - hgt) * fy, w, h: hgt });
  }

  /** The canvas's height / width (the viewBox keeps this aspect so zooming maps 1:1 to the screen). */
  private aspect(): number {
    const w = this.canvas.clientWidth;
    const hgt = this.canvas.clientHeight;
    return w > 0 && hgt > 0 ? hgt / w : 1;
  }

  /**
   * Show the whole graph, unless that would shrink labels below readability (a deep chain is a tall
   * column): then show its top at the smallest readable scale, and the user pans down.
   */
  fit(): void {
    if (!this.fullBox) {
      return;
    }
    const pad = 8;
    const full = {
      x: this.fullBox.x - pad,
      y: this.fullBox.y - pad,
      w: this.fullBox.w + 2 * pad,
      h: this.fullBox.h + 2 * pad
    };
    if (this.canvas.clientWidth === 0) {
      // not on screen yet (a hidden tab, an output not attached): show everything, fit again once sized
      this.needsFit = true;
      this.setViewBox(full);
      return;
    }
    const aspect = this.aspect();
    const px = Math.max(1, this.canvas.clientWidth);
    let w = Math.max(full.w, full.h / aspect);
    w = Math.min(w, px / MIN_READABLE_SCALE);
    const hgt = w * aspect;
    this.setViewBox({
      x: full.x + full.w / 2 - w / 2,
      y: full.h <= hgt ? full.y + full.h / 2 - hgt / 2 : full.y,
      w,
      h: hgt
    });
  }

  /** Zoom so the element fills the view, at most 1.5x its natural size. */
  zoomTo(el: SVGGraphicsElement): void {
    const rect = this.userRect(el);
    if (!rect) {
      return;
    }
    const aspect = this.aspect();
    const px = Math.max(1, this.canvas.clientWidth);
    const w = Math.max(rect.w * 1.1, (rect.h * 1.1) / aspect, px / 1.5);
    const hgt = w * aspect;
    // a group taller than the view: show its top (its label), not its middle
    const y = rect.h * 1.1 > hgt ? rect.y - rect.h * 0.05 : rect.y + rect.h / 2 - hgt / 2;
    this.setViewBox({ x: rect.x + rect.w / 2 - w / 2, y, w, h: hgt });
  }

  /** An element's bounding box in the root svg's user (viewBox) units. */
  private userRect(el: SVGGraphicsElement): ViewBox | null {
    const root = this.svg?.getScreenCTM();
    const m = el.getScreenCTM();
    if (!root || !m) {
      return null;
    }
    const b = el.getBBox();
    const inv = root.inverse();
    const p1 = new DOMPoint(b.x, b.y).matrixTransform(m).matrixTransform(inv);
    const p2 = new DOMPoint(b.x + b.width, b.y + b.height).matrixTransform(m).matrixTransform(inv);
    return { x: Math.min(p1.x, p2.x), y: Math.min(p1.y, p2.y), w: Math.abs(p2.x - p1.x), h: Math.abs(p2.y - p1.y) };
  }

  centerOn(nodeId: number): void {
    const el = this.elementFor(nodeId);
    if (!el || !this.svg || !this.viewBox) {
      return;
    }
    const box = el.getBBox();
    const m = el.getScreenCTM();
    const root = this.svg.getScreenCTM();
    if (!m || !root) {
      return;
    }
    const p = new DOMPoint(box.x + box.width / 2, box.y + box.height / 2)
      .matrixTransform(m)
      .matrixTransform(root.inverse());
    // the root's inverse screen matrix maps back to its user units, which are viewBox units
    const vb = this.viewBox;
    this.setViewBox({ ...vb, x: p.x - vb.w / 2, y: p.y - vb.h / 2 });
  }

  // -- search ------------------------------------------------------------------------------------
  private runSearch(): void {
    const graph = this.ctx.graph;
    const q = this.searchInput.value;
    this.cursor = graph && q.trim() ? new SearchCursor(searchNodes(graph, q, { includeFolded: !this.fold })) : null;
    this.searchLabel.textContent = this.cursor ? this.cursor.label : '';
    this.applyHighlights();
  }

  private stepSearch(direction: number): void {
    if (!this.cursor) {
      this.runSearch();
    }
    const cursor = this.cursor;
    if (!cursor) {
      return;
    }
    const id = direction > 0 ? cursor.next() : cursor.previous();
    this.searchLabel.textContent = cursor.label;
    if (id !== null) {
      this.ctx.host.set({ selectedNode: id });
    }
  }

  // -- export ------------------------------------------------------------------------------------
  private fileStem(): string {
    const run = this.ctx.run;
    return `${(run?.target.name ?? 'trace').replace(/[^A-Za-z0-9_.-]+/g, '_')}.${this.ctx.method}`;
  }

  exportSvg(): void {
    if (this.svg) {
      download(`${this.fileStem()}.svg`, 'image/svg+xml', new XMLSerializer().serializeToString(this.svg));
    }
  }

  exportDot(): void {
    const graph = this.ctx.graph;
    const tree = this.tree();
    if (graph && tree) {
      download(
        `${this.fileStem()}.dot`,
        'text/vnd.graphviz',
        visibleDot(graph, tree, { expanded: new Set(tree.groups.keys()), fold: this.fold }).dot
      );
    }
  }

  exportJson(): void {
    const raw = this.ctx.host.get('run');
    if (raw) {
      download(`${this.fileStem()}.json`, 'application/json', JSON.stringify(raw));
    }
  }
}
