/**
 * Runs saved by earlier versions still render: upgraded on reading, then checked and decoded like any saved run.
 * Version 1: every tutorial's outputs and the front-end fixtures as they were before node roles became data
 * (tests/data/v1-runs.json.gz); version 2: every run saved in the checkout before the back-end registry
 * (tests/data/v2-runs.json.gz). Both shared with tests/core/test_legacy.py.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { gunzipSync } from 'zlib';
import { describe, expect, it } from 'vitest';

import { backendLabel } from '../src/model/backends';
import { upgradeRun } from '../src/model/legacy';
import { NODE_ROLES, TORCHSCRIPT_ROLES } from '../src/model/protocol';
import { decodeRun } from '../src/model/run';
import { savedRunProblem } from '../src/model/validate';

type SavedRuns = Record<string, Record<string, unknown>>;
const data = (name: string): SavedRuns =>
  JSON.parse(gunzipSync(readFileSync(join(__dirname, '..', '..', 'tests', 'data', name))).toString());
const saved = data('v1-runs.json.gz');

/** Every run of `runs` passes the saved-run check and decodes, its saved data left as it was: [name, data, run]. */
const decodedUnchanged = (runs: SavedRuns): [string, Record<string, unknown>, ReturnType<typeof decodeRun>][] =>
  Object.entries(runs).map(([name, data]) => {
    const before = JSON.stringify(data);
    expect(savedRunProblem(data), name).toBeNull();
    const run = decodeRun(data, savedRunProblem);
    expect(JSON.stringify(data), `${name}: reading changed the saved data`).toBe(before);
    return [name, data, run];
  });

describe('runs saved by version 1', () => {
  it('are version 1, from every tutorial', () => {
    const names = Object.keys(saved);
    expect(names.length).toBeGreaterThanOrEqual(40);
    expect(new Set(Object.values(saved).map(r => r.schema_version))).toEqual(new Set([1]));
    expect(names.some(n => n.startsWith('06-real-model'))).toBe(true);
  });

  it('pass the saved-run check and decode with the roles version 1 gave', () => {
    for (const [name, , run] of decodedUnchanged(saved)) {
      expect(run.raw.backend).toBe('trace');
      for (const graph of run.graphs.values()) {
        for (const node of graph.nodes) {
          expect(node.role, `${name}: ${node.kind}`).toBe(TORCHSCRIPT_ROLES[node.kind] ?? 'op');
          expect(NODE_ROLES).toContain(node.role);
        }
      }
    }
  });

  it('leave a current run and other data as they are', () => {
    const current = upgradeRun(saved['net.run.json']);
    expect(upgradeRun(current)).toBe(current);
    const newer = { kind: 'jupyter-tracejit.run', schema_version: 4 };
    expect(upgradeRun(newer)).toBe(newer);
    expect(savedRunProblem(newer)).toMatch(/schema_version 4/);
  });
});

describe('runs saved by version 2', () => {
  const v2 = data('v2-runs.json.gz');

  it('are every kind of run version 2 wrote', () => {
    expect(Object.keys(v2).length).toBeGreaterThanOrEqual(50);
    expect(new Set(Object.values(v2).map(r => r.schema_version))).toEqual(new Set([2]));
    expect(new Set(Object.values(v2).map(r => r.backend))).toEqual(new Set(['trace', 'export', 'torchscript-archive']));
  });

  it('pass the saved-run check, name their source apart from their back end, and keep their records', () => {
    for (const [name, data, run] of decodedUnchanged(v2)) {
      const options = data.options as Record<string, unknown>;
      const archive = data.backend === 'torchscript-archive';
      const fromFile = archive || Object.keys(options).sort().join() === 'map_location,path';
      expect(run.raw.source, name).toBe(fromFile ? 'file' : 'capture');
      expect(run.raw.backend, name).toBe(archive ? 'trace' : data.backend);
      expect(run.raw.records ?? null, name).toEqual(data.export ?? null);
      if (archive) {
        expect(backendLabel(run.raw)).toBe('saved TorchScript');
      }
    }
  });
});
