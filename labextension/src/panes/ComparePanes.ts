/**
 * The comparison of two graphs around one divergence: two panes over the whole graph area (Model Explorer's split
 * view), each labelled by what it is ("trace" / "check with check_inputs[0]", "run 1" / "run 2"). Each pane is a
 * Viewport (graph/viewport.ts: drag, wheel, keys, fit), and the two move together: a pan or zoom of either is put
 * on the other at the same scale and the same offset from its origin. They open on the divergent nodes (the
 * origins), in the middle of their panes, at a scale that draws the labels at their laid-out size; `fit` shows
 * both pictures whole, each centred in its pane (the centres become the origins). Esc or "close" goes back to the
 * graph.
 */

import { layoutDot } from '../graph/layout';
import { svgElement } from '../graph/svg';
import { Viewport } from '../graph/viewport';
import { ZOOM_KEY } from '../graph/viewportInput';
import { button, h } from '../state/dom';

export interface PaneSpec {
  /** "trace", "check with check_inputs[0]", "run 1", "run 2" */
  label: string;
  dot: string;
  /** clicks on a node of this pane: its DOT name */
  onNode?: (name: string) => void;
  /** what the pane's nodes stand for when none matches the other pane's divergent node (model/align.ts) */
  note?: string;
}

/**
 * The panes' scale at the first view, at least (screen pixels per layout unit): labels at the size Graphviz laid
 * them out (9 px). The graph view's readable minimum (0.8, 7 px text) is for finding one's way in a big picture;
 * here two pictures are read side by side, label by label.
 */
const COMPARE_MIN_SCALE = 1;

interface Pane {
  viewport: Viewport;
  /** the divergent node's centre, in the picture's units (the picture's centre when it has none) */
  anchor: { x: number; y: number };
  /** whether the anchor is the divergent node itself (else it is placed from the other pane's) */
  anchored: boolean;
  /** the point the panes keep at the same offset from each other's: the anchor, after `fit` the picture's centre */
  origin: { x: number; y: number };
}

/**
 * The centre of a drawn element in its picture's units (its `<svg>`'s viewBox): the box it draws, through the
 * transforms of the groups around it (Graphviz translates its whole drawing).
 */
function centre(el: SVGGraphicsElement): { x: number; y: number } | null {
  try {
    const box = el.getBBox();
    let p = new DOMPoint(box.x + box.width / 2, box.y + box.height / 2);
    for (let g: Element | null = el; g && g.localName !== 'svg'; g = g.parentElement) {
      const t = (g as SVGGraphicsElement).transform?.baseVal.consolidate();
      if (t) {
        p = p.matrixTransform(t.matrix);
      }
    }
    return { x: p.x, y: p.y };
  } catch {
    return null; // not rendered
  }
}

/** The panes shown over each graph area: one comparison at a time (the check's, two runs', trace vs export). */
const shownOver = new WeakMap<Element, ComparePanes>();

export class ComparePanes {
  readonly element: HTMLElement;
  /** Settles when both pictures are on screen and placed. */
  readonly rendered: Promise<void>;
  private readonly panes: Pane[] = [];
  /** set while one pane's view is put on the other (so that one's change is not put back) */
  private syncing = false;

  constructor(
    title: string,
    specs: [PaneSpec, PaneSpec],
    private readonly onClose: () => void
  ) {
    const body = h('div', { class: 'jp-TraceExplorer-compareBody' });
    const first = (): Viewport => this.panes[0].viewport;
    this.element = h(
      'div',
      {
        class: 'jp-TraceExplorer-compareFull',
        role: 'region',
        'aria-label': `${specs[0].label} and ${specs[1].label} side by side`,
        tabindex: -1
      },
      h(
        'div',
        { class: 'jp-TraceExplorer-compareBar' },
        h('span', { class: 'jp-TraceExplorer-compareTitle', title }, title),
        button('−', () => first().zoom(1.25), { title: 'zoom both out (-)', 'aria-label': 'zoom out' }),
        button('+', () => first().zoom(0.8), { title: 'zoom both in (+)', 'aria-label': 'zoom in' }),
        button('fit', () => this.fit(true), { title: 'both pictures whole (0)' }),
        button('close', () => this.close(), { title: 'back to the graph (Esc)', 'data-action': 'close-compare' })
      ),
      body
    );
    for (const spec of specs) {
      const viewport = new Viewport({
        className: 'jp-TraceExplorer-compareCanvas',
        label: `${spec.label}: drag to pan, ${ZOOM_KEY} + wheel to zoom (both panes move together), 0 fits`,
        fit: animate => this.fit(animate)
      });
      const pane: Pane = { viewport, anchor: { x: 0, y: 0 }, anchored: false, origin: { x: 0, y: 0 } };
      this.panes.push(pane);
      viewport.onViewChange(() => this.follow(pane));
      body.appendChild(
        h(
          'div',
          { class: 'jp-TraceExplorer-comparePane', 'data-side': spec.label },
          h(
            'div',
            { class: 'jp-TraceExplorer-paneLabel' },
            spec.label,
            spec.note ? h('span', { class: 'jp-TraceExplorer-paneNote' }, ` · ${spec.note}`) : null
          ),
          viewport.element
        )
      );
      const onNode = spec.onNode;
      if (onNode) {
        viewport.element.addEventListener('click', e => {
          const id = (e.target as Element).closest('g.node')?.getAttribute('id');
          if (id && !viewport.dragged) {
            onNode(id);
          }
        });
      }
    }
    this.element.addEventListener('keydown', e => {
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        this.close();
      }
    });
    this.rendered = Promise.all(specs.map((s, i) => this.draw(i, s.dot))).then(() => {
      this.alignAnchors();
      this.openOnAnchors();
    });
  }

  /** The panes' canvases (tests and the check panel read their pictures). */
  get viewports(): Viewport[] {
    return this.panes.map(p => p.viewport);
  }

  /** Close at the user's request (the close button, Esc): the owner hears of it. */
  close(): void {
    this.element.remove();
    this.onClose();
  }

  /**
   * Put the panes over `graphArea` (the explorer's graph): another comparison shown there is closed, and its owner
   * hears of it, so that two owners never stack their panes (the check's and trace vs export).
   */
  showIn(graphArea: Element): void {
    const other = shownOver.get(graphArea);
    shownOver.set(graphArea, this);
    if (other && other !== this && other.element.isConnected) {
      other.close();
    }
    graphArea.appendChild(this.element);
  }

  /** Take the panes off the page without telling the owner (it replaces or drops them itself). */
  dispose(): void {
    this.element.remove();
  }

  private async draw(index: number, dot: string): Promise<void> {
    const pane = this.panes[index];
    try {
      const svg = svgElement(await layoutDot(dot));
      // placed by `fit` once both pictures are in (the scale is common to both)
      pane.viewport.show(svg, false, () => undefined);
      if (!svg.querySelector('g.node')) {
        // an op only in the other graph, with nothing matched around it: say so rather than show an empty pane
        pane.viewport.element.appendChild(
          h('p', { class: 'jp-TraceExplorer-paneEmpty' }, 'nothing here matches the ops around the divergence')
        );
      }
      const current = svg.querySelector<SVGGraphicsElement>('g.node.current');
      this.anchorOn(pane, current ? [current] : []);
    } catch (err) {
      pane.viewport.element.textContent = `layout failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  /**
   * Anchor `pane` on the middle of `nodes` (the picture's centre when there are none, or none is drawn), of those
   * that fit in one view with the first at COMPARE_MIN_SCALE: a line run in every layer (GPT-2's
   * `q_length = query.shape[2]`) has ops far apart, and their middle, between the layers, shows none of them.
   */
  private anchorOn(pane: Pane, nodes: SVGGraphicsElement[]): void {
    const drawn = nodes.map(centre).filter((c): c is { x: number; y: number } => c !== null);
    const view = pane.viewport.canvasSize;
    const reach = { x: view.w / 2 / COMPARE_MIN_SCALE, y: view.h / 2 / COMPARE_MIN_SCALE };
    const at = drawn.filter(
      c => !view.w || (Math.abs(c.x - drawn[0].x) <= reach.x && Math.abs(c.y - drawn[0].y) <= reach.y)
    );
    const b = pane.viewport.bounds;
    if (at.length) {
      const xs = at.map(c => c.x);
      const ys = at.map(c => c.y);
      pane.anchor = { x: (Math.min(...xs) + Math.max(...xs)) / 2, y: (Math.min(...ys) + Math.max(...ys)) / 2 };
    } else if (b) {
      pane.anchor = { x: b.x + b.w / 2, y: b.y + b.h / 2 };
    }
    pane.anchored = at.length > 0;
  }

  /**
   * Mark the nodes named `names[i]` (DOT names) in pane i with the class `cls`, and no others; with `focus`, both
   * panes open on the marked nodes as on a divergence (a side with none marked is placed from the other side's
   * matched nodes). A stepper moves its highlight through both pictures this way, with no new layout.
   */
  mark(cls: string, names: readonly [readonly string[], readonly string[]], focus = false): void {
    this.panes.forEach((pane, i) => {
      const svg = pane.viewport.svg;
      if (!svg) {
        return;
      }
      svg.querySelectorAll(`g.node.${CSS.escape(cls)}`).forEach(g => g.classList.remove(cls));
      const wanted = new Set(names[i]);
      const marked = [...svg.querySelectorAll<SVGGraphicsElement>('g.node')].filter(g => wanted.has(g.id));
      marked.forEach(g => g.classList.add(cls));
      if (focus) {
        this.anchorOn(pane, marked);
      }
    });
    if (focus) {
      this.alignAnchors();
      this.openOnAnchors();
    }
  }

  /**
   * A side where the divergent node has no counterpart (an op only in the other graph) is anchored where that
   * node would be: at the matched node nearest the other side's anchor (a matched pair has one DOT name in both
   * pictures), moved by the same amount.
   */
  private alignAnchors(): void {
    const [a, b] = this.panes;
    for (const [lost, found] of [
      [a, b],
      [b, a]
    ]) {
      const lostSvg = lost.viewport.svg;
      const foundSvg = found.viewport.svg;
      if (lost.anchored || !found.anchored || !lostSvg || !foundSvg) {
        continue;
      }
      let best: { d: number; dx: number; dy: number; id: string } | null = null;
      for (const g of foundSvg.querySelectorAll<SVGGraphicsElement>('g.node.matched')) {
        const c = centre(g);
        if (!c) {
          continue;
        }
        const dx = found.anchor.x - c.x;
        const dy = found.anchor.y - c.y;
        const d = dx * dx + dy * dy;
        if (!best || d < best.d) {
          best = { d, dx, dy, id: g.id };
        }
      }
      const twin = best ? lostSvg.querySelector<SVGGraphicsElement>(`g.node[id="${CSS.escape(best.id)}"]`) : null;
      const c = twin && centre(twin);
      if (best && c) {
        lost.anchor = { x: c.x + best.dx, y: c.y + best.dy };
      }
    }
  }

  /**
   * The first view: each divergent node in the middle of its pane, at the scale that shows both pictures whole
   * around it, but never below COMPARE_MIN_SCALE (pan, zoom out or `fit` for the rest).
   */
  private openOnAnchors(): void {
    this.panes.forEach(p => (p.origin = p.anchor));
    const scales = this.scales(p => p.viewport.fitScale(p.anchor));
    if (scales.length) {
      this.showOrigins(Math.max(Math.min(...scales), COMPARE_MIN_SCALE), false);
    }
  }

  /**
   * Both pictures whole, each centred in its pane, at one scale (the smaller of the two fits: the panes keep one
   * scale, so a node is drawn the same size in both); pans and zooms from there move both alike.
   */
  fit(animate = false): void {
    const scales = this.scales(p => p.viewport.fitScale());
    if (!scales.length) {
      return;
    }
    for (const pane of this.panes) {
      const b = pane.viewport.bounds;
      if (b) {
        pane.origin = { x: b.x + b.w / 2, y: b.y + b.h / 2 };
      }
    }
    this.showOrigins(Math.min(...scales), animate);
  }

  /** The scales `of` the panes with a picture on a sized canvas. */
  private scales(of: (pane: Pane) => number | null): number[] {
    return this.panes.map(of).filter((s): s is number => s !== null && s > 0);
  }

  /** Each pane's origin in its middle at `scale`: the first pane with a picture moves, the other follows. */
  private showOrigins(scale: number, animate: boolean): void {
    const lead = this.panes.find(p => p.viewport.svg) ?? this.panes[0];
    lead.viewport.showAt(lead.origin, scale, animate);
  }

  /** Put `pane`'s view on the other pane: the same scale, the same offset from its origin. */
  private follow(pane: Pane): void {
    const at = pane.viewport.centre;
    if (this.syncing || !at || !pane.viewport.svg) {
      return;
    }
    this.syncing = true;
    try {
      const scale = pane.viewport.scale;
      for (const other of this.panes) {
        if (other !== pane && other.viewport.svg) {
          other.viewport.showAt(
            { x: other.origin.x + at.x - pane.origin.x, y: other.origin.y + at.y - pane.origin.y },
            scale
          );
        }
      }
    } finally {
      this.syncing = false;
    }
  }
}
