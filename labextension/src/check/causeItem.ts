/**
 * One cause of divergences as the Check tab lists it (model/causes.ts groups them): its line (a link to its
 * nodes), what diverged there, why (the warnings and findings at that line, a finding's fix as one click), and its
 * roots to click.
 */

import { fixButton } from '../controls/fix';
import { Cause } from '../model/causes';
import { WARNING_TITLES } from '../model/run';
import { ExplorerContext } from '../state/context';
import { button, fixHint, h, location, withCode } from '../state/dom';

/** Roots listed per cause; the stepper reaches the rest. */
const MAX_LISTED = 8;

/** `cause` as a list item; `current` is the current divergence, `select` makes a divergence current. */
export function causeItem(
  ctx: ExplorerContext,
  cause: Cause,
  current: number,
  select: (index: number) => void
): HTMLElement {
  const all = ctx.divergences;
  const mine = [...cause.roots, ...cause.downstream];
  const why = [...warningsWhy(ctx, cause), ...findingsWhy(ctx, cause)];
  const shown = (cause.roots.length ? cause.roots : cause.downstream.slice(0, 1)).slice(0, MAX_LISTED);
  const more = (cause.roots.length || 1) - shown.length;
  return h(
    'li',
    { class: `jp-TraceExplorer-cause${mine.includes(current) ? ' jp-mod-active' : ''}` },
    causeHead(ctx, cause),
    why.length ? h('ul', { class: 'jp-TraceExplorer-because-list' }, ...why) : null,
    h(
      'ol',
      { class: 'jp-TraceExplorer-divergences' },
      ...shown.map(i =>
        h(
          'li',
          { class: i === current ? 'jp-mod-active' : '' },
          button(all[i].reason || all[i].kind, () => select(i), { class: 'jp-TraceExplorer-link' })
        )
      ),
      more > 0 ? h('li', { class: 'jp-TraceExplorer-muted' }, `… ${more} more (the stepper walks them)`) : null
    )
  );
}

/** The cause's line, what diverged there, how much follows from it, and which check input it was. */
function causeHead(ctx: ExplorerContext, cause: Cause): HTMLElement {
  const run = ctx.run!;
  return h(
    'div',
    { class: 'jp-TraceExplorer-causeHead' },
    cause.line
      ? location(cause.file, cause.line, run, (file, line) => ctx.showPlace(file, line))
      : h('span', { class: 'jp-TraceExplorer-muted' }, '(no source line)'),
    `: ${cause.summary}`,
    cause.roots.length
      ? cause.downstream.length
        ? h('span', { class: 'jp-TraceExplorer-muted' }, ` · ${cause.downstream.length} downstream at this line`)
        : null
      : h('span', { class: 'jp-TraceExplorer-muted' }, ' (downstream of another root)'),
    run.cases.length > 1
      ? h('span', { class: 'jp-TraceExplorer-muted' }, ` · ${run.cases[cause.caseIndex]?.label ?? ''}`)
      : null
  );
}

function warningsWhy(ctx: ExplorerContext, cause: Cause): HTMLElement[] {
  return cause.warnings.map(w =>
    h(
      'li',
      { class: 'jp-TraceExplorer-because jp-mod-warning' },
      h('strong', {}, WARNING_TITLES[w.category] ?? w.category),
      ' at ',
      location(w.file, w.line, ctx.run, (file, line) => ctx.showPlace(file, line)),
      fixHint(w.advice)
    )
  );
}

function findingsWhy(ctx: ExplorerContext, cause: Cause): HTMLElement[] {
  return cause.findings.map(f =>
    h(
      'li',
      { class: `jp-TraceExplorer-because jp-mod-${f.severity}`, 'data-kind': f.kind },
      h('strong', {}, f.title),
      // what it found here (a loop's passes in the trace and in the check): the cause in its own words
      h('p', { class: 'jp-TraceExplorer-message' }, ...withCode(f.message)),
      fixHint(f.hint),
      fixButton(ctx, f.fix)
    )
  );
}
