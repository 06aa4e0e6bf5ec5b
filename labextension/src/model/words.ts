/** Counts in words, one rule for every view (core/words.py is the Python side). */

/** `1 op`, `3 ops`; `words` for a plural that is not the word + s (`mismatches`). */
export function plural(n: number, word: string, words = `${word}s`): string {
  return `${n} ${n === 1 ? word : words}`;
}
