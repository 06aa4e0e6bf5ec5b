/**
 * The draft offer's banner (backends/export/draftOffer.ts) by where the draft stands and what the kernel does.
 */
import { describe, expect, it } from 'vitest';

import { draftBanner, DRAFT_PHASE } from '../src/backends/export/draftOffer';
import type { DraftOffer, ExportReport } from '../src/model/protocol.generated';

function report(offer: DraftOffer | null): ExportReport {
  return {
    inputs: [],
    outputs: [],
    mutated_buffers: [],
    symbols: [],
    guards: [],
    log: '',
    draft: null,
    advice: [],
    draft_offer: offer
  } as unknown as ExportReport;
}

const ADDS = ['the graph export would have made', "draft_export's report"];
const idle = { live: true, status: 'error', phase: '' };

describe('the draft banner', () => {
  it('offers the draft with what it adds and a button the kernel can answer', () => {
    const m = draftBanner(report({ status: 'offered', adds: ADDS, how: 'run.draft()' }), idle)!;
    expect(m.state).toBe('offered');
    expect(m.headline).toMatch(/A draft is available/);
    expect(m.adds).toEqual(ADDS);
    expect(m.button).toMatchObject({ label: 'run the draft', enabled: true });
  });

  it('says why the button does nothing on a saved run or while the kernel is busy', () => {
    const offered = report({ status: 'offered', adds: ADDS, how: 'run.draft()' });
    const saved = draftBanner(offered, { ...idle, live: false })!;
    expect(saved.button?.enabled).toBe(false);
    expect(saved.button?.title).toMatch(/export again in a kernel and call run\.draft\(\)/);
    const busy = draftBanner(offered, { live: true, status: 'tracing', phase: 'exporting' })!;
    expect(busy.button?.enabled).toBe(false);
  });

  it('says it runs, that it ran, or that it failed', () => {
    const offered = report({ status: 'offered', adds: ADDS, how: 'run.draft()' });
    const running = draftBanner(offered, { live: true, status: 'tracing', phase: DRAFT_PHASE })!;
    expect(running.state).toBe('running');
    expect(running.button).toBeNull();
    const ran = draftBanner(report({ status: 'ran', adds: ADDS, how: 'run.draft()' }), idle)!;
    expect(ran.state).toBe('ran');
    expect(ran.headline).toMatch(/The draft ran/);
    expect(ran.adds).toEqual([]);
    const failed = draftBanner(report({ status: 'failed', adds: ADDS, how: 'run.draft()' }), idle)!;
    expect(failed.headline).toMatch(/could not run/);
  });

  it('shows nothing for a run that offers no draft', () => {
    expect(draftBanner(report(null), idle)).toBeNull();
    expect(draftBanner(null, idle)).toBeNull();
  });
});
