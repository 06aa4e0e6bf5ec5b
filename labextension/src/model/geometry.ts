/**
 * Where Graphviz drew things, read from its SVG attributes without asking the browser for a layout: a node's
 * shape is a `<polygon points>`, a `<path d>` (rounded boxes) or an `<ellipse>`, in the coordinates of the
 * `g.graph` group, which Graphviz places with a `translate(...)`. The minimap and the keyboard use these
 * boxes; reading them from the attributes costs no reflow, even on a 10k-node picture.
 */

/** An axis-aligned rectangle (x, y: top-left, in SVG user units, y down). */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

const NUMBER = /-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?/gi;

/** The box around a list of x, y pairs (`points`, or a path's absolute coordinates); null when there are none. */
export function pairsBox(text: string): Box | null {
  const numbers = (text.match(NUMBER) ?? []).map(Number);
  if (numbers.length < 2) {
    return null;
  }
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (let i = 0; i + 1 < numbers.length; i += 2) {
    x0 = Math.min(x0, numbers[i]);
    x1 = Math.max(x1, numbers[i]);
    y0 = Math.min(y0, numbers[i + 1]);
    y1 = Math.max(y1, numbers[i + 1]);
  }
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

/** The box of an ellipse from its centre and radii. */
export function ellipseBox(cx: number, cy: number, rx: number, ry: number): Box {
  return { x: cx - rx, y: cy - ry, w: 2 * rx, h: 2 * ry };
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
