/**
 * The draft a refused export offers (`run.records.draft_offer`, core/export/draft.py): what the explorer says of it
 * under the header, by where it stands: offered (with what it adds and a button that asks the kernel for it),
 * running, ran (its graph and report joined to the run), or failed (export's own error stands). DOM-free, so
 * vitest checks it; DraftBanner.ts draws it.
 */

import type { DraftOffer, ExportReport } from '../../model/protocol.generated';

/** The kernel's phase while it runs the draft (core/progress.py DRAFTING). */
export const DRAFT_PHASE = 'draft-exporting';

export interface DraftBannerModel {
  /** offered, running (the kernel drafts now), ran, failed */
  state: DraftOffer['status'] | 'running';
  /** the banner's line */
  headline: string;
  /** what the draft adds, one line each (only while offered) */
  adds: string[];
  /** whether the button shows (offered, or failed and worth another try), and whether it can be clicked */
  button: { label: string; enabled: boolean; title: string } | null;
}

/** Where the kernel is: live (it holds the model), its status and what it does now. */
export interface KernelState {
  live: boolean;
  status: string;
  phase: string;
}

/** What the banner says once the draft is no longer offered, or while it runs. */
const SAID: Record<Exclude<DraftBannerModel['state'], 'offered'>, string> = {
  running:
    'Running the draft (torch.export.draft_export)… its graph and report join this run when it ends; cancel stops it.',
  ran: "The draft ran: the graph is draft_export's, and the Guards tab lists what it reported beside export's refusal.",
  failed: "The draft could not run (torch's draft_export raised; the findings say what): export's own error stands."
};

/** The button's tooltip: what it runs, or why it cannot. */
function buttonTitle(kernel: KernelState, how: string): string {
  if (!kernel.live) {
    return `a saved run holds no model: export again in a kernel and call ${how}`;
  }
  return kernel.status === 'tracing'
    ? 'the kernel is busy with a capture: wait for it, or cancel it'
    : `run torch.export.draft_export on this run's model and inputs (${how}); it costs 2-10x the export`;
}

/** The banner of an export run's draft; null when the run offers none (an accepted export, draft="never"). */
export function draftBanner(report: ExportReport | null | undefined, kernel: KernelState): DraftBannerModel | null {
  const offer = report?.draft_offer ?? null;
  if (!offer) {
    return null;
  }
  const busy = kernel.status === 'tracing';
  const state = busy && kernel.phase === DRAFT_PHASE ? 'running' : offer.status;
  if (state !== 'offered') {
    return { state, headline: SAID[state], adds: [], button: null };
  }
  return {
    state,
    headline: 'A draft is available: torch.export.draft_export runs the model past what export refused, and adds',
    adds: offer.adds,
    button: { label: 'run the draft', enabled: kernel.live && !busy, title: buttonTitle(kernel, offer.how) }
  };
}
