/**
 * How the run history names its runs (the options bar's history and the check tab's "compare two runs" list
 * read the same labels): `run 3: warnings · no_grad=true, module_mode="eval" · 12 nodes, check passed`.
 * A run names every option that differs from the first run, not only what changed since the run before: after
 * two changes, the run before's label no longer tells what the run was traced with.
 */
import { barOptions } from './backends';
import { HistoryEntry, TraceRunJSON } from './protocol';

/** The options bar's values (the widget's `options` trait: the run's back end's bar, by option key). */
export type AnyOptions = Record<string, unknown>;

/** `module_mode="eval", no_grad=true`: each option `run` was captured with that `first` was not, in the bar's order
 * (the kernel sends the options in it). */
export function optionsDiffering(first: AnyOptions, run: AnyOptions): string[] {
  const keys = Object.keys(run);
  const a = first as unknown as Record<string, unknown>;
  const b = run as unknown as Record<string, unknown>;
  return keys.filter(k => JSON.stringify(a[k]) !== JSON.stringify(b[k])).map(k => `${k}=${JSON.stringify(b[k])}`);
}

/** How many characters of a run's summary a label keeps (a select's option is one line). */
const MAX_FACTS_CHARS = 70;

/** The label of run `i` of `history` (see the header). */
export function historyLabel(history: readonly HistoryEntry[], i: number): string {
  const entry = history[i];
  const differ = i > 0 ? optionsDiffering(history[0].explorer_options, entry.explorer_options) : [];
  // "Net: ok; 12 nodes, 1 warning, check passed": the badge's word says the first part better
  const summary = entry.summary;
  const facts = summary.includes('; ') ? summary.slice(summary.indexOf('; ') + 2) : summary;
  return (
    `run ${i + 1}: ${entry.verdict}` +
    (differ.length ? ` · ${differ.join(', ')}` : '') +
    ` · ${facts.slice(0, MAX_FACTS_CHARS)}`
  );
}

/**
 * What a read-only explorer's options bar says of its saved run: `read-only · strict=true  check_trace=true ...`
 * by the names the bar uses, or `read-only · loaded from model.pt` for a file tj.load read (its options are the
 * load's, none of the bar's). dynamic_shapes / check_inputs left out (null) say nothing worth a word.
 */
export function savedOptionsText(run: TraceRunJSON | null | undefined): string {
  const saved = (run?.options ?? {}) as Record<string, unknown>;
  if (typeof saved.path === 'string') {
    // the file's name: the server loads by its absolute path (and to the CPU), which says nothing more
    return `read-only · loaded from ${saved.path.split(/[\\/]/).pop()}`;
  }
  // the bar's options, by its names; the ones a re-capture keeps (read-only) only when given
  const shown = barOptions(run)
    .filter(spec => spec.key in saved && !(spec.read_only && saved[spec.key] === null))
    .map(spec => `${spec.label}=${JSON.stringify(saved[spec.key])}`)
    .join('  ');
  return shown ? `read-only · ${shown}` : 'read-only';
}
