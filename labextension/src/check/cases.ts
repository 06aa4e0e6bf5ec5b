/**
 * The Check tab's parts that read one check input or one divergence: a check input's section (its outputs against
 * Python and the re-trace, with torch's words for a mismatch, and what diverged), and a divergence's source line on
 * one side.
 */

import { TraceGraph, userFrame } from '../model/graph';
import { floatValue } from '../model/protocol';
import { CheckCase, plural, TraceRunModel } from '../model/run';
import { h, location, numberText } from '../state/dom';

/** The check side's name: what it was traced with (`check with check_inputs[0]`). */
export function checkSideLabel(c: CheckCase): string {
  return `check with ${c.label}`;
}

/** A divergence's node on one side: its kind and source line (a link to that line's nodes). */
export function sourceLine(
  run: TraceRunModel | null,
  graph: TraceGraph | null,
  id: number | null,
  side: string,
  open?: (file: string, line: number) => void
): HTMLElement {
  if (!graph || id === null) {
    return h('p', { class: 'jp-TraceExplorer-muted' }, `${side}: no counterpart`);
  }
  const n = graph.nodes[id];
  const f = userFrame(n.source);
  return h(
    'div',
    { class: 'jp-TraceExplorer-side-source' },
    h('span', { class: 'jp-TraceExplorer-muted' }, `${side}: `),
    `${n.kind} `,
    f ? location(f.file, f.line, run, open) : h('span', { class: 'jp-TraceExplorer-muted' }, '(no source)'),
    f?.code ? h('pre', { class: 'jp-TraceExplorer-code' }, f.code) : null
  );
}

/** One output compared: ok or MISMATCH, the errors and the tolerances, then torch's words for a mismatch. */
function outputRows(c: CheckCase): HTMLTableRowElement[] {
  return c.outputs
    .flatMap(o => [
      h(
        'tr',
        { class: o.ok ? 'jp-mod-ok' : 'jp-mod-error' },
        h('td', {}, `output ${o.index + 1} vs ${o.against === 'python' ? 'Python' : 're-trace'}`),
        h('td', {}, o.ok ? 'ok' : 'MISMATCH'),
        h('td', {}, 'max abs ', numberText(floatValue(o.max_abs))),
        h('td', {}, 'max rel ', numberText(floatValue(o.max_rel))),
        h(
          'td',
          { class: 'jp-TraceExplorer-muted' },
          'rtol ',
          numberText(floatValue(o.rtol)),
          ', atol ',
          numberText(floatValue(o.atol))
        )
      ),
      // torch's own words for the mismatch (mismatched elements, greatest differences), not cut short
      !o.ok && o.message
        ? h(
            'tr',
            { class: 'jp-TraceExplorer-detailRow' },
            h('td', { colspan: 5 }, h('pre', { class: 'jp-TraceExplorer-code jp-TraceExplorer-detail' }, o.message))
          )
        : null
    ])
    .filter((row): row is HTMLTableRowElement => row !== null);
}

/** A check input: its label and call, its badge, its exception, its outputs, and what diverged. */
export function caseSection(c: CheckCase): HTMLElement {
  const outputs = outputRows(c);
  const diff = c.diff;
  const roots = diff?.roots.length ?? 0;
  const downstream = diff?.downstream.length ?? 0;
  return h(
    'div',
    { class: 'jp-TraceExplorer-case' },
    h(
      'h4',
      {},
      `${c.label}`,
      h('span', { class: 'jp-TraceExplorer-muted' }, ` ${c.method}(${c.inputs.join(', ')})`),
      c.skipped
        ? h('span', { class: 'jp-TraceExplorer-badge', title: c.skipped }, 'skipped')
        : h(
            'span',
            { class: c.ok ? 'jp-TraceExplorer-badge jp-mod-ok' : 'jp-TraceExplorer-badge jp-mod-error' },
            c.ok ? 'ok' : 'failed'
          )
    ),
    c.exception ? h('p', { class: 'jp-TraceExplorer-message jp-mod-error' }, c.exception.message.split('\n')[0]) : null,
    outputs.length ? h('table', { class: 'jp-TraceExplorer-table' }, h('tbody', {}, ...outputs)) : null,
    diff && (roots || downstream) ? h('p', {}, `${plural(roots, 'root divergence')}, ${downstream} downstream`) : null,
    c.textDiffers
      ? h('p', { class: 'jp-TraceExplorer-muted' }, "torch's printed graphs differ only in debug names")
      : null,
    diff && diff.constantDiffs.length
      ? h('p', {}, `${diff.constantDiffs.length} tensor constant(s) differ in value`)
      : null
  );
}
