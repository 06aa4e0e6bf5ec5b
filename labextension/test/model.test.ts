/**
 * The TypeScript model against fixtures written by the Python model (tests/frontend_fixtures.py, committed in
 * labextension/test/fixtures): both sides must derive the same facts, and write the same DOT, from the same JSON.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { describe, expect, it } from 'vitest';

import { sideBySide } from '../src/model/align';
import { visibleDot } from '../src/model/dot';
import { opTitle } from '../src/model/nodeLabels';
import { escapeText, labelLines } from '../src/model/dotText';
import { decodeGraph, NodeInfo, TraceGraph, userFrame, ValueInfo } from '../src/model/graph';
import { BUCKET_SIZE, GroupTree, REPEAT_MIN, SECTION_SIZE, structureIds } from '../src/model/groups';
import { inputsAnchor, openingFocus } from '../src/model/opening';
import { floatValue, runProblem, TraceRunJSON } from '../src/model/protocol';
import { CaseDivergence, decodeRun, findingIsProblem, TraceRunModel } from '../src/model/run';
import { searchNodes, SearchCursor } from '../src/model/search';
import { Stepper } from '../src/model/stepper';

const dir = process.env.TRACEJIT_FIXTURES ?? join(__dirname, 'fixtures');

/** What `facts()` in tests/frontend_fixtures.py derives from a run with the Python model. */
interface GraphFacts {
  nodes: number;
  ops: number;
  kinds: Record<string, number>;
  scopes: Record<string, string>;
  scope_children: Record<string, string[]>;
  fold_targets: Record<string, number | null>;
  users_of_inputs: number[][];
  text_first_line: string;
  node_text: Record<string, string>;
  source_lines: [string, number, number[]][];
}

interface RunFacts {
  ok: boolean;
  summary: string;
  /** Verdict.problems_text: the counts named apart (`1 warning, 2 findings`) */
  problems_text: string;
  graphs: Record<string, GraphFacts>;
  /** `[case, method, trace node, check node, kind, reason]`; only for runs with a check */
  divergences?: [number, string, number | null, number | null, string, string][];
  /** `[case, method, matched node count]`; only for runs with a check */
  matched?: [number, string, number][];
  /** `[category, count, line, node ids]` */
  warnings: [string, number, number, number[]][];
  /** `[kind, portability, is_problem]` */
  findings: [string, boolean, boolean][];
  /** Verdict.problems */
  problems: number;
}

function load(name: string): { run: TraceRunModel; facts: RunFacts; raw: TraceRunJSON } {
  const raw = JSON.parse(readFileSync(join(dir, `${name}.run.json`), 'utf8'));
  const facts = JSON.parse(readFileSync(join(dir, `${name}.facts.json`), 'utf8'));
  return { run: decodeRun(raw), facts, raw };
}

const NAMES = ['net', 'loop', 'error', 'mlp', 'hostile'];

describe('decoding agrees with the Python model', () => {
  for (const name of NAMES) {
    it(`${name}: counts, kinds, scopes, fold targets, users, text`, () => {
      const { run, facts } = load(name);
      expect(run.ok).toBe(facts.ok);
      expect(run.summary).toBe(facts.summary);
      expect(run.problemsText).toBe(facts.problems_text);
      expect([...run.graphs.keys()].sort()).toEqual(Object.keys(facts.graphs).sort());
      for (const [method, f] of Object.entries(facts.graphs)) {
        const g = run.graphs.get(method)!;
        expect(g.size).toBe(f.nodes);
        expect(g.nodes.filter(n => n.role === 'op').length).toBe(f.ops);
        const kinds: Record<string, number> = {};
        g.nodes.forEach(n => (kinds[n.kind] = (kinds[n.kind] ?? 0) + 1));
        expect(kinds).toEqual(f.kinds);
        const scopes: Record<string, string> = {};
        const children: Record<string, string[]> = {};
        g.scopes.forEach((s, p) => {
          scopes[p] = s.type;
          children[p] = s.children;
        });
        expect(scopes).toEqual(f.scopes);
        expect(children).toEqual(f.scope_children);
        for (const [id, target] of Object.entries(f.fold_targets)) {
          expect(g.foldTarget(g.nodes[Number(id)])).toBe(target);
        }
        expect(g.inputs.map(v => g.users(v))).toEqual(f.users_of_inputs);
        expect(g.text().lines[0]).toBe(f.text_first_line);
        for (const [id, text] of Object.entries(f.node_text)) {
          expect(g.nodeText(g.nodes[Number(id)])).toBe(text);
        }
        for (const [file, line, ids] of f.source_lines) {
          expect(g.nodesAt(file, line)).toEqual(ids);
        }
      }
      expect(run.warnings.map(w => [w.category, w.count, w.line, w.node_ids])).toEqual(facts.warnings);
    });
  }

  it("a finding is a problem by one rule, and the count is the verdict's, on both sides", () => {
    const kinds = new Set<string>();
    for (const name of [...NAMES, 'causes', 'behind', 'portable', 'served_elsewhere']) {
      const { run, facts } = load(name);
      expect(run.findings.map(f => [f.kind, f.portability ?? false, findingIsProblem(f)])).toEqual(facts.findings);
      expect(run.problems).toBe(facts.problems);
      facts.findings.forEach(([kind, portability, problem]) => kinds.add(`${kind}:${portability}:${problem}`));
    }
    // the fixtures hold a portability note (green) and the same finding as a warning (amber), and other findings
    expect(kinds).toContain('device_constant:true:false');
    expect(kinds).toContain('device_constant:true:true');
    expect(kinds).toContain('python_runs:false:false');
    expect(kinds).toContain('frozen_loop:false:true');
    const portable = load('portable').run;
    const elsewhere = load('served_elsewhere').run;
    expect([portable.verdict.level, portable.problems]).toEqual(['ok', 0]);
    expect([elsewhere.verdict.level, elsewhere.problems]).toEqual(['warning', 1]);
  });

  it('divergences flatten case-major with roots first, like Python', () => {
    for (const name of ['net', 'loop']) {
      const { run, facts } = load(name);
      expect(run.divergences.map(d => [d.caseIndex, d.method, d.traceNode, d.checkNode, d.kind, d.reason])).toEqual(
        facts.divergences
      );
      expect(run.cases.map(c => [c.index, c.method, c.diff ? c.diff.matched.size : 0])).toEqual(facts.matched);
    }
  });

  it('refuses data that is not a run, naming the problem', () => {
    expect(runProblem(null)).toMatch(/expected an object/);
    expect(runProblem({ kind: 'x' })).toMatch(/not a jupyter-tracejit run/);
    expect(runProblem({ kind: 'jupyter-tracejit.run', schema_version: 7 })).toMatch(/schema_version 7/);
    expect(() => decodeRun({ kind: 'nope' })).toThrow(/not a jupyter-tracejit run/);
    const { raw } = load('net');
    const bad = structuredClone(raw);
    bad.graphs.forward.graph_schema = 99;
    expect(() => decodeRun(bad)).toThrow(/graph_schema 99/);
  });

  it('decodes non-finite floats', () => {
    expect(floatValue({ float: 'inf' })).toBe(Infinity);
    expect(floatValue({ float: '-inf' })).toBe(-Infinity);
    expect(floatValue({ float: 'nan' })).toBeNaN();
    expect(floatValue(1.5)).toBe(1.5);
    expect(floatValue(null)).toBeNull();
  });
});

describe('stepper', () => {
  it('walks the divergences of the loop fixture with n of m', () => {
    const { run } = load('loop');
    const total = run.divergences.length;
    expect(total).toBeGreaterThan(1);
    const s = new Stepper(total);
    expect(s.label).toBe(`– of ${total}`);
    expect(s.canStep('previous')).toBe(false);
    expect(s.step('next')).toBe(0);
    expect(s.label).toBe(`1 of ${total}`);
    expect(s.step('last')).toBe(total - 1);
    expect(s.canStep('next')).toBe(false);
    expect(s.step('next')).toBe(total - 1); // no wrap-around
    expect(s.step('previous')).toBe(total - 2);
    expect(s.step('first')).toBe(0);
    expect(new Stepper(0).label).toBe('no divergences');
    expect(new Stepper(3, 7).current).toBe(-1);
    // roots come before downstream nodes
    const kinds = run.divergences.map(d => d.kind);
    expect(kinds.indexOf('downstream')).toBeGreaterThan(kinds.lastIndexOf('root'));
  });
});

describe('search', () => {
  it('finds by kind, scope, debug name and source line, cycling with next/previous', () => {
    const { run } = load('net');
    const g = run.graphs.get('forward')!;
    const linears = searchNodes(g, 'linear');
    expect(linears.map(id => g.nodes[id].scope)).toEqual(['blocks.0.fc', 'blocks.1.fc', 'blocks.2.fc', 'head']);
    expect(searchNodes(g, 'scope:blocks.1').every(id => g.nodes[id].scope.startsWith('blocks.1'))).toBe(true);
    expect(searchNodes(g, 'scope:blocks.1').length).toBeGreaterThan(0);
    expect(searchNodes(g, 'kind:aten::relu').length).toBe(3);
    const someLinear = g.nodes[linears[0]];
    const frame = someLinear.source!.stack[someLinear.source!.userIndex];
    const base = frame.file.split('/').pop()!;
    expect(searchNodes(g, `${base}:${frame.line}`)).toEqual(
      g.nodesAt(frame.file, frame.line).filter(i => g.nodes[i].role === 'op')
    );
    expect(searchNodes(g, `:${frame.line}`)).toContain(someLinear.id);
    const named = g.values[g.nodes[linears[1]].outputs[0]].name;
    expect(searchNodes(g, `%${named}`)).toContain(linears[1]);
    expect(searchNodes(g, '   ')).toEqual([]);
    expect(searchNodes(g, 'aten::prim::nothing')).toEqual([]);
    const constants = searchNodes(g, 'constant', { includeFolded: true });
    expect(constants.length).toBeGreaterThan(0);
    expect(searchNodes(g, 'constant')).toEqual([]);

    const cursor = new SearchCursor(linears);
    expect(cursor.label).toBe('– of 4');
    expect(cursor.next()).toBe(linears[0]);
    expect(cursor.previous()).toBe(linears[3]); // wraps
    expect(cursor.label).toBe('4 of 4');
    expect(new SearchCursor([]).next()).toBeNull();
  });
});

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

describe('side by side around a divergence', () => {
  it('matched nodes share names; the extra select appears on the check side only', () => {
    const { run } = load('loop');
    const trace = run.graphs.get('forward')!;
    const c = run.cases[0];
    const root = c.diff!.roots[0];
    const sbs = sideBySide(trace, c.graph!, c.diff!, root);
    expect(root.traceNode).toBeNull();
    expect(c.graph!.nodes[root.checkNode!].kind).toBe('aten::select');
    expect(sbs.checkDot).toContain(`c${root.checkNode}`);
    const rootLine = sbs.checkDot.split('\n').find(l => l.trim().startsWith(`c${root.checkNode} [`))!;
    expect(rootLine).toMatch(/class="node kind-aten-select unmatched root current"/);
    const shared = [...sbs.traceNames.keys()].filter(n => n.startsWith('p') && sbs.checkNames.has(n));
    expect(shared.length).toBeGreaterThan(0);
    for (const name of shared) {
      const t = sbs.traceNames.get(name)!;
      expect(c.diff!.checkPartner(t)).toBe(sbs.checkNames.get(name));
    }
  });
});

describe('a side with no counterpart shows what stands in its place', () => {
  it('an op of a frozen loop with no counterpart: the other side shows the ops of its line, with a note', () => {
    const { run } = load('causes');
    const trace = run.graphs.get('forward')!;
    const c = run.cases[0];
    const onlyCheck = c.diff!.roots.filter(r => r.traceNode === null);
    expect(onlyCheck.length).toBeGreaterThan(0);
    for (const root of onlyCheck) {
      const at = userFrame(c.graph!.nodes[root.checkNode!].source)!;
      const sbs = sideBySide(trace, c.graph!, c.diff!, root);
      expect(sbs.notes).toEqual(['no counterpart: the ops of the same line here', '']);
      const lines = sbs.traceIds.map(id => userFrame(trace.nodes[id].source)?.line);
      expect(lines).toContain(at.line);
    }
  });

  it('a frozen branch at the start of a model: the ops at about the same place, at most 8', () => {
    const { run } = load('net');
    const trace = run.graphs.get('forward')!;
    const c = run.cases[0];
    const onlyTrace = c.diff!.roots.find(r => r.checkNode === null)!;
    expect(trace.nodes[onlyTrace.traceNode!].kind).toBe('aten::mul');
    const sbs = sideBySide(trace, c.graph!, c.diff!, onlyTrace);
    expect(sbs.notes).toEqual(['', 'no counterpart: the ops at about the same place here']);
    expect(sbs.checkIds.length).toBeGreaterThan(0);
    expect(sbs.checkIds.length).toBeLessThanOrEqual(8);
    // the check's first op (the linear the input goes to without the mul) is among them
    const firstOp = c.graph!.nodes.find(n => n.role === 'op')!;
    expect(sbs.checkIds).toContain(firstOp.id);
  });

  it('every divergence of the fixtures draws both sides', () => {
    for (const name of ['net', 'loop', 'causes']) {
      const { run } = load(name);
      for (const c of run.cases) {
        for (const d of c.diff?.divergences ?? []) {
          const sbs = sideBySide(run.graphs.get(c.method)!, c.graph!, c.diff!, d);
          expect([name, sbs.traceIds.length > 0, sbs.checkIds.length > 0]).toEqual([name, true, true]);
        }
      }
    }
  });

  it('a side that has matched nodes near the divergence gets no note', () => {
    const { run } = load('loop');
    const c = run.cases[0];
    const sbs = sideBySide(run.graphs.get('forward')!, c.graph!, c.diff!, c.diff!.roots[0]);
    expect(sbs.notes).toEqual(['', '']);
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
