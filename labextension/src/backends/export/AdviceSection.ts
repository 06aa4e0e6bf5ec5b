/**
 * The Guards tab's first section on an export whose dynamic dims failed: one card per dim (adviceModel.ts) with
 * what happened, the user's line as a link to its nodes (as a guard's), "in torch.nn" with the library's line
 * beside it when a library made the guard, torch's suggested fix in the user's dynamic_shapes terms, and the
 * fixes best first.
 */

import { card, h, location } from '../../state/dom';
import type { ExplorerContext } from '../../state/context';
import { AdviceItem, adviceItems } from './adviceModel';
import type { ExportReport } from '../../model/protocol.generated';

function fixItem(f: AdviceItem['fixes'][number]): HTMLElement {
  return h(
    'li',
    { class: 'jp-TraceExplorer-adviceFix' },
    h('span', { class: 'jp-TraceExplorer-adviceFixKind' }, f.label),
    ' ',
    f.text,
    f.dynamicShapes
      ? h('div', {}, 'dynamic_shapes=', h('code', { class: 'jp-TraceExplorer-mono' }, f.dynamicShapes))
      : null,
    f.code ? h('pre', { class: 'jp-TraceExplorer-code' }, f.code) : null
  );
}

function adviceCard(a: AdviceItem, ctx: ExplorerContext): HTMLElement {
  const run = ctx.run;
  const lib = a.library;
  return card(
    { class: 'jp-TraceExplorer-advice', 'data-dim': a.dim },
    [
      h('code', { class: 'jp-TraceExplorer-guardExpr' }, a.dim),
      h('span', {}, a.headline),
      a.at ? location(a.at.file, a.at.line, run, (file, line) => ctx.showPlace(file, line)) : null
    ],
    [
      a.at?.code ? h('pre', { class: 'jp-TraceExplorer-code' }, a.at.code) : null,
      lib
        ? h(
            'div',
            { class: 'jp-TraceExplorer-adviceLibrary' },
            h('span', { class: 'jp-TraceExplorer-muted' }, `in ${lib.name}: `),
            location(lib.file, lib.line, run),
            lib.code ? h('pre', { class: 'jp-TraceExplorer-code' }, lib.code) : null
          )
        : null,
      a.exprs.length
        ? h(
            'div',
            { class: 'jp-TraceExplorer-muted' },
            'guards: ',
            ...a.exprs.flatMap((e, i) => [i ? ', ' : null, h('code', {}, e)])
          )
        : null,
      a.holds ? h('div', { class: 'jp-TraceExplorer-muted' }, a.holds) : null,
      a.suggested
        ? h('div', {}, "torch's suggested fix: ", h('code', { class: 'jp-TraceExplorer-mono' }, a.suggested))
        : null,
      a.fixes.length ? h('ol', { class: 'jp-TraceExplorer-adviceFixes' }, ...a.fixes.map(fixItem)) : null
    ]
  );
}

/** The section, or null when no dim failed. */
export function adviceSection(report: ExportReport | null, ctx: ExplorerContext): HTMLElement | null {
  const items = adviceItems(report);
  if (!items.length) {
    return null;
  }
  return h(
    'div',
    { class: 'jp-TraceExplorer-section', 'data-section': 'advice' },
    h('h4', {}, `Dims that failed (${items.length})`),
    h(
      'p',
      { class: 'jp-TraceExplorer-muted' },
      'where each dynamic dim failed and the fixes that apply there, best first'
    ),
    h('ul', { class: 'jp-TraceExplorer-list' }, ...items.map(a => adviceCard(a, ctx)))
  );
}
