/**
 * Where the graph view of a refused capture opens (model/opening.ts): on the line torch refused at, in the draft's
 * graph, before anything else but a divergence; a refusal with no line or no node there opens on the inputs.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { describe, expect, it } from 'vitest';

import { userFrame } from '../src/model/graph';
import { openingFocus, refusalNode } from '../src/model/opening';
import { decodeRun, TraceRunModel } from '../src/model/run';

const exported = decodeRun(
  JSON.parse(
    readFileSync(join(process.env.TRACEJIT_FIXTURES ?? join(__dirname, 'fixtures'), 'exported.run.json'), 'utf8')
  )
);

function refusedAt(at: { file: string; line: number }): TraceRunModel {
  return Object.create(exported, {
    error: { get: () => ({ type: 'UserError', message: 'refused', phase: 'export', ...at }) }
  }) as TraceRunModel;
}

describe("a refused capture's first picture", () => {
  const graph = exported.graphs.get('forward')!;
  const ops = graph.nodes.filter(n => n.role === 'op' && userFrame(n.source) !== null);
  const last = ops[ops.length - 1];
  const { file, line } = userFrame(last.source)!;
  const first = ops.find(n => n.source!.stack.some(f => f.file === file && f.line === line))!;

  it('opens on the first op whose stack passes through the refused line', () => {
    expect(ops.length).toBeGreaterThan(1);
    expect(refusalNode(refusedAt({ file, line }), 'forward')).toBe(first.id);
    expect(openingFocus(refusedAt({ file, line }), 'forward', null)).toBe(first.id);
  });

  it('opens on the inputs for a line with no node, an error with no line, or no error', () => {
    expect(openingFocus(refusedAt({ file, line: 99999 }), 'forward', null)).toBeNull();
    expect(openingFocus(refusedAt({ file: 'elsewhere.py', line }), 'forward', null)).toBeNull();
    expect(openingFocus(refusedAt({ file: '', line: 0 }), 'forward', null)).toBeNull();
    expect(openingFocus(exported, 'forward', null)).toBeNull();
    expect(refusalNode(refusedAt({ file, line }), 'no-such-method')).toBeNull();
  });
});
