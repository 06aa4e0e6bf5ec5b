/**
 * The explorer's shared state decodes the run on screen once per JSON the host holds: a run that keeps its id but
 * comes back with more (an export's draft joined to it) is decoded again.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { describe, expect, it } from 'vitest';

import type { TraceRunJSON } from '../src/model/protocol';
import { ExplorerContext } from '../src/state/context';
import type { ExplorerHost, HostKey, HostState } from '../src/state/host';

const dir = process.env.TRACEJIT_FIXTURES ?? join(__dirname, 'fixtures');

function hostOf(state: { run: TraceRunJSON | null }): ExplorerHost {
  return {
    readOnly: true,
    get: <K extends HostKey>(key: K) => (key === 'run' ? state.run : null) as HostState[K],
    set: () => undefined,
    send: () => undefined,
    onChange: () => () => undefined
  };
}

describe('the run on screen', () => {
  it('is decoded once per JSON, again when the same run comes back changed', () => {
    const raw: TraceRunJSON = JSON.parse(readFileSync(join(dir, 'exported.run.json'), 'utf8'));
    const state = { run: raw };
    const ctx = new ExplorerContext(hostOf(state));
    const first = ctx.run;
    expect(first).not.toBeNull();
    expect(ctx.run).toBe(first); // the same JSON: the same model
    state.run = { ...raw, summary: `${raw.summary} (drafted)` }; // same run_id and created
    const again = ctx.run;
    expect(again).not.toBe(first);
    expect(again?.runId).toBe(first?.runId);
    expect(again?.summary).toMatch(/drafted/);
  });
});
