/**
 * Saved runs whose ids point nowhere are refused with the one message schema errors get (model/references.ts),
 * instead of an empty graph and uncaught TypeErrors. The damaged runs and the words for each come from the Python
 * side (references.cases.json, written by tests/frontend_fixtures.py from core/validate.py): the same rules, the
 * same place, the same words.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { describe, expect, it } from 'vitest';

import { decodeRun } from '../src/model/run';
import type { TraceRunJSON } from '../src/model/protocol';
import { referenceProblem } from '../src/model/references';
import { savedRunProblem } from '../src/model/validate';
import { dir } from './runFixtures';

interface ReferenceCase {
  name: string;
  run: string;
  edits: [string, unknown][];
  at: string;
  detail: string;
}

function raw(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(dir, `${name}.run.json`), 'utf8'));
}

const CASES: ReferenceCase[] = JSON.parse(readFileSync(join(dir, 'references.cases.json'), 'utf8'));

/** The run with each [JSON pointer, value] set (tests/frontend_fixtures.py `apply_edits`). */
function damaged(c: ReferenceCase): Record<string, unknown> {
  const data = raw(c.run);
  for (const [path, value] of c.edits) {
    const keys = path
      .split('/')
      .slice(1)
      .map(k => k.replace(/~1/g, '/').replace(/~0/g, '~'));
    let parent = data as Record<string, unknown>;
    for (const key of keys.slice(0, -1)) {
      parent = parent[key] as Record<string, unknown>;
    }
    parent[keys[keys.length - 1]] = value;
  }
  return data;
}

describe('ids that point nowhere', () => {
  it('no real run has one', () => {
    for (const name of ['net', 'loop', 'error', 'mlp', 'hostile', 'causes', 'chain']) {
      expect(referenceProblem(raw(name) as unknown as TraceRunJSON)).toBeNull();
    }
  });

  it('the shared cases cover every kind of reference', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(20);
  });

  it.each(CASES.map(c => [c.name, c] as const))('%s: the same place and words as Python', (_, c) => {
    const data = damaged(c);
    expect(referenceProblem(data as unknown as TraceRunJSON)).toEqual({ at: c.at, detail: c.detail });
  });

  it.each(CASES.map(c => [c.name, c] as const))('%s: one clear message, and no decoding', (_, c) => {
    const data = damaged(c);
    const place = c.at.split('/').slice(1).join(' › ');
    const problem = savedRunProblem(data);
    expect(problem).toBe(
      `not a valid jupyter-tracejit run (at ${place}: ${c.detail}). ` +
        'The output was probably edited or cut short: re-run the cell to trace again.'
    );
    expect(() => decodeRun(data, savedRunProblem)).toThrow(c.detail);
  });

  it('a parent cycle is found in one pass over a long chain', () => {
    const data = raw('chain') as unknown as TraceRunJSON;
    const nodes = data.graphs.forward.nodes;
    nodes.forEach((row, i) => (row[7] = i - 1)); // every node inside the one before: 900 deep
    nodes[0][7] = nodes.length - 1; // and the first inside the last
    const started = performance.now();
    expect(referenceProblem(data)?.detail).toBe('node 0 is inside itself (its parents go round in a circle)');
    expect(performance.now() - started).toBeLessThan(200);
  });
});
