/**
 * The text of DOT (model/dot.ts; render/dot.py writes the same): every string from user code (module names,
 * debug names, string constants, source lines) escaped so that it can neither end a quoted string nor form a
 * Graphviz escape (`\\N`, `\\G`, `\\l`) or an HTML entity, control characters as spaces, cut to a length; class
 * names and ids made safe; a constant's value as the labels print it.
 */

import { spellValue, ValueSpelling } from './valueText';

export const MAX_LABEL_CHARS = 48;
export const MAX_TOOLTIP_CHARS = 160;
export const MAX_FOLDED_ITEMS = 3;
export const MAX_ITEM_CHARS = 24;
export const MAX_TOOLTIP_OUTPUTS = 4;
export const MAX_TITLE_CHARS = 120;
/** How a backslash of user text reads in tooltips: Graphviz expands escapes in tooltips twice. */
export const TOOLTIP_BACKSLASH = '\u29f5';

// eslint-disable-next-line no-control-regex -- matching control characters is the point: they are stripped from labels
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
const CLASS_BAD = /[^A-Za-z0-9_-]+/g;
/** an unpaired surrogate (render/dot.py `_SURROGATE`: in Python every surrogate is unpaired) */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const INT64_BOUND = 2 ** 63;

/** At most `limit` UTF-16 units, the last one `…` when cut; a surrogate pair is never split. */
export function truncate(text: string, limit: number): string {
  if (text.length <= limit) {
    return text;
  }
  let cut = text.slice(0, Math.max(limit - 1, 0));
  if (/[\uD800-\uDBFF]$/.test(cut)) {
    cut = cut.slice(0, -1);
  }
  return cut + '…';
}

/** One line of untrusted text as a literal fragment of a quoted DOT string. */
export function escapeText(text: string, limit = MAX_LABEL_CHARS, backslash = '\\\\'): string {
  return truncate(text.replace(LONE_SURROGATE, '\uFFFD').replace(CONTROL, ' '), limit)
    .replace(/&/g, '&amp;')
    .replace(/\\/g, backslash)
    .replace(/"/g, '\\"');
}

/** Lines of untrusted text as a quoted, centred multi-line DOT label. */
export function labelLines(lines: string[], limit = MAX_LABEL_CHARS): string {
  return '"' + lines.map(l => escapeText(l, limit)).join('\\n') + '"';
}

export function tooltipLines(lines: string[]): string {
  return '"' + lines.map(l => escapeText(l, MAX_TOOLTIP_CHARS, TOOLTIP_BACKSLASH)).join('&#10;') + '"';
}

export function cssToken(text: string): string {
  return text.replace(CLASS_BAD, '-').replace(/^-+|-+$/g, '') || 'x';
}

/** An id safe for DOT strings and DOM ids alike: other characters (code points) spelled `-u<hex>-`. */
export function domId(text: string): string {
  return text.replace(/[^A-Za-z0-9_.-]/gu, ch => `-u${ch.codePointAt(0)!.toString(16)}-`);
}

export function quoted(text: string): string {
  return '"' + text.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';
}

/** How the labels spell a value's leaves (render/dot.py `format_value`). */
const LABEL_SPELLING: ValueSpelling = {
  boolean: value => (value ? 'True' : 'False'),
  number: value => (value >= INT64_BOUND ? 'INT64_MAX' : value <= -INT64_BOUND ? 'INT64_MIN' : String(value)),
  tensor: (obj, spell) => {
    if (obj.tensor === null || typeof obj.tensor !== 'object') {
      return null;
    }
    const t = obj.tensor as { dtype?: string; shape?: number[]; preview?: unknown[] };
    const preview = t.preview ?? [];
    if (Array.isArray(t.shape) && t.shape.length === 0 && preview.length === 1) {
      return `tensor(${spell(preview[0])})`;
    }
    return `tensor<${t.dtype ?? ''}[${(t.shape ?? []).map(spell).join(', ')}]>`;
  }
};

/** A constant or attribute value as labels show it (`1`, `True`, `[-1, 2]`, `INT64_MAX`, `"s"`). */
export function formatValue(value: unknown): string {
  return spellValue(value, LABEL_SPELLING);
}
