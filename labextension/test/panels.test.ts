/**
 * The panels' pure logic on fixtures written by the Python model: divergences grouped by cause, the stepper's
 * order over them, a place as the views write it found by search, and a finding's option fix.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { describe, expect, it } from 'vitest';

import { describeFix, pendingFix } from '../src/controls/fix';
import { barOptions } from '../src/model/backends';
import { historyLabel } from '../src/model/history';
import { warningSets } from '../src/model/warningSets';
import { describeDivergences, divergencePlace, groupByCause, stepOrder } from '../src/model/causes';
import { ExplorerOptions, HistoryEntry, OPTION_SPECS, TraceWarningJSON } from '../src/model/protocol';
import { argumentsOf, decodeRun } from '../src/model/run';
import { shapeText } from '../src/model/graph';
import { Inspector } from '../src/inspector/Inspector';
import { followingNote } from '../src/model/stepper';
import { searchNodes } from '../src/model/search';
import { decodedRun, dir } from './runFixtures';

describe('divergences by cause', () => {
  it('a frozen branch and a loop over rows: one cause per line, each explained by its own warning', () => {
    const run = decodedRun('causes');
    const { causes, following } = groupByCause(run);
    const toBool = run.userWarnings.find(w => w.category === 'to_bool')!;
    const iterate = run.userWarnings.find(w => w.category === 'iterate')!;
    // the branch's op (the line after the `if`), the loop's x[0] and the loop itself: three lines, in order
    expect(causes.map(c => c.line)).toEqual([toBool.line + 1, iterate.line - 1, iterate.line]);
    expect(causes.map(c => c.summary)).toEqual([
      '1 op only in the trace',
      '1 op only in the check trace',
      '1 op only in the check trace'
    ]);
    // the frozen `if` explains the branch (its warning maps to the branch's node), the loop warning the loop;
    // the loop does not hide behind the branch
    expect(causes[0].warnings.map(w => w.category)).toEqual(['to_bool']);
    expect(causes[2].warnings.map(w => w.category)).toEqual(['iterate']);
    expect(causes[1].warnings).toEqual([]);
    // every divergence is in exactly one place
    const placed = [...causes.flatMap(c => [...c.roots, ...c.downstream]), ...following].sort((a, b) => a - b);
    expect(placed).toEqual(run.divergences.map((_, i) => i));
    expect(causes[2].downstream.length).toBeGreaterThan(0); // the trace's own unbind at the loop line
  });

  it('a loop the diff calls downstream of a branch is still a cause of its own when its line has a warning', () => {
    const raw = JSON.parse(readFileSync(join(dir, 'causes.run.json'), 'utf8'));
    const iterate = raw.warnings.find((w: { category: string }) => w.category === 'iterate');
    const original = decodeRun(raw);
    // as if the diff had seen the loop's ops as reading the branch's diverged values: no root at the loop line
    raw.check.cases[0].diff.divergences = raw.check.cases[0].diff.divergences.map(
      (row: [number, number, number, string], i: number) => {
        const place = divergencePlace(original, original.divergences[i]);
        return place?.line === iterate.line ? [row[0], row[1], 1, 'follows from the divergence at the branch'] : row;
      }
    );
    const run = decodeRun(raw);
    const { causes } = groupByCause(run);
    const loop = causes.find(c => c.line === iterate.line)!;
    expect(loop.roots).toEqual([]);
    expect(loop.downstream.length).toBeGreaterThan(0);
    expect(loop.warnings.map(w => w.category)).toEqual(['iterate']);
    // the stepper reaches it with downstream on; the roots it walks by default are still what the verdict counts
    expect(stepOrder({ causes, following: [] }, true)).toContain(loop.downstream[0]);
    expect(stepOrder({ causes, following: [] }, false).every(i => run.divergences[i].kind === 'root')).toBe(true);
  });

  it('a loop over a size behind a frozen branch is a cause of its own: both causes named, both stepped to', () => {
    // `if x.sum() > 0` then `for i in range(x.size(0))`, checked with 5 rows instead of 3: every op of the loop
    // reads the branch's values, yet the loop's 2 passes more are a cause of their own
    const run = decodedRun('behind');
    const { causes } = groupByCause(run);
    const toBool = run.userWarnings.find(w => w.category === 'to_bool')!;
    const loop = run.findings.find(f => f.kind === 'frozen_loop')!;
    expect(loop.message).toContain('`for i in range(x.size(0)):` ran 3 times in the trace, 5 in the check trace');
    expect(causes.map(c => c.line)).toEqual([toBool.line, toBool.line + 3]);
    expect(causes.map(c => c.summary)).toEqual(['1 op differs', '6 ops only in the check trace']);
    expect(causes[0].warnings.map(w => w.category)).toEqual(['to_bool']);
    expect(causes[1].findings.map(f => f.kind)).toEqual(['frozen_loop']);
    expect(causes[0].findings).toEqual([]);
    // the stepper's roots reach both causes, as many as the verdict counts
    const order = stepOrder({ causes, following: [] }, false);
    expect(order.length).toBe(run.verdict.roots);
    expect(order).toContain(causes[1].roots[0]);
  });

  it('a loop over a size, which torch says nothing about, is explained by the frozen-loop finding at its line', () => {
    const run = decodedRun('loop');
    const { causes } = groupByCause(run);
    expect(causes.length).toBeGreaterThan(0);
    expect(causes[0].summary).toContain('only in the check trace');
    expect(causes[0].warnings).toEqual([]);
    expect(causes[0].findings.map(f => f.kind)).toEqual(['frozen_loop']);
    expect(causes[0].findings[0].message).toContain('for i in range(x.size(0))');
  });

  it('the stepper walks the roots cause by cause, as many as the verdict counts; downstream on request', () => {
    const run = decodedRun('causes');
    const grouped = groupByCause(run);
    const roots = stepOrder(grouped, false);
    expect(roots.length).toBe(run.verdict.roots);
    expect(roots.every(i => run.divergences[i].kind === 'root')).toBe(true);
    const everything = stepOrder(grouped, true);
    expect([...everything].sort((a, b) => a - b)).toEqual(run.divergences.map((_, i) => i));
    expect(everything.slice(0, grouped.causes[0].roots.length)).toEqual(grouped.causes[0].roots);
  });

  it('a run whose check passed has no causes', () => {
    const run = decodedRun('mlp');
    expect(groupByCause(run)).toEqual({ causes: [], following: [] });
    expect(stepOrder(groupByCause(run), false)).toEqual([]);
  });

  it('says what diverged in words', () => {
    const d = (traceNode: number | null, checkNode: number | null) => ({
      traceNode,
      checkNode,
      kind: 'root' as const,
      reason: '',
      caseIndex: 0,
      method: 'forward'
    });
    expect(describeDivergences([d(null, 1), d(null, 2), d(null, 3), d(null, 4), d(null, 5), d(null, 6)])).toBe(
      '6 ops only in the check trace'
    );
    expect(describeDivergences([d(1, null), d(2, 3)])).toBe('1 op only in the trace, 1 op differs');
  });
});

describe('search finds a place as the views write it', () => {
  it('`cell [9], line 7` finds the line, with the nodes its warning maps to', () => {
    const run = decodedRun('causes');
    const g = run.graphs.get('forward')!;
    const toBool = run.userWarnings.find(w => w.category === 'to_bool')!;
    const fileNames = { [toBool.file]: 'cell [9]' };
    const atLine = run.userWarnings.map(w => ({ file: w.file, line: w.line, nodeIds: w.node_ids }));
    // the `if` line records nothing itself: only the warning's nodes (the branch it froze) are found
    expect(searchNodes(g, `:${toBool.line}`)).toEqual([]);
    expect(searchNodes(g, `cell [9], line ${toBool.line}`, { fileNames, atLine })).toEqual(toBool.node_ids);
    expect(searchNodes(g, `CELL [9], LINE ${toBool.line}`, { fileNames, atLine })).toEqual(toBool.node_ids);
    expect(searchNodes(g, `:${toBool.line}`, { atLine })).toEqual(toBool.node_ids);
    // another cell's name or an unknown name finds nothing there
    expect(searchNodes(g, `cell [8], line ${toBool.line}`, { fileNames, atLine })).toEqual([]);
    const next = toBool.line + 1;
    expect(searchNodes(g, `cell [9], line ${next}`, { fileNames })).toEqual(searchNodes(g, `:${next}`));
    expect(searchNodes(g, `cell [9], line ${next}`, { fileNames }).length).toBeGreaterThan(0);
  });
});

describe("a finding's fix as options", () => {
  const options = Object.fromEntries(OPTION_SPECS.map(s => [s.key, s.default])) as unknown as ExplorerOptions;
  it('names what it sets as the options bar does and only what is not set yet', () => {
    const bar = barOptions({ backend: 'trace' });
    expect(describeFix({ no_grad: true }, bar)).toBe('tick no_grad');
    expect(describeFix({ module_mode: 'eval' }, bar)).toBe('mode eval()');
    expect(describeFix({ check_trace: false }, bar)).toBe('untick check');
    expect(pendingFix({ no_grad: true }, { ...options, no_grad: false })).toEqual({ no_grad: true });
    expect(pendingFix({ no_grad: true }, { ...options, no_grad: true })).toEqual({});
    expect(pendingFix(undefined, options)).toEqual({});
  });
});

describe('the run history', () => {
  const defaults = Object.fromEntries(OPTION_SPECS.map(s => [s.key, s.default])) as unknown as ExplorerOptions;
  const entry = (n: number, options: Partial<ExplorerOptions>, summary: string): HistoryEntry => ({
    run_id: `r${n}`,
    summary,
    ok: true,
    verdict: 'ok',
    created: '',
    options: {} as HistoryEntry['options'],
    explorer_options: { ...defaults, ...options }
  });

  it('names every option that differs from the first run, not only the change from the run before', () => {
    const history = [
      entry(1, {}, 'Net: ok; 12 nodes, check passed (1 input set)'),
      entry(2, { no_grad: true }, 'Net: ok; 12 nodes, check passed (1 input set)'),
      entry(3, { no_grad: true, module_mode: 'eval' }, 'Net: ok; 11 nodes, not checked'),
      entry(4, { module_mode: 'eval' }, 'Net: ok; 11 nodes, not checked')
    ];
    expect(history.map((_, i) => historyLabel(history, i))).toEqual([
      'run 1: ok · 12 nodes, check passed (1 input set)',
      'run 2: ok · no_grad=true · 12 nodes, check passed (1 input set)',
      'run 3: ok · module_mode="eval", no_grad=true · 11 nodes, not checked',
      // no_grad went back to the first run's: only the mode is left to name
      'run 4: ok · module_mode="eval" · 11 nodes, not checked'
    ]);
  });
});

describe('the inspector reads arguments like Netron', () => {
  it('names inputs from the op schema, with constants inline and parameters by path and shape', () => {
    const run = decodedRun('net');
    const g = run.graphs.get('forward')!;
    const linear = g.nodes.find(n => n.kind === 'aten::linear')!;
    const args = argumentsOf(run, g, linear);
    expect(args.map(a => a.name)).toEqual(['input', 'weight', 'bias']);
    expect(args[1].parameter).toBe('blocks.0.fc.weight');
    expect(args[1].parameterType).toBe('Float(8, 8)');
    expect(args[2].parameterType).toBe('Float(8)');
    expect(args[0].constant).toBeNull();
    const view = g.nodes.find(n => n.kind === 'aten::view')!;
    const viewArgs = argumentsOf(run, g, view);
    expect(viewArgs.map(a => a.name)).toEqual(['self', 'size']);
    expect(viewArgs[1].constant).toBe('[-1]');
    const text = Inspector.nodeInfo(run, g, linear, args);
    expect(text.split('\n').slice(0, 4)).toEqual([
      `aten::linear (node ${linear.id} of forward)`,
      `  input = %${g.values[linear.inputs[0]].name}: ${shapeText(g.values[linear.inputs[0]])}`,
      '  weight = blocks.0.fc.weight: Float(8, 8)',
      '  bias = blocks.0.fc.bias: Float(8)'
    ]);
    expect(text).toContain('module: blocks.0.fc (Linear)');
  });

  it('writes constants as Python does', () => {
    const run = decodedRun('causes');
    const g = run.graphs.get('forward')!;
    const select = g.nodes.find(n => n.kind === 'aten::select')!;
    const args = argumentsOf(run, g, select);
    expect(args.map(a => [a.name, a.constant])).toEqual([
      ['self', null],
      ['dim', '0'],
      ['index', '0']
    ]);
  });
});

describe("a library's warnings", () => {
  const warning = (line: number, advice: string, message = 'Converting a tensor to a Python boolean might…') =>
    ({
      category: 'to_bool',
      message,
      file: '/env/site-packages/transformers/x.py',
      line,
      code: '',
      func: '',
      count: 1,
      node_ids: [],
      node_match: '',
      method: 'forward',
      warning_class: 'TracerWarning',
      phases: ['trace'],
      torch_location: '',
      advice
    }) as TraceWarningJSON;
  const library = 'This line is in the installed package transformers, not in your code…';

  it("say torch's paragraph and the fix once per set that says the same, each place after it", () => {
    const own = warning(7, 'Use torch.where…');
    const sets = warningSets([warning(159, library), own, warning(180, library), warning(307, library)]);
    expect(sets.map(s => [s.advice, s.warnings.map(w => w.line)])).toEqual([
      [library, [159, 180, 307]],
      ['Use torch.where…', [7]]
    ]);
    expect(sets[0].headline).toBe('Converting a tensor to a Python boolean might…');
    // torch's numbers under the first line are each warning's own: they do not split a set
    const numbers = warningSets([warning(1, 'x', 'Output nr 1.\nMax 1.5'), warning(2, 'x', 'Output nr 1.\nMax 2.5')]);
    expect(numbers.map(s => s.warnings.length)).toEqual([2]);
  });
});

describe('the downstream divergences at other lines', () => {
  it('ask to tick "downstream too" until it is ticked', () => {
    expect(followingNote(3, false)).toBe(
      '3 downstream divergences at other lines follow from these roots (tick "downstream too" to walk them)'
    );
    expect(followingNote(1, true)).toBe(
      '1 downstream divergence at other lines follow from these roots (the stepper walks them)'
    );
  });
});
