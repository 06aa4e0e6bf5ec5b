/**
 * Saved runs are checked against the run schema before the explorer shows them (model/validate.ts): every
 * fixture run (real runs written by the Python model) passes; an edited or truncated one gets one message that
 * says where it is wrong and what to do.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { describe, expect, it } from 'vitest';

import { decodeRun } from '../src/model/run';
import { savedRunProblem } from '../src/model/validate';
import { dir } from './runFixtures';

const NAMES = ['net', 'loop', 'error', 'mlp', 'hostile'];

function raw(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(dir, `${name}.run.json`), 'utf8'));
}

describe('saved runs', () => {
  it.each(NAMES)('the real run %s is valid', name => {
    expect(savedRunProblem(raw(name))).toBeNull();
  });

  it('a node of the wrong shape is named by its path', () => {
    const data = raw('net') as { graphs: Record<string, { nodes: unknown[] }> };
    data.graphs.forward.nodes[3] = 'oops';
    const problem = savedRunProblem(data);
    expect(problem).toMatch(/^not a valid jupyter-tracejit run \(at graphs › forward › nodes › 3: /);
    expect(problem).toMatch(/re-run the cell/);
  });

  it('a missing field and an unknown field are named', () => {
    const missing = raw('loop');
    delete missing.warnings;
    expect(savedRunProblem(missing)).toMatch(/missing field "warnings"/);
    const extra = { ...raw('loop'), surprise: 1 };
    expect(savedRunProblem(extra)).toMatch(/unexpected field "surprise"/);
  });

  it('another kind or version says so before any field', () => {
    expect(savedRunProblem(null)).toMatch(/not a jupyter-tracejit run/);
    expect(savedRunProblem({ ...raw('net'), schema_version: 99, graphs: 'x' })).toMatch(/schema_version 99/);
  });

  it('decodeRun validates only when asked (live runs are our own)', () => {
    const data = { ...raw('mlp'), surprise: 1 };
    expect(() => decodeRun(data)).not.toThrow();
    expect(() => decodeRun(data, savedRunProblem)).toThrow(/unexpected field "surprise"/);
  });
});
