/**
 * Runs saved by version 1 (every tutorial's outputs and the front-end fixtures as they were before node roles
 * became data: tests/data/v1-runs.json.gz, shared with tests/core/test_legacy.py) still render: upgraded on
 * reading, then checked and decoded like any saved run.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { gunzipSync } from 'zlib';
import { describe, expect, it } from 'vitest';

import { upgradeRun } from '../src/model/legacy';
import { NODE_ROLES, TORCHSCRIPT_ROLES } from '../src/model/protocol';
import { decodeRun } from '../src/model/run';
import { savedRunProblem } from '../src/model/validate';

const V1_RUNS = join(__dirname, '..', '..', 'tests', 'data', 'v1-runs.json.gz');
const saved: Record<string, Record<string, unknown>> = JSON.parse(gunzipSync(readFileSync(V1_RUNS)).toString());

describe('runs saved by version 1', () => {
  it('are version 1, from every tutorial', () => {
    const names = Object.keys(saved);
    expect(names.length).toBeGreaterThanOrEqual(40);
    expect(new Set(Object.values(saved).map(r => r.schema_version))).toEqual(new Set([1]));
    expect(names.some(n => n.startsWith('06-real-model'))).toBe(true);
  });

  it('pass the saved-run check and decode with the roles version 1 gave', () => {
    for (const [name, data] of Object.entries(saved)) {
      const before = JSON.stringify(data);
      expect(savedRunProblem(data), name).toBeNull();
      const run = decodeRun(data, savedRunProblem);
      expect(JSON.stringify(data), `${name}: reading changed the saved data`).toBe(before);
      expect(run.raw.backend).toBe('trace');
      for (const graph of run.graphs.values()) {
        for (const node of graph.nodes) {
          expect(node.role, `${name}: ${node.kind}`).toBe(TORCHSCRIPT_ROLES[node.kind] ?? 'op');
          expect(NODE_ROLES).toContain(node.role);
        }
      }
    }
  });

  it('leave a version-2 run and other data as they are', () => {
    const current = upgradeRun(saved['net.run.json']);
    expect(upgradeRun(current)).toBe(current);
    const newer = { kind: 'jupyter-tracejit.run', schema_version: 3 };
    expect(upgradeRun(newer)).toBe(newer);
    expect(savedRunProblem(newer)).toMatch(/schema_version 3/);
  });
});
