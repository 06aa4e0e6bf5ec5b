/**
 * Moving a keyboard cursor over the drawn graph along its edges: down goes to a consumer, up to a producer,
 * left / right to a sibling (another consumer of the same producer, or another producer of the same consumer),
 * else to the nearest item of the same row. Among several candidates the one closest in the direction of travel
 * wins, so repeated presses walk a column without jumping across the picture.
 *
 * Items are the DOT names Graphviz drew (`n4`, `g2`, `in0`, `out0`), edges are read from the SVG's edge titles
 * (`n3->n4`); positions are the centres of the drawn shapes (model/geometry.ts), y growing downwards.
 */

export type Direction = 'up' | 'down' | 'left' | 'right';

export interface PlacedItem {
  name: string;
  /** centre of the drawn shape */
  x: number;
  y: number;
  /** height of the drawn shape (for what counts as one row) */
  h: number;
}

/** `n3->n4` (Graphviz's edge title; `:port` suffixes dropped) as [source, target]; null for anything else. */
export function parseEdgeTitle(title: string): [string, string] | null {
  const m = /^([^\s:-]+)(?::\S+)?->([^\s:-]+)(?::\S+)?$/.exec(title.trim());
  return m ? [m[1], m[2]] : null;
}

export class GraphNavigator {
  private readonly items = new Map<string, PlacedItem>();
  private readonly consumers = new Map<string, Set<string>>();
  private readonly producers = new Map<string, Set<string>>();

  constructor(items: PlacedItem[], edges: [string, string][]) {
    items.forEach(i => this.items.set(i.name, i));
    for (const [src, dst] of edges) {
      if (src === dst || !this.items.has(src) || !this.items.has(dst)) {
        continue;
      }
      this.link(this.consumers, src, dst);
      this.link(this.producers, dst, src);
    }
  }

  private link(map: Map<string, Set<string>>, a: string, b: string): void {
    let set = map.get(a);
    if (!set) {
      map.set(a, (set = new Set()));
    }
    set.add(b);
  }

  has(name: string): boolean {
    return this.items.has(name);
  }

  /** Where a walk starts without a cursor: the top item (the leftmost of the top row). */
  first(): string | null {
    let best: PlacedItem | null = null;
    for (const i of this.items.values()) {
      if (!best || i.y < best.y - best.h / 2 || (Math.abs(i.y - best.y) <= best.h / 2 && i.x < best.x)) {
        best = i;
      }
    }
    return best?.name ?? null;
  }

  /** The item a press of `direction` moves to from `from`; null when there is none that way. */
  next(from: string, direction: Direction): string | null {
    const here = this.items.get(from);
    if (!here) {
      return this.first();
    }
    if (direction === 'down' || direction === 'up') {
      const linked = (direction === 'down' ? this.consumers : this.producers).get(from) ?? new Set<string>();
      return this.closest([...linked], c => Math.abs(c.x - here.x) + Math.abs(c.y - here.y) / 4);
    }
    const sign = direction === 'right' ? 1 : -1;
    const onSide = (c: PlacedItem): boolean => (c.x - here.x) * sign > 0.5;
    const siblings = new Set<string>();
    for (const p of this.producers.get(from) ?? []) {
      this.consumers.get(p)?.forEach(s => siblings.add(s));
    }
    for (const c of this.consumers.get(from) ?? []) {
      this.producers.get(c)?.forEach(s => siblings.add(s));
    }
    siblings.delete(from);
    const distance = (c: PlacedItem): number => Math.abs(c.x - here.x) + 2 * Math.abs(c.y - here.y);
    const sibling = this.closest(
      [...siblings].filter(s => onSide(this.items.get(s)!)),
      distance
    );
    if (sibling !== null) {
      return sibling;
    }
    // no sibling that way: the nearest item of the same row
    const row = [...this.items.values()].filter(
      c => c.name !== from && onSide(c) && Math.abs(c.y - here.y) <= Math.max(here.h, c.h) / 2
    );
    return this.closest(
      row.map(c => c.name),
      distance
    );
  }

  private closest(names: string[], cost: (c: PlacedItem) => number): string | null {
    let best: string | null = null;
    let bestCost = Infinity;
    for (const name of names.sort()) {
      const c = this.items.get(name);
      if (!c) {
        continue;
      }
      const value = cost(c);
      if (value < bestCost) {
        best = name;
        bestCost = value;
      }
    }
    return best;
  }
}
