/**
 * The graph by keyboard. With the canvas focused, the arrow keys move a cursor along the drawn edges (down to a
 * consumer, up to a producer, left / right to a sibling; model/navigate.ts); landing on an op selects it, as a
 * click does, and the view follows. Enter inspects the op (or opens / folds a group box), Escape clears.
 * Shift+arrows, + / - and 0 keep panning and zooming (graph/viewport.ts).
 *
 * The listener sits on the graph element in the capture phase, so plain arrows reach it before the viewport's
 * panning handler on the canvas.
 */

import { domId } from '../model/dotText';
import { translation } from '../model/geometry';
import { Direction, GraphNavigator, parseEdgeTitle, PlacedItem } from '../model/navigate';
import { ExplorerContext } from '../state/context';
import { h } from '../state/dom';
import { shapeBox } from './minimapPicture';

/** The class of the item the keyboard cursor is on (a focus ring drawn in graph-tools.css). */
export const CURSOR_CLASS = 'kbd-cursor';

const DIRECTIONS: Record<string, Direction> = {
  ArrowUp: 'up',
  ArrowDown: 'down',
  ArrowLeft: 'left',
  ArrowRight: 'right'
};

export interface KeyboardTargets {
  /** the element that holds the canvas (listens in the capture phase) */
  graphElement: HTMLElement;
  /** the focusable canvas the picture is drawn in */
  canvas: HTMLElement;
  picture: () => SVGSVGElement | null;
  /** pan so the element is in view (ops are followed by the graph view when selected) */
  centerOn: (el: SVGGraphicsElement) => void;
  /** show the node in the inspector, as a click on it does */
  inspect: (nodeId: number) => void;
  toggleGroup: (groupId: string) => void;
}

export class GraphKeyboard {
  private navigator: GraphNavigator | null = null;
  private navigatorOf: SVGSVGElement | null = null;
  private cursor: Element | null = null;
  private readonly unsubscribe: () => void;
  /** says what the cursor landed on, for screen readers (the picture itself is not in the accessibility tree) */
  private readonly announcer: HTMLElement;

  constructor(
    private readonly ctx: ExplorerContext,
    private readonly targets: KeyboardTargets
  ) {
    targets.canvas.setAttribute(
      'aria-label',
      'graph: arrow keys move between nodes along the edges, Enter inspects, Escape clears; ' +
        'Shift+arrows pan, + and - zoom, 0 fits'
    );
    targets.graphElement.addEventListener('keydown', e => this.onKey(e), { capture: true });
    this.announcer = h('div', { class: 'jp-TraceExplorer-announcer', 'aria-live': 'polite' });
    targets.graphElement.appendChild(this.announcer);
    // a selection made elsewhere (a click, a warning, the stepper) takes the cursor's place
    this.unsubscribe = ctx.onChange(keys => {
      if (keys.has('selectedNode') && this.cursor && this.selectionOf(this.cursor) !== ctx.host.get('selectedNode')) {
        this.setCursor(null);
      }
    });
  }

  dispose(): void {
    this.unsubscribe();
  }

  private items(svg: SVGSVGElement): GraphNavigator {
    if (this.navigator && this.navigatorOf === svg) {
      return this.navigator;
    }
    const [tx, ty] = translation(svg.querySelector('g.graph')?.getAttribute('transform') ?? null);
    const items: PlacedItem[] = [];
    for (const g of Array.from(svg.querySelectorAll('g.node[data-dot]'))) {
      const box = shapeBox(g);
      if (box) {
        items.push({
          name: g.getAttribute('data-dot')!,
          x: box.x + box.w / 2 + tx,
          y: box.y + box.h / 2 + ty,
          h: box.h
        });
      }
    }
    const edges: [string, string][] = [];
    for (const g of Array.from(svg.querySelectorAll('g.edge[data-dot]'))) {
      const edge = parseEdgeTitle(g.getAttribute('data-dot')!);
      if (edge) {
        edges.push(edge);
      }
    }
    this.navigator = new GraphNavigator(items, edges);
    this.navigatorOf = svg;
    return this.navigator;
  }

  private item(svg: SVGSVGElement, name: string): SVGGraphicsElement | null {
    return svg.querySelector(`g.node[data-dot="${CSS.escape(name)}"]`);
  }

  /** Where a walk starts: the selection, else the cursor if it is still drawn, else a box hiding the selection. */
  private start(svg: SVGSVGElement): Element | null {
    const selected = svg.querySelector('g.node.selected');
    if (selected) {
      return selected;
    }
    if (this.cursor && svg.contains(this.cursor)) {
      return this.cursor;
    }
    return svg.querySelector('g.node.has-selected');
  }

  private onKey(e: KeyboardEvent): void {
    if (e.target !== this.targets.canvas || e.altKey || e.ctrlKey || e.metaKey) {
      return;
    }
    const svg = this.targets.picture();
    if (!svg) {
      return;
    }
    const direction = DIRECTIONS[e.key];
    if (direction && !e.shiftKey) {
      const nav = this.items(svg);
      const from = this.start(svg)?.getAttribute('data-dot') ?? null;
      const to = from === null ? nav.first() : nav.next(from, direction);
      const el = to === null ? null : this.item(svg, to);
      if (el) {
        this.moveTo(el);
      }
    } else if (e.key === 'Enter') {
      this.activate(svg);
    } else if (e.key === 'Escape') {
      this.setCursor(null);
      this.announcer.textContent = '';
      return; // the graph view clears the selection
    } else {
      return;
    }
    e.preventDefault();
    e.stopPropagation();
  }

  private setCursor(el: Element | null): void {
    this.cursor?.classList.remove(CURSOR_CLASS);
    this.cursor = el;
    el?.classList.add(CURSOR_CLASS);
  }

  /** The node a drawn item selects: an op's id, or -1 for a group box, an input or an output. */
  private selectionOf(el: Element): number {
    const op = /^n(\d+)$/.exec(el.id);
    return op ? Number(op[1]) : -1;
  }

  private moveTo(el: SVGGraphicsElement): void {
    this.setCursor(el);
    // the tooltip's first lines: kind and outputs, or the module and what a key does to it
    const title = el.querySelector(':scope > title')?.textContent ?? '';
    this.announcer.textContent = title.split('\n').slice(0, 2).join(', ');
    // an op is selected (the graph view brings it into view); a group box, an input or an output has nothing
    // to inspect, so nothing stays selected
    const selection = this.selectionOf(el);
    this.ctx.host.set({ selectedNode: selection });
    if (selection < 0) {
      this.targets.centerOn(el);
    }
  }

  private activate(svg: SVGSVGElement): void {
    const el = this.start(svg);
    if (!el) {
      return;
    }
    const op = /^n(\d+)$/.exec(el.id);
    if (op) {
      this.ctx.host.set({ selectedNode: Number(op[1]) });
      this.targets.inspect(Number(op[1]));
      return;
    }
    const tree = this.ctx.groups();
    for (const id of tree?.groups.keys() ?? []) {
      if (el.id === `scope-${domId(id)}`) {
        this.setCursor(null);
        this.targets.toggleGroup(id);
        return;
      }
    }
  }
}
