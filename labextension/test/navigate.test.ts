/**
 * The pure parts of the graph tools: boxes of a Graphviz picture (model/geometry.ts) and where the keyboard
 * cursor goes along the edges (model/navigate.ts), and the legend's entries (graph/legend.ts).
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { describe, expect, it } from 'vitest';

import { LEGEND } from '../src/graph/legend';

import {
  contains,
  fitInto,
  freeStart,
  outlineBox,
  stickyLabelLeft,
  translation,
  unionBox
} from '../src/model/geometry';
import { GraphNavigator, parseEdgeTitle, PlacedItem } from '../src/model/navigate';

describe('geometry', () => {
  it("reads an outline's box from Graphviz's own path and polygon attributes", () => {
    // a rounded cluster frame, as Graphviz writes it
    expect(outlineBox('M20,-8C20,-8 402,-8 402,-8 408,-8 414,-14 414,-20 L414,-300 20,-300Z')).toEqual({
      x: 20,
      y: -300,
      w: 394,
      h: 292
    });
    expect(outlineBox('8,-4 8,-40 96.5,-40 96.5,-4 8,-4')).toEqual({ x: 8, y: -40, w: 88.5, h: 36 });
    expect(outlineBox('1e1,2 3,-4.5e0')).toEqual({ x: 3, y: -4.5, w: 7, h: 6.5 });
    expect(outlineBox('M1,2')).toBeNull();
    expect(outlineBox(null)).toBeNull();
  });

  it("slides a group's label into the view, within its frame", () => {
    // the view starts left of the label: it stays where Graphviz put it
    expect(stickyLabelLeft(100, 50, 500, 40, 4)).toBe(100);
    // the view's left edge passed it: just inside the view
    expect(stickyLabelLeft(100, 50, 500, 200, 4)).toBe(204);
    // never past the frame's right edge (the label ends `pad` before it)
    expect(stickyLabelLeft(100, 50, 500, 480, 4)).toBe(446);
    // a frame too narrow to slide in: home
    expect(stickyLabelLeft(100, 50, 140, 300, 4)).toBe(100);
  });

  it('reads the translation of the graph group', () => {
    expect(translation('scale(1 1) rotate(0) translate(4 400)')).toEqual([4, 400]);
    expect(translation('translate(4.5,-2)')).toEqual([4.5, -2]);
    expect(translation(null)).toEqual([0, 0]);
  });

  it('unions, containment and fitting', () => {
    const u = unionBox([
      { x: 0, y: 0, w: 10, h: 10 },
      { x: -5, y: 5, w: 10, h: 20 }
    ]);
    expect(u).toEqual({ x: -5, y: 0, w: 15, h: 25 });
    expect(unionBox([])).toBeNull();
    expect(contains(u!, { x: 0, y: 0, w: 10, h: 10 })).toBe(true);
    expect(contains({ x: 0, y: 0, w: 10, h: 10 }, u!)).toBe(false);
    // a tall picture in a square: scaled by height, centred horizontally
    expect(fitInto({ x: 0, y: 0, w: 100, h: 400 }, 200, 200)).toEqual({ scale: 0.5, dx: 75, dy: 0 });
  });
});

/*
 *        in0
 *       /   \
 *     n1     n2      n5 (same row, not linked)
 *       \   /
 *        n3
 *        |
 *       out0
 */
const items: PlacedItem[] = [
  { name: 'in0', x: 50, y: 0, h: 10 },
  { name: 'n1', x: 20, y: 40, h: 10 },
  { name: 'n2', x: 80, y: 40, h: 10 },
  { name: 'n5', x: 140, y: 41, h: 10 },
  { name: 'n3', x: 50, y: 80, h: 10 },
  { name: 'out0', x: 50, y: 120, h: 10 }
];
const edges: [string, string][] = [
  ['in0', 'n1'],
  ['in0', 'n2'],
  ['n1', 'n3'],
  ['n2', 'n3'],
  ['n3', 'out0'],
  ['n3', 'ghost'] // an item not drawn: ignored
];

describe('keyboard navigation along edges', () => {
  const nav = new GraphNavigator(items, edges);

  it('starts at the top and walks down to consumers, up to producers', () => {
    expect(nav.first()).toBe('in0');
    expect(nav.next('in0', 'down')).toBe('n1'); // two consumers equally far: the first by name
    expect(nav.next('n1', 'down')).toBe('n3');
    expect(nav.next('n3', 'down')).toBe('out0');
    expect(nav.next('out0', 'down')).toBeNull();
    expect(nav.next('n3', 'up')).toBe('n1');
    expect(nav.next('n2', 'up')).toBe('in0');
    expect(nav.next('in0', 'up')).toBeNull();
  });

  it('moves left and right between siblings, then along the row', () => {
    expect(nav.next('n1', 'right')).toBe('n2');
    expect(nav.next('n2', 'left')).toBe('n1');
    expect(nav.next('n1', 'left')).toBeNull();
    // n5 shares no edge with n2 but sits in its row
    expect(nav.next('n2', 'right')).toBe('n5');
    expect(nav.next('n5', 'left')).toBe('n2');
  });

  it('prefers the consumer below the cursor', () => {
    const wide = new GraphNavigator(
      [
        { name: 'a', x: 100, y: 0, h: 10 },
        { name: 'left', x: 0, y: 50, h: 10 },
        { name: 'under', x: 105, y: 50, h: 10 }
      ],
      [
        ['a', 'left'],
        ['a', 'under']
      ]
    );
    expect(wide.next('a', 'down')).toBe('under');
  });

  it('an unknown cursor starts over at the top', () => {
    expect(nav.next('gone', 'down')).toBe('in0');
    expect(new GraphNavigator([], []).first()).toBeNull();
  });

  it('reads Graphviz edge titles', () => {
    expect(parseEdgeTitle('n3->n4')).toEqual(['n3', 'n4']);
    expect(parseEdgeTitle('g12:s->out0')).toEqual(['g12', 'out0']);
    expect(parseEdgeTitle('cluster_3')).toBeNull();
  });
});

describe('the legend', () => {
  it('explains classes the stylesheets paint', () => {
    const css = ['graph.css', 'graph-tools.css']
      .map(f => readFileSync(join(__dirname, '..', 'style', f), 'utf8'))
      .join('\n');
    const kinds = new Set<string>();
    for (const [classes] of LEGEND) {
      for (const c of classes.split(' ')) {
        if (!['node', 'cluster', 'scope', 'op-op'].includes(c)) {
          kinds.add(c);
          expect(css, c).toMatch(new RegExp(`g\\.(node|cluster)\\.${c.replace(/-/g, '\\-')}\\b`));
        }
      }
    }
    // every highlight the graph view puts on a node has its line
    for (const c of ['selected', 'root', 'downstream', 'current', 'warning', 'search-hit', 'unmatched', 'kbd-cursor']) {
      expect(kinds.has(c), c).toBe(true);
    }
  });
});

describe('a pinned label on a row with nodes', () => {
  const node = (x: number, w: number) => ({ x, y: 0, w, h: 20 });
  it('starts where it would, off the nodes in its way, never past its last start', () => {
    expect(freeStart(10, 50, 300, [], 4)).toBe(10); // nothing in the way
    expect(freeStart(10, 50, 300, [node(100, 40)], 4)).toBe(10); // a node further right
    expect(freeStart(10, 50, 300, [node(30, 40)], 4)).toBe(74); // just right of the node it would cover
    // two nodes close together: past both (the gap between them is too narrow)
    expect(freeStart(10, 50, 300, [node(80, 40), node(30, 40)], 4)).toBe(124);
    // no room left before the frame's end: where it would be (a label over a node beats none)
    expect(freeStart(10, 50, 60, [node(30, 40)], 4)).toBe(10);
  });
});
