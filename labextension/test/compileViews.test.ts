/**
 * The explorer's views of a torch.compile run on the compile fixture the Python model wrote
 * (tests/frontend_fixtures.py `compiled`: a block that prints and branches on a value, called again with two other
 * lengths): the header's capture name, the Graph breaks tab's model (the first call's graphs in order with the breaks
 * between them, one step per break with the ops around it), the Recompilations tab's calls, the options bar's
 * compile options, and the tabs the row adds.
 */
import { describe, expect, it } from 'vitest';

import {
  breakSteps,
  breaksHeadline,
  callInputs,
  compileRecords,
  compiledText,
  firstCallProgram,
  recompiledRegion,
  recompilesModel,
  registryPage
} from '../src/backends/compile/compileReport';
import { addsTab, backendLabel, barOptions } from '../src/model/backends';
import type { CompileOpRef, CompileReport } from '../src/model/protocol.generated';
import { userFrame } from '../src/model/graph';
import { decodeRun } from '../src/model/run';
import { rawRun } from './runFixtures';

const compiled = rawRun('compiled');
const report = compileRecords(compiled) as CompileReport;

describe('a compiled run', () => {
  it('is read as the compile back end’s, with its tabs', () => {
    expect(backendLabel(compiled)).toBe('torch.compile');
    expect(report).not.toBeNull();
    expect(compileRecords(rawRun('exported'))).toBeNull();
    expect(addsTab(compiled, 'graphBreaks') && addsTab(compiled, 'recompilations')).toBe(true);
    expect(addsTab(rawRun('exported'), 'graphBreaks')).toBe(false);
    // every region is one of the run's graphs, decoded like any other
    const run = decodeRun(compiled);
    expect(report.regions.map(r => r.graph)).toEqual([...run.graphs.keys()]);
    expect(run.ok).toBe(false); // breaks and recompilations: the gate's "problems"
  });

  it('offers compile’s options in the bar, dynamic as a menu in words', () => {
    const bar = barOptions(compiled);
    expect(bar.map(o => o.key)).toEqual([
      'fullgraph',
      'dynamic',
      'backend',
      'check',
      'module_mode',
      'no_grad',
      'calls'
    ]);
    const dynamic = bar.find(o => o.key === 'dynamic')!;
    expect(dynamic.control).toBe('menu');
    expect(dynamic.choices).toEqual([null, true, false]);
    expect(dynamic.choice_labels).toEqual(['dynamic: auto', 'dynamic: all sizes', 'dynamic: off']);
    expect(bar.find(o => o.key === 'calls')?.read_only).toBe(true);
  });
});

describe('the Graph breaks tab', () => {
  const steps = breakSteps(report);

  it('steps through the breaks in the order dynamo met them, each with torch’s words and code', () => {
    expect(steps.map(s => s.gb.code)).toEqual(['print("block", tuple(h.shape))', 'if h.sum() > 0:']);
    expect(steps[1].gb.line).toBe(steps[0].gb.line + 1);
    expect(steps[0].title).toBe('GB0059 · Failed to trace builtin operator');
    expect(steps[1].title).toMatch(/^GB\d{4} · Data-dependent branching$/);
    expect(steps[0].gb.hints.length).toBeGreaterThan(0);
    expect(steps.every(s => s.cost === '')).toBe(true); // each hit once, in a function dynamo compiled
    expect(registryPage('GB0059')).toBe('https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html');
    expect(registryPage('')).toBeNull();
    expect(registryPage('javascript:alert(1)')).toBeNull();
  });

  it('joins each break to the op before it and the op after it, in the graphs on either side', () => {
    const run = decodeRun(compiled);
    const [print, branch] = steps;
    expect(print.before?.graph).toBe('forward');
    expect(print.after?.graph).toBe('forward#1');
    expect(branch.before?.graph).toBe('forward#1');
    expect(branch.after?.graph).toBe('forward#2');
    for (const ref of [print.before, print.after, branch.before, branch.after]) {
      const node = run.graphs.get(ref!.graph)!.nodes[ref!.node];
      expect(node.role).toBe('op');
    }
    // the op before the print is on the line above it (the relu); the op after the branch on the line below (the mul)
    const lineOf = (ref: CompileOpRef | null): number | undefined =>
      userFrame(run.graphs.get(ref!.graph)!.nodes[ref!.node].source)?.line;
    expect(lineOf(print.before)).toBe(print.gb.line - 1);
    expect(lineOf(branch.after)).toBe(branch.gb.line + 1);
  });

  it('lists the first call’s graphs in order with the break each ends at between them', () => {
    const program = firstCallProgram(report).map(row =>
      row.kind === 'graph' ? `${row.region.graph} (${row.region.ops})` : `break ${row.step.index}`
    );
    expect(program).toEqual(['forward (2)', 'break 0', 'forward#1 (2)', 'break 1', 'forward#2 (2)']);
    expect(breaksHeadline(report)).toBe(
      '2 graph breaks: the first call ran 3 graphs where one would do, 2 breaks per call'
    );
  });
});

describe('the Recompilations tab', () => {
  const model = recompilesModel(report, compiled)!;

  it('says per call what it was called with, what it compiled and which guard failed', () => {
    expect(callInputs(compiled)).toEqual(['Float(2, 8)', 'Float(3, 8)', 'Float(5, 8)']);
    expect(model.calls.map(c => c.label)).toEqual([
      'call 0 (the example inputs): Float(2, 8)',
      'call 1 (calls[0]): Float(3, 8)',
      'call 2 (calls[1]): Float(5, 8)'
    ]);
    expect(model.count).toBe(report.recompilations.length);
    const [first, second, third] = model.calls;
    expect(first.recompilations).toEqual([]);
    expect(second.recompilations[0].reason).toBe('x.size()[0] was 2, now 3');
    expect(second.recompilations[0].code).toBe('h = torch.relu(self.fc(x))');
    // the first size change makes the dim dynamic: the third call runs the graphs the second compiled
    expect(third.recompilations).toEqual([]);
    expect(compiledText(third)).toBe('compiled nothing: the graphs compiled before served it');
    expect(compiledText(second)).toBe('compiled forward#3, forward#4, forward#5');
    expect(recompiledRegion(report, second.recompilations[0])?.graph).toBe('forward#3');
    expect(model.limits).toEqual([]);
  });

  it('says when torch gave up on a function after its recompile limit', () => {
    const limited = recompilesModel({ ...report, limit_hit: ['forward'], recompile_limit: 8 }, compiled)!;
    expect(limited.limits).toEqual([
      'after 8 compilations torch stopped compiling forward: every later call with new inputs runs it eagerly, without a word'
    ]);
  });
});
