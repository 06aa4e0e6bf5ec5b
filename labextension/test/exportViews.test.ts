/**
 * The explorer's views of an export run on the export fixture the Python model wrote (tests/frontend_fixtures.py
 * `exported`: an MLP with a Dim batch, then a loop that specialises a Dim.AUTO size): the header's capture name, a
 * shape's symbols and their tooltip, the Guards tab's model, and the options bar's export options.
 */
import { describe, expect, it } from 'vitest';

import { pendingFix } from '../src/controls/fix';

import { backendLabel, backendTitle, barOptions } from '../src/model/backends';
import {
  exportRecords,
  guardInInputs,
  guardsModel,
  rangeText,
  shapeSymbols,
  shapeTitle,
  showsDraftGraph,
  symbolText
} from '../src/backends/export/exportReport';
import { shapeText, userFrame } from '../src/model/graph';
import { historyLabel, optionsDiffering, savedOptionsText } from '../src/model/history';
import {
  EXPORT_OPTION_SPECS,
  EXPORT_READ_ONLY_OPTIONS,
  ExportExplorerOptions,
  HistoryEntry
} from '../src/model/protocol';
import { decodeRun, headerFacts } from '../src/model/run';
import { decodedRun, rawRun } from './runFixtures';

describe('an export run', () => {
  const run = decodedRun('exported');
  const report = exportRecords(run.raw)!;

  it('is named by its capture in the header; a trace by its own', () => {
    expect(run.raw.backend).toBe('export');
    expect(backendLabel(run.raw)).toBe('torch.export');
    expect(backendLabel(decodedRun('net').raw)).toBe('torch.jit.trace');
    expect(backendLabel(null)).toBe('torch.jit.trace');
    expect(backendTitle(run.raw)).toBe('captured by torch.export.export');
  });

  it('says a saved program or archive was read back, not captured', () => {
    const saved = { ...run.raw, source: 'file', options: { path: 'bert.pt2', map_location: 'cpu' } } as typeof run.raw;
    expect(backendLabel(saved)).toBe('saved torch.export');
    expect(backendTitle(saved)).toBe('read from an exported program (torch.export.save): bert.pt2; nothing was run');
    const archive = { ...saved, backend: 'trace', options: { path: 'net.pt' } } as typeof run.raw;
    expect(backendLabel(archive)).toBe('saved TorchScript');
    expect(backendTitle(archive)).toBe('read from a TorchScript archive: net.pt; nothing was run');
  });

  it('writes shapes with their symbols, and says each symbol’s range and sources on hover', () => {
    const graph = run.graphs.get('forward')!;
    const symbolic = graph.values.filter(v => shapeSymbols(v.shape).length > 0);
    expect(symbolic.length).toBeGreaterThan(0);
    const [batch] = report.symbols.filter(s => s.sources.includes('x.size()[0]'));
    const x = symbolic.find(v => v.name === 'x')!;
    expect(shapeText(x)).toBe(`Float(${batch.name}, 8)`);
    expect(shapeTitle(report, x.shape)).toBe(`${batch.name}: 2 ≤ ${batch.name} ≤ 64, from x.size()[0]`);
    // a static shape, or a trace's shape, has no tooltip
    expect(shapeTitle(report, [4, 8])).toBeNull();
    expect(shapeTitle(null, x.shape)).toBeNull();
    // an expression of symbols names the symbols it holds
    expect(shapeTitle(report, [`2*${batch.name}`])).toContain('from x.size()[0]');
  });

  it('lists its symbols, then the specialisation at its line with its nodes, in the Guards model', () => {
    const model = guardsModel(report)!;
    expect(model.symbols.map(symbolText)).toEqual(
      report.symbols.map(s => `${s.name}: ${rangeText(s)}, from ${s.sources.join(', ')}`)
    );
    const steps = model.symbols.find(s => s.sources.includes('steps.size()[0]'))!;
    expect(rangeText(steps)).toBe(`${steps.name} = 3`);
    expect(model.sections.map(s => s.kind)).toEqual(['specialization']);
    const [spec] = model.sections[0].guards;
    expect(spec.expr).toBe(`Eq(${steps.name}, 3)`);
    expect(spec.file).toBe('tests/frontend_fixtures.py');
    expect(spec.code).toContain('range(steps.size(0))');
    // its nodes are the nodes of its line, so clicking it marks what the specialised size made
    const graph = run.graphs.get('forward')!;
    expect(spec.node_ids.length).toBeGreaterThan(0);
    for (const id of spec.node_ids) {
      expect(userFrame(graph.nodes[id].source)?.line).toBe(spec.line);
    }
    expect(model.draft).toBeNull();
    expect(model.count).toBe(1);
    // the finding says the same in the Warnings tab
    expect(run.findings.map(f => f.kind)).toContain('dim_specialized');
  });

  it('has no Guards model when it is a trace; an empty report has empty sections', () => {
    expect(guardsModel(exportRecords(decodedRun('net').raw))).toBeNull();
    const empty = guardsModel({ ...report, guards: [], draft: [] })!;
    expect(empty.sections).toEqual([]);
    expect(empty.draft).toEqual([]);
    expect(empty.count).toBe(0);
    const drafted = guardsModel({
      ...report,
      draft: [{ failure_type: 'data_dependent_error', expr: 'Eq(u0, 1)', file: 'a.py', line: 3, message: '...' }]
    })!;
    expect(drafted.count).toBe(2);
  });

  it('has the export options in its options bar, from the one definition', () => {
    const bar = barOptions(run.raw);
    expect(bar.filter(s => !s.read_only).map(s => s.key)).toEqual(['strict', 'draft', 'module_mode', 'no_grad']);
    expect(bar.filter(s => s.read_only).map(s => s.key)).toEqual(['dynamic_shapes', 'check_inputs']);
    expect(EXPORT_OPTION_SPECS.map(s => s.key)).toEqual(bar.filter(s => !s.read_only).map(s => s.key));
    expect(EXPORT_READ_ONLY_OPTIONS.map(s => s.key)).toEqual(bar.filter(s => s.read_only).map(s => s.key));
    const recorded = run.raw.options as Record<string, unknown>;
    for (const spec of bar.filter(s => !s.read_only)) {
      expect(recorded[spec.key]).toBe(spec.default);
    }
    expect(recorded.dynamic_shapes).toContain("Dim('batch'");
  });

  it('names the export options that differ in the history, and offers no trace-only fix', () => {
    const first: ExportExplorerOptions = { strict: false, draft: 'on_failure', module_mode: 'as_is', no_grad: false };
    const second: ExportExplorerOptions = { ...first, draft: 'always', no_grad: true };
    expect(optionsDiffering(first, second)).toEqual(['draft="always"', 'no_grad=true']);
    const entry = (options: ExportExplorerOptions, i: number): HistoryEntry => ({
      run_id: `r${i}`,
      summary: 'ExportMLP: ok; 9 nodes',
      ok: true,
      verdict: 'ok',
      created: '',
      options: run.raw.options,
      explorer_options: options
    });
    expect(historyLabel([entry(first, 0), entry(second, 1)], 1)).toBe(
      'run 2: ok · draft="always", no_grad=true · 9 nodes'
    );
    expect(pendingFix({ check_trace: false }, first)).toEqual({ check_trace: false });
  });
});

describe("a guard in the inputs' terms", () => {
  const symbols = [
    { name: 's53', min: 2, max: 64, sources: ['attention_mask.size()[1]'], kind: 'backed' },
    { name: 's70', min: 2, max: 64, sources: ['input_ids.size()[1]'], kind: 'backed' },
    { name: 'u0', min: null, max: null, sources: [], kind: 'unbacked' }
  ] as Parameters<typeof guardInInputs>[1];

  it('writes each symbol as its first source', () => {
    expect(guardInInputs('Eq(s53, s70)', symbols)).toBe('Eq(attention_mask.size()[1], input_ids.size()[1])');
    expect(guardInInputs('s70 <= 64', symbols)).toBe('input_ids.size()[1] <= 64');
  });

  it('leaves symbols with no source as they are, and says nothing when none has one', () => {
    expect(guardInInputs('u0 >= s70', symbols)).toBe('u0 >= input_ids.size()[1]');
    expect(guardInInputs('u0 >= 0', symbols)).toBeNull();
    expect(guardInInputs('Eq(s530, 3)', symbols)).toBeNull(); // a longer name is another symbol
    expect(guardInInputs('Eq(s53, 3)', [])).toBeNull();
  });

  it("reads the fixture's specialisation in its input's terms", () => {
    const report = exportRecords(decodedRun('exported').raw)!;
    expect(guardInInputs(report.guards[0].expr, report.symbols)).toBe('Eq(steps.size()[0], 3)');
  });
});

describe('a failed export', () => {
  it("shows draft_export's graph as the draft's: an export with an error and a graph has only the draft's", () => {
    const exported = rawRun('exported');
    const error = rawRun('error').error!; // a trace's error: the field's shape is the same
    expect(showsDraftGraph(exported)).toBe(false);
    expect(showsDraftGraph({ ...exported, error })).toBe(true);
    // no draft (draft="never", or the draft could not run): no graph, nothing to mark
    expect(showsDraftGraph({ ...exported, error, graphs: {} })).toBe(false);
    // a failed trace that kept a graph is no draft
    expect(showsDraftGraph({ ...exported, backend: 'trace', error })).toBe(false);
  });
});

describe('a saved run in a read-only explorer', () => {
  it('names the options it was made with, or the file it was loaded from, with no dangling separator', () => {
    const exported = rawRun('exported');
    expect(savedOptionsText(exported)).toMatch(/^read-only · strict=false {2}draft="on_request"/);
    expect(savedOptionsText(rawRun('net'))).toMatch(/^read-only · strict=true /);
    // a .pt / .pt2 opened from the file browser: tj.load's options name none of the bar's (it read "read-only ·")
    const loaded = { ...exported, options: { path: 'models/model.pt2', map_location: null } };
    expect(savedOptionsText(loaded)).toBe('read-only · loaded from model.pt2');
    // as JupyterLab's server loads it: by its absolute path, to the CPU
    const served = { path: '/srv/notebooks/models/model.pt', map_location: 'cpu' };
    const archive = { ...rawRun('net'), source: 'file' as const, options: served };
    expect(savedOptionsText(archive)).toBe('read-only · loaded from model.pt');
    expect(savedOptionsText(null)).toBe('read-only');
  });
});

describe("the header's facts", () => {
  it('say an export that checked nothing checked nothing, and a refused export was not exported', () => {
    expect(headerFacts(decodedRun('exported'))).toContain('check passed (3 input sets)');
    // exported with no check_inputs and no dynamic dim: no input set was run (it read "check passed (0 input sets)")
    expect(headerFacts(decodedRun('compared'))).toContain('nothing to check');
    const error = rawRun('error').error!;
    expect(headerFacts(decodeRun({ ...rawRun('exported'), error, check: null }))).toContain('not exported');
    expect(headerFacts(decodedRun('error'))).toContain('not traced');
  });

  it('count the input sets a check skipped (a size the Python code rejects) apart from those it ran', () => {
    const exported = rawRun('exported');
    const [first, ...rest] = exported.check!.cases;
    const reason = 'the Python code rejects it (IndexError: index out of range in self)';
    const check = { ...exported.check!, cases: [first, ...rest.map(c => ({ ...c, outputs: [], skipped: reason }))] };
    const run = decodeRun({ ...exported, check });
    expect(headerFacts(run)).toContain('check passed (1 input set, 2 skipped)');
    expect(run.cases.map(c => c.skipped)).toEqual(['', reason, reason]);
  });
});
