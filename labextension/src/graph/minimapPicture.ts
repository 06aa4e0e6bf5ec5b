/**
 * What the minimap (minimap.ts) draws of a picture: its nodes' and clusters' shapes and its edges, read once from
 * the SVG's attributes (model/geometry.ts, no reflow), and painted on a canvas in the computed paint of the drawn
 * shapes, so the map shows warnings, roots and the selection in the colours the graph uses, in any theme.
 */

import { Box, translation, unionBox } from '../model/geometry';

/** Highlighted nodes stay visible on the map however small the scale. */
const MIN_MARK_PX = 4;
/** Classes that only say what a node is; any other class is a highlight the map shows. */
const PLAIN_CLASS = /^(node|op-\S+|kind-\S+|nondeterministic|input|output|scope-collapsed|scope-repeat)$/;
/** Any class that is not one of PLAIN_CLASS's: a highlight (one test of the class attribute, not one per class). */
const MARK_CLASS =
  /(?:^|\s)(?!(?:node|op-\S+|kind-\S+|nondeterministic|input|output|scope-collapsed|scope-repeat)(?:\s|$))\S/;
const FIRST_PAIR = /^\s*M\s*(-?[\d.]+(?:e[-+]?\d+)?)[,\s]+(-?[\d.]+(?:e[-+]?\d+)?)/i;
const LAST_PAIR = /(-?[\d.]+(?:e[-+]?\d+)?)[,\s]+(-?[\d.]+(?:e[-+]?\d+)?)\s*$/i;

export interface Shape {
  el: Element;
  box: Box;
  cluster: boolean;
}

/** A picture as the map holds it. */
export interface MapPicture {
  /** clusters first, so nodes are drawn over them */
  shapes: Shape[];
  shapeOf: Map<Element, Shape>;
  /** the highlighted nodes (selection, warnings, roots...) */
  marked: Set<Shape>;
  /** each edge from its first point to its last */
  edges: [number, number, number, number][];
  /** the whole drawing in the SVG's user units; null while nothing is laid out (a hidden tab) */
  world: Box | null;
}

/** Where the map's picture lies on it: `(x - world.x) * scale + dx` (model/geometry.ts `fitInto`). */
export interface MapPlacement {
  scale: number;
  dx: number;
  dy: number;
}

type Paint = { fill: string; stroke: string };

/**
 * The bounding box of a node's or cluster's first drawn shape, in the graph group's coordinates. `getBBox` lays
 * the picture out once, which its first paint does anyway: 8,000 shapes take ~25 ms, parsing their paths ~60.
 */
export function shapeBox(holder: Element): Box | null {
  const shape = holder.querySelector<SVGGraphicsElement>('path, polygon, ellipse');
  if (!shape) {
    return null;
  }
  const b = shape.getBBox();
  return { x: b.x, y: b.y, w: b.width, h: b.height };
}

/** Whether a node carries a highlight. */
export function isMarked(el: Element): boolean {
  return !el.classList.contains('cluster') && MARK_CLASS.test(el.getAttribute('class') ?? '');
}

export function readPicture(svg: SVGSVGElement): MapPicture {
  const graph = svg.querySelector('g.graph');
  const [tx, ty] = translation(graph?.getAttribute('transform') ?? null);
  const shapes: Shape[] = [];
  const shapeOf = new Map<Element, Shape>();
  const marked = new Set<Shape>();
  for (const el of Array.from(svg.querySelectorAll('g.node, g.cluster'))) {
    const box = shapeBox(el);
    if (box) {
      const shape = { el, box: { ...box, x: box.x + tx, y: box.y + ty }, cluster: el.classList.contains('cluster') };
      shapes.push(shape);
      shapeOf.set(el, shape);
      if (isMarked(el)) {
        marked.add(shape);
      }
    }
  }
  shapes.sort((a, b) => Number(b.cluster) - Number(a.cluster));
  const edges: MapPicture['edges'] = [];
  for (const path of Array.from(svg.querySelectorAll('g.edge path'))) {
    const d = path.getAttribute('d') ?? '';
    const a = FIRST_PAIR.exec(d);
    const b = LAST_PAIR.exec(d);
    if (a && b) {
      edges.push([Number(a[1]) + tx, Number(a[2]) + ty, Number(b[1]) + tx, Number(b[2]) + ty]);
    }
  }
  const world = unionBox(shapes.map(s => s.box));
  return { shapes, shapeOf, marked, edges, world: world && world.w > 0 && world.h > 0 ? world : null };
}

/** The computed fill and stroke of an item's shape, cached per class list. */
function paintOf(el: Element, cache: Map<string, Paint>): Paint {
  const key = el.getAttribute('class') ?? '';
  let p = cache.get(key);
  if (!p) {
    const shape = el.querySelector('path, polygon, ellipse');
    const style = shape ? getComputedStyle(shape) : null;
    p = { fill: style?.fill ?? 'gray', stroke: style?.stroke ?? 'gray' };
    cache.set(key, p);
  }
  return p;
}

function pointOf(world: Box, { scale, dx, dy }: MapPlacement): [(x: number) => number, (y: number) => number] {
  return [x => (x - world.x) * scale + dx, y => (y - world.y) * scale + dy];
}

/** The plain layer: clusters, nodes in their unmarked paint, edges in `edgeColour`. */
export function paintBase(
  g: CanvasRenderingContext2D,
  picture: MapPicture,
  world: Box,
  map: MapPlacement,
  edgeColour: string
): void {
  const [px, py] = pointOf(world, map);
  // a marked node's plain paint is that of an unmarked node with its plain classes
  const plain = new Map<string, Element>();
  for (const s of picture.shapes) {
    if (!picture.marked.has(s)) {
      plain.set(s.el.getAttribute('class') ?? '', s.el);
    }
  }
  const cache = new Map<string, Paint>();
  for (const s of picture.shapes) {
    let el = s.el;
    if (picture.marked.has(s)) {
      const key = [...s.el.classList].filter(c => PLAIN_CLASS.test(c)).join(' ');
      el = plain.get(key) ?? s.el;
    }
    const p = paintOf(el, cache);
    const x = px(s.box.x);
    const y = py(s.box.y);
    const w = Math.max(1, s.box.w * map.scale);
    const hh = Math.max(1, s.box.h * map.scale);
    if (s.cluster) {
      g.strokeStyle = p.stroke;
      g.lineWidth = 1;
      g.strokeRect(x, y, w, hh);
    } else {
      g.fillStyle = p.fill;
      g.fillRect(x, y, w, hh);
    }
  }
  g.strokeStyle = edgeColour;
  g.globalAlpha = 0.5;
  g.lineWidth = 0.5;
  g.beginPath();
  for (const [x0, y0, x1, y1] of picture.edges) {
    g.moveTo(px(x0), py(y0));
    g.lineTo(px(x1), py(y1));
  }
  g.stroke();
}

/** The marked nodes at least MIN_MARK_PX, inside the map's `size`, as the graph paints them. */
export function paintMarks(
  g: CanvasRenderingContext2D,
  marked: Iterable<Shape>,
  world: Box,
  map: MapPlacement,
  [mw, mh]: [number, number]
): void {
  const [px, py] = pointOf(world, map);
  const cache = new Map<string, Paint>();
  for (const s of marked) {
    const p = paintOf(s.el, cache);
    const w = Math.max(MIN_MARK_PX, s.box.w * map.scale);
    const hh = Math.max(MIN_MARK_PX, s.box.h * map.scale);
    const x = Math.min(mw - w, Math.max(0, px(s.box.x + s.box.w / 2) - w / 2));
    const y = Math.min(mh - hh, Math.max(0, py(s.box.y + s.box.h / 2) - hh / 2));
    g.fillStyle = p.fill;
    g.fillRect(x, y, w, hh);
    g.strokeStyle = p.stroke;
    g.lineWidth = 1.5;
    g.strokeRect(x, y, w, hh);
  }
}
