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

/** The banner of an export run's draft; null when the run offers none (an accepted export, draft="never"). */
export function draftBanner(report: ExportReport | null | undefined, kernel: KernelState): DraftBannerModel | null {
  const offer = report?.draft_offer ?? null;
  if (!offer) {
    return null;
  }
  const busy = kernel.status === 'tracing';
  if (busy && kernel.phase === DRAFT_PHASE) {
    return {
      state: 'running',
      headline:
        'Running the draft (torch.export.draft_export)… its graph and report join this run when it ends; cancel stops it.',
      adds: [],
      button: null
    };
  }
  const button = (label: string): DraftBannerModel['button'] => ({
    label,
    enabled: kernel.live && !busy,
    title: !kernel.live
      ? `a saved run holds no model: export again in a kernel and call ${offer.how}`
      : busy
        ? 'the kernel is busy with a capture: wait for it, or cancel it'
        : `run torch.export.draft_export on this run's model and inputs (${offer.how}); it costs 2-10x the export`
  });
  if (offer.status === 'ran') {
    return {
      state: 'ran',
      headline:
        "The draft ran: the graph is draft_export's, and the Guards tab lists what it reported beside export's refusal.",
      adds: [],
      button: null
    };
  }
  if (offer.status === 'failed') {
    return {
      state: 'failed',
      headline:
        "The draft could not run (torch's draft_export raised; the findings say what): export's own error stands.",
      adds: [],
      button: null
    };
  }
  return {
    state: 'offered',
    headline: 'A draft is available: torch.export.draft_export runs the model past what export refused, and adds',
    adds: offer.adds,
    button: button('run the draft')
  };
}
