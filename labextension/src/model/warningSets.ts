/**
 * Warnings of one category that say the same thing: torch's paragraph (the message's first line) and the fix.
 * Every warning one library raised in a category reads alike (transformers' three frozen branches in ViT, T5 or
 * Whisper: torch's "Converting a tensor to a Python boolean…" and "This line is in the installed package
 * transformers…" three times); the Warnings tab says it once per set, then each place.
 */
import { TraceWarningJSON } from './protocol';

export interface WarningSet {
  /** torch's paragraph: the message's first line (what follows it is each warning's own detail) */
  headline: string;
  /** the fix (the core's advice) */
  advice: string;
  warnings: TraceWarningJSON[];
}

/** The first line of a warning's message: what torch says about the kind (the rest is this warning's numbers). */
export function headlineOf(w: TraceWarningJSON): string {
  return w.message.split('\n')[0];
}

/** What follows the first line: this warning's own detail (an output mismatch's numbers), '' when none. */
export function detailOf(w: TraceWarningJSON): string {
  return w.message.split('\n').slice(1).join('\n').trim();
}

/** `list` (one category's warnings) as sets that say the same thing, in the order of their first warning. */
export function warningSets(list: readonly TraceWarningJSON[]): WarningSet[] {
  const sets = new Map<string, WarningSet>();
  for (const w of list) {
    const headline = headlineOf(w);
    const advice = w.advice ?? '';
    const key = `${headline}\u0000${advice}`;
    let set = sets.get(key);
    if (!set) {
      sets.set(key, (set = { headline, advice, warnings: [] }));
    }
    set.warnings.push(w);
  }
  return [...sets.values()];
}
