/**
 * The trace-versus-export model on the fixture the Python model wrote (tests/frontend_fixtures.py `compared`: a
 * model exported with compare_trace=True whose trace records sizes, a `contiguous` export leaves out and a size
 * it froze into a constant): one step per source line with its reasons in words, the coverage by the kernel's
 * rule, the counts per reason, and the two pictures with a matched pair under one name.
 */
import { describe, expect, it } from 'vitest';

import { decodeGraph, userFrame } from '../src/model/graph';
import { decodeRun } from '../src/model/run';
import { capturePictures, coverage, lineSteps, REASON_WORDS, reasonCounts } from '../src/backends/export/traceVsExport';
import { rawRun } from './runFixtures';

describe('a trace compared with an export', () => {
  const run = decodeRun(rawRun('compared'));
  const compared = run.raw.compared!;
  const cmp = compared.comparison;
  const trace = decodeGraph(compared.trace);
  const exported = run.graphs.get('forward')!;

  it('steps through the lines that differ, one step per line, reasons in words, the lines with no source last', () => {
    const steps = lineSteps(cmp);
    const view = steps.find(s => s.code.includes('.contiguous()'))!;
    const frozen = steps.find(s => s.code.includes('torch.tensor(x.shape[0])'))!;
    expect(steps.map(s => s.line)).toEqual([view.line, frozen.line, 0]);
    expect(frozen.line).toBe(view.line + 1);
    // two reasons at one line make one step, in the order the header counts them
    expect(view.reasons.map(r => r.reason)).toEqual(['shape_arithmetic', 'no_op']);
    expect(view.reasons.map(r => r.words)).toEqual([REASON_WORDS.shape_arithmetic, REASON_WORDS.no_op]);
    expect(frozen.reasons.map(r => r.reason)).toEqual(['shape_arithmetic', 'frozen']);
    expect(frozen.reasons[1].detail).toContain('frozen as a constant');
    // each step holds its ops of both sides: the trace's size and contiguous, the export's constant it reads
    expect(view.traceNodes.map(id => trace.nodes[id].kind)).toEqual(['aten::size', 'aten::contiguous']);
    expect(view.exportNodes).toEqual([]);
    expect(frozen.exportNodes.length).toBeGreaterThan(0);
    for (const id of frozen.exportNodes) {
      expect(userFrame(exported.nodes[id].source)?.line).toBe(frozen.line);
    }
    expect(steps[2].file).toBe('');
  });

  it('names shape arithmetic without a side: export records sizes too, for a dynamic dimension', () => {
    // GPT-2 with a dynamic sequence length: the export's sym_size at the %export line, none in the trace
    const exportSizes = { ...cmp.lines[0], reason: 'shape_arithmetic' as const, trace_nodes: [], export_nodes: [0] };
    const [step] = lineSteps({ ...cmp, lines: [exportSizes] });
    expect(step.reasons[0].words).toBe('shape arithmetic');
    expect(reasonCounts({ ...cmp, lines: [exportSizes] })[0].text).toBe('shape arithmetic: 1 op at 1 line');
  });

  it('says how much of the trace the export matched, by the kernel’s rule (no-ops have no counterpart to find)', () => {
    const cov = coverage(cmp);
    expect(cov.matched).toBe(cmp.matched.length);
    expect(cov.comparable).toBe(cmp.trace_ops - 1); // the contiguous
    expect(cov.text).toBe(`${cov.matched} of ${cov.comparable} trace ops matched (100%)`);
    // what the count leaves out is said, so it reads right beside the trace's node count
    const shape = cmp.trace_shape_ops;
    expect(shape).toBeGreaterThan(0);
    expect(cov.uncounted).toContain(`not counted: ${shape} shape arithmetic op`);
    expect(cov.uncounted).toContain('1 no-op export leaves out');
    const partial = coverage({ ...cmp, matched: cmp.matched.slice(1) });
    expect(partial.text).toBe(`${cov.matched - 1} of ${cov.comparable} trace ops matched (80%)`);
    expect(coverage({ ...cmp, trace_ops: 0, matched: [], lines: [] }).share).toBe(1);
  });

  it('counts the differences per reason: ops of both sides, lines', () => {
    const counts = reasonCounts(cmp);
    expect(counts.map(c => c.reason)).toEqual(['shape_arithmetic', 'no_op', 'frozen']);
    const shape = counts[0];
    expect(shape.lines).toBe(3);
    expect(shape.traceNodes).toBe(cmp.trace_shape_ops);
    expect(shape.exportNodes).toBe(0);
    expect(shape.text).toBe(`${REASON_WORDS.shape_arithmetic}: ${cmp.trace_shape_ops} ops at 3 lines`);
    expect(counts[1].text).toBe(`${REASON_WORDS.no_op}: 1 op at 1 line`);
  });

  it('draws both graphs with a matched pair under one name, and every op a step names', () => {
    const pictures = capturePictures(trace, exported, compared, run.fileNames);
    for (const [t, e] of cmp.matched) {
      expect(pictures.traceName(t)).toBe(`p${t}`);
      expect(pictures.exportName(e)).toBe(`p${t}`);
      expect(pictures.traceNames.get(`p${t}`)).toBe(t);
      expect(pictures.exportNames.get(`p${t}`)).toBe(e);
    }
    for (const step of lineSteps(cmp)) {
      for (const id of step.traceNodes) {
        expect(pictures.traceNames.get(pictures.traceName(id))).toBe(id);
      }
      for (const id of step.exportNodes) {
        expect(pictures.exportNames.get(pictures.exportName(id))).toBe(id);
      }
    }
    // an op with no counterpart is classed with its reason; a matched one as matched
    const contiguous = trace.nodes.find(n => n.kind === 'aten::contiguous')!;
    expect(pictures.traceDot).toMatch(new RegExp(`t${contiguous.id} \\[[^\\n]*class="[^"]*differs reason-no_op"`));
    const [t0] = cmp.matched[0];
    expect(pictures.traceDot).toMatch(new RegExp(`p${t0} \\[[^\\n]*class="[^"]*matched"`));
    // no constants or parameters of their own: the ops, as the check's panes draw them
    expect([...pictures.traceNames.values()].every(id => trace.nodes[id].role === 'op')).toBe(true);
  });

  it('is absent from an export made without compare_trace', () => {
    expect(rawRun('exported').compared ?? null).toBeNull();
  });
});
