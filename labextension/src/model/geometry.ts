/**
 * Boxes in a Graphviz picture: shapes sit in the coordinates of the `g.graph` group, which Graphviz places with a
 * `translate(...)`; the minimap and the keyboard add that to each shape's box and fit the whole into a map.
 */

/** An axis-aligned rectangle (x, y: top-left, in SVG user units, y down). */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** The translation of a Graphviz `transform` (`scale(1 1) rotate(0) translate(4 400)`); [0, 0] without one. */
export function translation(transform: string | null): [number, number] {
  const m = /translate\(\s*(-?[\d.e+-]+)[\s,]+(-?[\d.e+-]+)\s*\)/i.exec(transform ?? '');
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}

/** The smallest box holding all of them; null for none. */
export function unionBox(boxes: Iterable<Box>): Box | null {
  let out: Box | null = null;
  for (const b of boxes) {
    if (!out) {
      out = { ...b };
      continue;
    }
    const x1 = Math.max(out.x + out.w, b.x + b.w);
    const y1 = Math.max(out.y + out.h, b.y + b.h);
    out.x = Math.min(out.x, b.x);
    out.y = Math.min(out.y, b.y);
    out.w = x1 - out.x;
    out.h = y1 - out.y;
  }
  return out;
}

/** True when `outer` holds `inner` entirely (within `slack` units). */
export function contains(outer: Box, inner: Box, slack = 0.5): boolean {
  return (
    inner.x >= outer.x - slack &&
    inner.y >= outer.y - slack &&
    inner.x + inner.w <= outer.x + outer.w + slack &&
    inner.y + inner.h <= outer.y + outer.h + slack
  );
}

/**
 * The scale and offset that draw `world` into a `width` x `height` area, centred, aspect kept:
 * screen = (p - world.origin) * scale + offset.
 */
export function fitInto(world: Box, width: number, height: number): { scale: number; dx: number; dy: number } {
  const scale = Math.min(width / Math.max(world.w, 1e-9), height / Math.max(world.h, 1e-9));
  return { scale, dx: (width - world.w * scale) / 2, dy: (height - world.h * scale) / 2 };
}

const NUMBER = /-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?/gi;

/**
 * The box of a Graphviz outline from its own attribute (a path's `d`, a polygon's `points`): Graphviz writes
 * only absolute coordinate pairs (`M x,y C x,y x,y x,y ...`), so every pair of numbers is a point on or around
 * the outline. Reading the attribute forces no layout of the page, unlike `getBBox`. Null without two points.
 */
export function outlineBox(attribute: string | null): Box | null {
  const n = (attribute ?? '').match(NUMBER)?.map(Number) ?? [];
  if (n.length < 4) {
    return null;
  }
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (let i = 0; i + 1 < n.length; i += 2) {
    x0 = Math.min(x0, n[i]);
    x1 = Math.max(x1, n[i]);
    y0 = Math.min(y0, n[i + 1]);
    y1 = Math.max(y1, n[i + 1]);
  }
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

/**
 * Where a group's label starts so that it can be read wherever the view is (a sticky header, sideways): where
 * Graphviz put it (`home`, at the group's left edge), unless the view's left edge has passed it; then just inside
 * the view (`viewLeft + pad`), never beyond the group's right edge (`right`: the label ends `pad` before it).
 */
export function stickyLabelLeft(home: number, width: number, right: number, viewLeft: number, pad: number): number {
  const wanted = viewLeft + pad;
  if (wanted <= home) {
    return home;
  }
  return Math.max(home, Math.min(wanted, right - pad - width));
}

/**
 * Where a label `width` wide starts on a row where `blockers` lie (boxes whose band meets the row): at `preferred`
 * when that is free, else just right of the blockers in its way (`gap` apart), never past `last` (its rightmost
 * start); `preferred` when no place is free (a label that reads over a node is better than none).
 */
export function freeStart(
  preferred: number,
  width: number,
  last: number,
  blockers: readonly Box[],
  gap: number
): number {
  let x = preferred;
  for (const b of [...blockers].sort((a, c) => a.x - c.x)) {
    if (b.x < x + width + gap && b.x + b.w + gap > x) {
      x = b.x + b.w + gap;
    }
  }
  return x <= last ? x : preferred;
}
