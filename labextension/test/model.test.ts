/**
 * The TypeScript model against fixtures written by the Python model (tests/frontend_fixtures.py, committed in
 * labextension/test/fixtures): both sides must derive the same facts, and write the same DOT, from the same JSON.
 */
import { describe, expect, it } from 'vitest';

import { sideBySide } from '../src/model/align';
import { userFrame } from '../src/model/graph';
import { floatValue, runProblem } from '../src/model/protocol';
import { decodeRun, findingIsProblem } from '../src/model/run';
import { searchNodes, SearchCursor } from '../src/model/search';
import { Stepper } from '../src/model/stepper';
import { load, NAMES } from './runFixtures';

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
