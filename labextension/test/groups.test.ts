/**
 * The TypeScript model's structure of a graph against the Python model's fixtures: the group tree and the visible
 * graph, repeated blocks and long chains, and where the graph view opens.
 */
import { describe, expect, it } from 'vitest';

import { visibleDot } from '../src/model/dot';
import { NodeInfo, TraceGraph, ValueInfo } from '../src/model/graph';
import { BUCKET_SIZE, GroupTree, REPEAT_MIN, SECTION_SIZE, structureIds } from '../src/model/groups';
import { inputsAnchor, openingFocus } from '../src/model/opening';
import { CaseDivergence, TraceRunModel } from '../src/model/run';
import { load } from './runFixtures';

describe('groups and the visible graph', () => {
  it('module groups mirror the scopes; big modules are bucketed', () => {
    const { run } = load('mlp');
    const g = run.graphs.get('forward')!;
    const groups = new GroupTree(g);
    const root = groups.group('');
    expect(g.scopes.get('')!.children.length).toBe(300);
    // 300 child modules -> buckets of at most BUCKET_SIZE
    expect(root.children.length).toBe(Math.ceil(300 / BUCKET_SIZE));
    expect(root.children.every(c => groups.group(c).isBucket)).toBe(true);
    expect(groups.group(root.children[0]).label).toBe('0 … 31');
    expect(root.opCount).toBe(g.nodes.filter(n => n.role === 'op').length);
    const leafLinear = g.nodes.find(n => n.kind === 'aten::linear' && n.scope === '40')!;
    expect(groups.ancestors(leafLinear.id)).toEqual(['', '#32..63', '40']);
  });

  it('a module with more children than BUCKET_SIZE squared gets buckets of buckets', () => {
    // a flat nn.Sequential of 2,000 layers: 4,000 child modules
    const n = 4000;
    const nodes: NodeInfo[] = [];
    const values: ValueInfo[] = [
      {
        id: 0,
        name: 'x',
        type: 'Tensor',
        shape: [2, 16],
        dtype: 'Float',
        device: 'cpu',
        requiresGrad: false,
        producer: null
      }
    ];
    for (let i = 0; i < n; i++) {
      values.push({
        id: i + 1,
        name: `v${i}`,
        type: 'Tensor',
        shape: [2, 16],
        dtype: 'Float',
        device: 'cpu',
        requiresGrad: false,
        producer: i
      });
      nodes.push({
        id: i,
        kind: i % 2 ? 'aten::relu' : 'aten::linear',
        role: 'op',
        inputs: [i],
        outputs: [i + 1],
        scope: String(i),
        source: null,
        attributes: {},
        blocks: [],
        parent: null,
        nondeterministic: false
      });
    }
    const types = new Map<string, string>([
      ['', 'Sequential'],
      ...nodes.map(nd => [nd.scope, nd.kind === 'aten::relu' ? 'ReLU' : 'Linear'] as [string, string])
    ]);
    const g = new TraceGraph({
      method: 'forward',
      nodes,
      values,
      inputs: [0],
      outputs: [n],
      scopeTypes: types,
      code: ''
    });
    const groups = new GroupTree(g);
    const top = groups.group('').children;
    expect(top.length).toBe(Math.ceil(n / (BUCKET_SIZE * BUCKET_SIZE)));
    expect(groups.group(top[0]).label).toBe('0 … 1023');
    expect(groups.group(top[0]).children.length).toBe(BUCKET_SIZE);
    expect(groups.group(groups.group(top[0]).children[1]).label).toBe('32 … 63');
    expect(groups.ancestors(3999)).toEqual(['', '#3072..3999', '#3072..3999#3968..3999', '3999']);
    const view = visibleDot(g, groups, { expanded: groups.autoExpanded() });
    expect(view.items.length).toBeLessThanOrEqual(120);
    expect(view.representative.get(0)).toMatch(/^(g\d+|n0)$/);
  });

  it('a big graph opens collapsed; expanding one bucket lays out only its contents', () => {
    const { run } = load('mlp');
    const g = run.graphs.get('forward')!;
    const groups = new GroupTree(g);
    const expanded = groups.autoExpanded();
    expect(expanded.has('')).toBe(true);
    const first = visibleDot(g, groups, { expanded });
    expect(first.items.length).toBeLessThanOrEqual(120);
    expect(first.dot).not.toContain('prim::Constant');
    expect(first.dot).not.toMatch(/kind-prim-GetAttr/);
    const bucket = groups.group('').children.find(c => !expanded.has(c))!;
    expect(first.boxes).toContain(bucket);
    const opened = visibleDot(g, groups, { expanded: new Set([...expanded, bucket]) });
    expect(opened.boxes).not.toContain(bucket);
    expect(opened.items.length).toBeGreaterThan(first.items.length);
    // edges between boxes are de-duplicated and never self-loops
    const edgeLines = opened.dot.split('\n').filter(l => l.includes(' -> '));
    expect(new Set(edgeLines).size).toBe(edgeLines.length);
    expect(edgeLines.some(l => /^\s*(\S+) -> \1 /.test(l))).toBe(false);
    // deterministic
    expect(visibleDot(g, groups, { expanded: new Set([...expanded, bucket]) }).dot).toBe(opened.dot);
  });

  it('fully expanded small graph: ops drawn, constants folded into labels, edges through plumbing', () => {
    const { run } = load('net');
    const g = run.graphs.get('forward')!;
    const groups = new GroupTree(g);
    const all = groups.autoExpanded();
    expect(all.size).toBe(groups.groups.size); // small: everything open
    const view = visibleDot(g, groups, {
      expanded: all,
      highlights: new Map([[g.nodes.find(n => n.kind === 'aten::view')!.id, new Set(['selected'])]])
    });
    const view_ = g.nodes.find(n => n.kind === 'aten::view')!;
    // the view's size list [-1] is folded into its label
    expect(view.dot).toMatch(
      new RegExp(`n${view_.id} \\[id="n${view_.id}" label="view\\\\nFloat\\(4\\)\\\\n\\[-1\\]"`)
    );
    expect(view.dot).toContain('selected');
    expect(view.dot).toContain('subgraph cluster_');
    for (const n of g.nodes.filter(n => n.role === 'op')) {
      expect(view.representative.get(n.id)).toBe(`n${n.id}`);
    }
    // the linear reading the input x has an edge from the graph input
    expect(view.dot).toMatch(/in1 -> n\d+/);
    expect(view.dot).not.toMatch(/URL|href/);
  });

  it('collapsed boxes carry the highlights of what they hide', () => {
    const { run } = load('net');
    const g = run.graphs.get('forward')!;
    const groups = new GroupTree(g);
    const relu = g.nodes.find(n => n.kind === 'aten::relu' && n.scope === 'blocks.1.act')!;
    const view = visibleDot(g, groups, {
      expanded: new Set(['']),
      highlights: new Map([[relu.id, new Set(['root'])]])
    });
    expect(view.representative.get(relu.id)).toBe(`g${groups.index('blocks')}`);
    expect(view.dot).toMatch(/class="scope-collapsed has-root"/);
    const revealed = groups.revealing([relu.id], new Set(['']));
    // the three same-structured Blocks are folded into one repeat group: revealing opens it too
    expect([...revealed].sort()).toEqual(['', 'blocks', 'blocks.1', 'blocks.1.act', 'blocks~0..2']);
  });
});

describe('repeated blocks and long chains', () => {
  it('consecutive numbered siblings of one class and structure fold into one repeat group', () => {
    const { run } = load('net');
    const g = run.graphs.get('forward')!;
    const groups = new GroupTree(g);
    const ids = structureIds(g);
    expect(ids.get('blocks.0')).toBe(ids.get('blocks.2'));
    expect(ids.get('blocks.0')).not.toBe(ids.get('head'));
    // blocks (Sequential of 3 Blocks) -> one repeat group "Block ×3" -> the three blocks
    const repeat = groups.group('blocks~0..2');
    expect(REPEAT_MIN).toBeLessThanOrEqual(3);
    expect(repeat.repeat).toBe(3);
    expect(repeat.label).toBe('Block ×3');
    expect(repeat.children).toEqual(['blocks.0', 'blocks.1', 'blocks.2']);
    expect(groups.group('blocks').children).toEqual(['blocks~0..2']);
    expect(repeat.opCount).toBe(['blocks.0', 'blocks.1', 'blocks.2'].reduce((n, b) => n + groups.group(b).opCount, 0));
    // collapsed, it is one box that stands for every node of the three blocks
    const all = new Set(groups.groups.keys());
    all.delete(repeat.id);
    const view = visibleDot(g, groups, { expanded: all });
    const box = `g${groups.index(repeat.id)}`;
    const inBlocks = g.nodes.filter(n => n.role === 'op' && n.scope.startsWith('blocks.'));
    expect(inBlocks.length).toBeGreaterThan(3);
    expect(inBlocks.every(n => view.representative.get(n.id) === box)).toBe(true);
    expect(view.dot).toContain('label="Block ×3\\n' + repeat.opCount + ' ops"');
    expect(view.dot).toMatch(/class="scope-collapsed scope-repeat"/);
    // the leaf Linears inside a block are not numbered siblings: never folded
    expect([...groups.groups.values()].filter(x => x.repeat).length).toBe(1);
  });

  it('automatic expansion leaves repeat groups folded; a click opens them, and containers open in a chain', () => {
    const { run } = load('net');
    const g = run.graphs.get('forward')!;
    const groups = new GroupTree(g);
    const auto = groups.autoExpanded(8); // a small limit: as if the graph were big
    expect(auto.has('blocks')).toBe(true);
    expect(auto.has('blocks~0..2')).toBe(false);
    // opening `blocks` (nothing but the repeat group inside) opens the repeat group with it
    const opened = groups.opened('blocks', new Set(['']));
    expect([...opened].sort()).toEqual(['', 'blocks', 'blocks~0..2']);
    // closing closes everything inside, the root stays open
    const closed = groups.closed('blocks', new Set([...opened, 'blocks.1', 'head']));
    expect([...closed].sort()).toEqual(['', 'head']);
  });

  it('a long chain in one scope is split into sections in graph order; sections are bucketed when many', () => {
    const { run } = load('chain');
    const g = run.graphs.get('forward')!;
    const ops = g.nodes.filter(n => n.role === 'op');
    expect(ops.length).toBeGreaterThan(SECTION_SIZE);
    const groups = new GroupTree(g);
    const root = groups.group('');
    const sections = root.children.map(c => groups.group(c));
    expect(sections.map(s => s.label)).toEqual(['part 1 of 2', 'part 2 of 2']);
    expect(sections.every(s => s.sectionOf === '')).toBe(true);
    expect(sections[0].opCount).toBe(SECTION_SIZE);
    expect(sections[0].opCount + sections[1].opCount).toBe(ops.length);
    // every op of the first section comes before every op of the second
    const last0 = Math.max(...sections[0].nodeIds.filter(id => g.nodes[id].role === 'op'));
    const first1 = Math.min(...sections[1].nodeIds.filter(id => g.nodes[id].role === 'op'));
    expect(last0).toBeLessThan(first1);
    // it opens without drawing the whole chain: the first section stays a box
    const view = visibleDot(g, groups, { expanded: groups.autoExpanded() });
    expect(view.boxes).toContain(sections[0].id);
    expect(view.items.length).toBeLessThanOrEqual(120);
    expect(view.representative.get(ops[0].id)).toBe(`g${groups.index(sections[0].id)}`);
  });
});

describe('where the graph view opens', () => {
  it('on the root divergence of a failed check, the divergence stepped to, the first warned node, else nothing', () => {
    // the check passes on net, but its data-dependent branch is a warning about the trace: its first node
    const net = load('net');
    const toBool = net.facts.warnings.find(([category]) => category === 'to_bool')!;
    expect(toBool[3].length).toBeGreaterThan(0);
    expect(openingFocus(net.run, 'forward', null)).toBe(Math.min(...toBool[3]));
    // a failed check: its first root divergence with a node in the trace comes before any warning
    const root: CaseDivergence = {
      caseIndex: 0,
      method: 'forward',
      traceNode: 30,
      checkNode: 31,
      kind: 'root',
      reason: 'r'
    };
    const checkOnly: CaseDivergence = { ...root, traceNode: null }; // only in the check trace: nothing to show
    const failed = Object.create(net.run, {
      divergences: { get: () => [checkOnly, root, { ...root, traceNode: 12, kind: 'downstream' }] }
    }) as TraceRunModel;
    expect(openingFocus(failed, 'forward', null)).toBe(30);
    // the divergence the stepper is on wins
    expect(openingFocus(failed, 'forward', { ...root, traceNode: 12, kind: 'downstream' })).toBe(12);
    // the loop fixture's roots are all check-only: its view opens on its first warned node, if any
    const loop = load('loop');
    const warned = loop.facts.warnings.find(([category, , , ids]) => category !== 'deprecated' && ids.length);
    expect(openingFocus(loop.run, 'forward', null)).toBe(warned ? Math.min(...warned[3]) : null);
    // nothing to point at: the view opens on the inputs
    expect(openingFocus(load('mlp').run, 'forward', null)).toBeNull();
    expect(openingFocus(net.run, 'no-such-method', null)).toBeNull();
  });

  it('with no focus, opens on the inputs when one view holds them, else on the first input', () => {
    // the trial's nn.Transformer: src above the encoder (right), tgt a picture's width away at the decoder
    const src = { x: 1146, y: 21 };
    const tgt = { x: 206, y: 1059 };
    expect(inputsAnchor([src, tgt], 625)).toEqual(src); // their middle (676) was blank canvas
    expect(inputsAnchor([tgt, src], 625)).toEqual(tgt); // the first argument, wherever it is drawn
    // inputs side by side: their middle, at the topmost's height
    const sideBySide = [
      { x: 100, y: 30 },
      { x: 300, y: 20 }
    ];
    expect(inputsAnchor(sideBySide, 625)).toEqual({ x: 200, y: 20 });
    expect(inputsAnchor([], 625)).toBeNull();
  });
});
