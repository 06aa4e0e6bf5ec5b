/**
 * The DOT the TypeScript model writes: untrusted text escaped, the same text as render/dot.py for the same view
 * (tests/frontend_fixtures.py `dot_views`), and node titles.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { describe, expect, it } from 'vitest';

import { visibleDot } from '../src/model/dot';
import { opTitle } from '../src/model/nodeLabels';
import { escapeText, labelLines } from '../src/model/dotText';
import { decodeGraph, NodeInfo, TraceGraph } from '../src/model/graph';
import { GroupTree } from '../src/model/groups';
import { dir, load } from './runFixtures';

describe('escaping of untrusted text', () => {
  it('quotes, backslashes, entities, newlines and Graphviz escapes come out literal', () => {
    expect(escapeText('a"b')).toBe('a\\"b');
    expect(escapeText('x\\N\\G')).toBe('x\\\\N\\\\G');
    expect(escapeText('&lt;script&gt;')).toBe('&amp;lt;script&amp;gt;');
    // unpaired surrogates as render/dot.py writes them; a pair (an emoji) is kept
    expect(escapeText('a\uD800b\uDFFF')).toBe('a\uFFFDb\uFFFD');
    expect(escapeText('a\uD83D\uDE42b')).toBe('a\uD83D\uDE42b');
    expect(escapeText('line1\nline2\r\u2028x')).toBe('line1 line2 x');
    expect(labelLines(['"];evil=1;["'])).toBe('"\\"];evil=1;[\\""');
  });

  it('hostile module and value names cannot break out of the DOT', () => {
    const { raw } = load('net');
    const hostile = structuredClone(raw.graphs.forward);
    const evil = '"]; x [URL="javascript:alert(1)"]; y [label="\\N';
    hostile.strings = hostile.strings.map((s: string) =>
      s.startsWith('blocks') ? s.replace('blocks', evil) : s === 'x.1' || s === 'x' ? evil : s
    );
    const g: TraceGraph = decodeGraph(hostile);
    const groups = new GroupTree(g);
    const dot = visibleDot(g, groups, { expanded: groups.autoExpanded() }).dot;
    // every quote inside a string is escaped: unescaped quotes come in pairs per attribute
    for (const line of dot.split('\n')) {
      const unescaped = line.replace(/\\\\/g, '').replace(/\\"/g, '').match(/"/g) ?? [];
      expect(unescaped.length % 2).toBe(0);
    }
    // outside quoted strings there is no URL attribute: the text only appears escaped, inside a label
    const unquoted = dot.replace(/"(?:[^"\\]|\\.)*"/g, '""');
    expect(unquoted).not.toMatch(/URL/);
    expect(dot).toContain('\\"]; x [URL=\\"javascript:alert(1)\\"]');
  });
});

/** A view of a fixture run and the DOT render/dot.py writes for it (tests/frontend_fixtures.py `dot_views`). */
interface DotCase {
  name: string;
  run: string;
  expanded: string[];
  fold?: boolean;
  showShapes?: boolean;
  highlights?: Record<string, string[]>;
  rankdir?: 'TB' | 'LR';
  title?: string;
  fileNames?: Record<string, string>;
  dot: string;
}

describe('one DOT writer: the same view gives the same text on both sides', () => {
  const cases: DotCase[] = JSON.parse(readFileSync(join(dir, 'dot.cases.json'), 'utf8'));
  it('covers folded and unfolded, open and collapsed, highlighted, titled and hostile views', () => {
    expect(cases.length).toBeGreaterThanOrEqual(11);
    expect(new Set(cases.map(c => c.run))).toEqual(new Set(['net', 'mlp', 'hostile', 'loop', 'chain']));
    // a folded repeat group and sections of a long chain are among the views both sides write
    expect(cases.some(c => /scope-repeat/.test(c.dot) && /Block ×3/.test(c.dot))).toBe(true);
    expect(cases.some(c => /part 1 of 2/.test(c.dot))).toBe(true);
    // a named file's lines read as the panels write them, in the tooltips too
    expect(cases.some(c => c.fileNames && /cell \[9\], line \d+/.test(c.dot))).toBe(true);
  });
  for (const c of cases) {
    it(c.name, () => {
      const { run } = load(c.run);
      const graph = run.graphs.get(run.defaultMethod)!;
      const highlights = new Map(Object.entries(c.highlights ?? {}).map(([id, cls]) => [Number(id), new Set(cls)]));
      const view = visibleDot(graph, new GroupTree(graph), {
        expanded: new Set(c.expanded),
        fold: c.fold,
        showShapes: c.showShapes,
        highlights,
        rankdir: c.rankdir,
        title: c.title,
        fileNames: c.fileNames
      });
      expect(view.dot).toBe(c.dot);
    });
  }
});

describe('node titles', () => {
  // a node saved before nodes carried titles: its kind -> its first label line; the same table is in
  // tests/render/test_dot.py (UNTITLED_KINDS): both sides read such a node alike
  const untitled: Record<string, string> = {
    'aten::linear': 'linear',
    'aten::linear.default': 'linear',
    'aten::add.Tensor': 'add.Tensor',
    'prim::Constant': 'Constant',
    'higher_order::cond': 'cond',
    '.default': '.default'
  };
  /** A one-node graph of `kind`, its row with `title` (a string) or, when undefined, without the title column. */
  const oneNode = (kind: string, title?: string): NodeInfo => {
    const row = [0, [], [], 1, -1, 0, 0, -1, 0, 'op', ...(title === undefined ? [] : [2])];
    const data = {
      graph_schema: 2,
      method: 'forward',
      strings: [kind, '', title ?? ''],
      frames: [],
      stacks: [],
      values: [],
      nodes: [row],
      inputs: [],
      outputs: [],
      scopes: [[1, 1]],
      code: ''
    } as unknown as Parameters<typeof decodeGraph>[0];
    return decodeGraph(data).nodes[0];
  };
  it('read without a title, drop the default overload (the rule before titles)', () => {
    for (const [kind, title] of Object.entries(untitled)) {
      expect(opTitle(oneNode(kind))).toBe(title);
    }
  });
  it('are the titles the back end gave, without their namespace', () => {
    expect(opTitle(oneNode('aten::linear.default', 'aten::linear'))).toBe('linear');
    expect(opTitle(oneNode('aten::linear.default', 'aten::linear.default'))).toBe('linear.default');
  });
});
