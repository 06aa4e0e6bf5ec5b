/**
 * Where a location reads (model/location.ts, the same labels as render/html.py `location_label`) and the verdict
 * the badge shows (written by the kernel; runs saved before it existed get the part `ok` and `error` tell).
 */
import { describe, expect, it } from 'vitest';

import { locationLabel } from '../src/model/location';
import { TraceRunJSON } from '../src/model/protocol';
import { decodeRun } from '../src/model/run';
import { rawRun } from './runFixtures';

describe('locations', () => {
  const cell = '/tmp/ipykernel_4711/2749541092.py';
  const names = { [cell]: 'cell [9]' };

  it('notebook code reads by its cell, other files by their base name', () => {
    expect(locationLabel(cell, 7, names)).toBe('cell [9], line 7');
    expect(locationLabel('/home/me/project/model.py', 12, names)).toBe('model.py:12');
    expect(locationLabel('C:\\work\\model.py', 3, names)).toBe('model.py:3');
    expect(locationLabel('', 0, names)).toBe('?');
  });

  it('a file named like an Object property is not a cell', () => {
    expect(locationLabel('constructor', 1, names)).toBe('constructor:1');
  });

  it('the run model labels with its own table', () => {
    const data = rawRun('net');
    const file = data.warnings[0].file;
    expect(decodeRun(data).locationLabel(file, 5)).toBe(`${file.split('/').pop()}:5`);
    const named = decodeRun({ ...data, run_id: 'named', file_names: { [file]: 'cell [3]' } });
    expect(named.locationLabel(file, 5)).toBe('cell [3], line 5');
    const older: Partial<TraceRunJSON> = { ...data, run_id: 'older' };
    delete older.file_names;
    expect(decodeRun(older).fileNames).toEqual({});
  });
});

describe('the verdict', () => {
  it('is what the kernel wrote: red for a failed check or trace, green with nothing against it', () => {
    expect(decodeRun(rawRun('loop')).verdict).toMatchObject({ level: 'error', label: 'check failed', roots: 1 });
    expect(decodeRun(rawRun('error')).verdict).toMatchObject({ level: 'error', label: 'failed' });
    expect(decodeRun(rawRun('mlp')).verdict).toMatchObject({ level: 'ok', label: 'ok', warnings: 0 });
    for (const name of ['net', 'loop', 'error', 'mlp']) {
      const verdict = decodeRun(rawRun(name)).verdict;
      expect(verdict.reasons.length).toBeGreaterThan(0);
      expect(verdict).toEqual(rawRun(name).verdict);
    }
  });

  it('of a run saved before the verdict existed comes from ok and error', () => {
    for (const name of ['net', 'loop', 'error', 'mlp']) {
      const older: Partial<TraceRunJSON> = rawRun(name);
      delete older.verdict;
      const verdict = decodeRun(older).verdict;
      expect(verdict.label).toBe(older.ok ? 'ok' : older.error ? 'failed' : 'check failed');
    }
  });
});
