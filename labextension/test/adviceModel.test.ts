/**
 * A refused export's advice as the Guards tab lists it (backends/export/adviceModel.ts): the dim, what happened,
 * the user's line and the library's beside it, the fixes in the kernel's order with their dynamic_shapes.
 */
import { describe, expect, it } from 'vitest';

import { adviceItems } from '../src/backends/export/adviceModel';
import type { DimAdvice, ExportReport } from '../src/model/protocol.generated';

const LSTM: DimAdvice = {
  kind: 'refused',
  symbol: 's77',
  source: 'x.size()[1]',
  input: 'x',
  dim: 1,
  given: "Dim('seq', min=2, max=64)",
  exprs: ['Eq(s77, 7)'],
  file: '/tmp/ipykernel_1/cell.py',
  line: 12,
  code: 'out, _ = self.lstm(x)',
  library: 'torch.nn',
  library_file: '/venv/lib/python3.12/site-packages/torch/nn/modules/rnn.py',
  library_line: 1120,
  library_code: 'result = _VF.lstm(input, hx, ...)',
  holds: null,
  suggested: 'None',
  fixes: [
    {
      kind: 'model_fact',
      text: 'nn.LSTM fixes the sequence length under export',
      spec: 'None',
      dynamic_shapes: "{'x': None}",
      code: ''
    },
    { kind: 'static', text: 'leave the dim static', spec: 'None', dynamic_shapes: "{'x': None}", code: '' }
  ]
};

function report(advice: DimAdvice[]): ExportReport {
  return { advice } as unknown as ExportReport;
}

describe('the advice of a refused export', () => {
  it('names the dim, the user line and the library line beside it, and the fixes in order', () => {
    const [item] = adviceItems(report([LSTM]));
    expect(item.dim).toBe('x:1');
    expect(item.headline).toBe("x.size()[1], given Dim('seq', min=2, max=64): export refused it");
    expect(item.at).toEqual({ file: LSTM.file, line: 12, code: LSTM.code });
    expect(item.library).toMatchObject({ name: 'torch.nn', line: 1120 });
    expect(item.fixes.map(f => f.label)).toEqual(['the model', 'static']);
    expect(item.fixes[0].dynamicShapes).toBe("{'x': None}");
    expect(item.suggested).toBe('None');
  });

  it("says a line of the user's own has no library, and whether the guards hold for the range", () => {
    const own: DimAdvice = {
      ...LSTM,
      kind: 'specialized',
      library: '',
      library_file: '',
      library_line: 0,
      holds: true
    };
    const [item] = adviceItems(report([own]));
    expect(item.library).toBeNull();
    expect(item.headline).toMatch(/the code made it a constant$/);
    expect(item.holds).toMatch(/hold for every size of the range/);
    const unknown: DimAdvice = { ...own, input: '', dim: -1, file: '', holds: false };
    const [other] = adviceItems(report([unknown]));
    expect(other.dim).toBe('s77');
    expect(other.at).toBeNull();
    expect(other.holds).toMatch(/fail for some sizes/);
  });

  it('lists nothing for a run without advice', () => {
    expect(adviceItems(null)).toEqual([]);
    expect(adviceItems({} as ExportReport)).toEqual([]);
  });
});
