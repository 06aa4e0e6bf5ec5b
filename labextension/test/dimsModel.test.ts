/**
 * The dims editor's model (backends/export/dimsModel.ts): the kernel's specs as rows per input dim and back, a
 * suggestion's specs as rows, and the flags to paste as core/export/dim_specs.py flags_text writes them.
 */
import { describe, expect, it } from 'vitest';

import { edited, flagsText, parseSpec, rowsOf, specsOf, withKind } from '../src/backends/export/dimsModel';
import type { DimsEditor } from '../src/model/protocol.generated';

const STATE: DimsEditor = {
  specs: ['x:1=seq[2,64]', 'mask:1=seq'],
  inputs: [
    { name: 'x', sizes: [2, 16] },
    { name: 'mask', sizes: [2, 16] }
  ],
  suggestions: [
    {
      source: 'torch',
      text: "_seq = Dim('_seq', min=1, max=8)\nseq = 8*_seq",
      specs: ['x:1=8*_seq[1,8]', 'mask:1=8*_seq'],
      changed: ['x:1=8*_seq[1,8]', 'mask:1=8*_seq'],
      removed: []
    }
  ],
  flags: '--dynamic "x:1=seq[2,64]" --dynamic mask:1=seq',
  problem: ''
};

describe('the dims editor', () => {
  it('reads each form of spec', () => {
    expect(parseSpec('x:0')).toMatchObject({ input: 'x', dim: 0, kind: 'auto' });
    expect(parseSpec('x:0=batch[2,64]')).toMatchObject({ kind: 'range', symbol: 'batch', min: '2', max: '64' });
    expect(parseSpec('x:1=8*seq[1,]')).toMatchObject({
      kind: 'multiple',
      times: '8',
      symbol: 'seq',
      min: '1',
      max: ''
    });
    expect(parseSpec('x:one')).toBeNull();
  });

  it('has a row per dim of each input, static where no spec names it, a shared range on each of its rows', () => {
    const rows = rowsOf(STATE);
    expect(rows.map(r => `${r.input}:${r.dim}=${r.kind}`)).toEqual([
      'x:0=static',
      'x:1=range',
      'mask:0=static',
      'mask:1=range'
    ]);
    expect(rows[3]).toMatchObject({ symbol: 'seq', min: '2', max: '64', size: 16 });
    // back to the same specs: the range once, on the symbol's first spec
    expect(specsOf(rows)).toEqual(STATE.specs);
    expect(flagsText(specsOf(rows))).toBe(STATE.flags);
    expect(edited(STATE, rows)).toBe(false);
  });

  it("takes a suggestion's specs and writes each kind", () => {
    const fixed = rowsOf(STATE, STATE.suggestions[0].specs);
    expect(specsOf(fixed)).toEqual(['x:1=8*_seq[1,8]', 'mask:1=8*_seq']);
    expect(edited(STATE, fixed)).toBe(true);
    const rows = rowsOf(STATE);
    rows[0] = withKind(rows[0], 'auto');
    rows[1] = withKind(rows[1], 'static');
    rows[3] = { ...withKind(rows[3], 'multiple'), min: '1', max: '8' };
    expect(specsOf(rows)).toEqual(['x:0', 'mask:1=8*seq[1,8]']);
    expect(flagsText(specsOf(rows))).toBe('--dynamic x:0 --dynamic "mask:1=8*seq[1,8]"');
    expect(withKind(rows[2], 'range')).toMatchObject({ kind: 'range', symbol: 'mask_0' });
    expect(withKind(rows[2], 'multiple')).toMatchObject({ symbol: '_mask_0', times: '8' });
  });
});
