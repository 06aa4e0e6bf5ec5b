/**
 * The "Diff" tab of a run shown as the new side of `tj.diff(old, new)` (`run.diff_against`): the verdict, what
 * changed per module scope in the kernel's words, a stepper through those scopes (each step lists its root ops) and
 * the parameters that differ. The old graph and this run's are shown side by side over the graph area in the
 * comparison panes ("old" and "new", moving together), stepped as the "Trace vs export" tab steps
 * (panes/StepsTab.ts): each step marks its scope's changed ops in both and brings them into view. The model
 * (steps, rows, pictures) is model/runDiff.ts; everything it needs is in the run's JSON, so a saved notebook or
 * page shows it without a kernel.
 */

import { PanesContent } from '../panes/SteppedPanes';
import { opsText, StepsTab } from '../panes/StepsTab';
import type { DiffAgainst } from '../model/protocol.generated';
import {
  changedModules,
  diffPictures,
  parameterRows,
  ParameterRow,
  ScopeStep,
  scopeSteps,
  verdict
} from '../model/runDiff';
import { plural, TraceRunModel } from '../model/run';
import { ExplorerContext } from '../state/context';
import { append, h, section } from '../state/dom';
import type { PanelSpec } from '../state/panels';

interface Diffed {
  view: DiffAgainst;
  steps: ScopeStep[];
  parameters: ParameterRow[];
}

export class DiffPanel extends StepsTab<Diffed, ScopeStep> {
  constructor(ctx: ExplorerContext) {
    super(ctx, {
      className: 'jp-TraceExplorer-diff',
      label: 'diff',
      empty: 'Display tj.diff(old, new) to compare two runs or saved models.',
      unit: 'change',
      action: 'diff-panes',
      open: 'old ↔ new side by side',
      openTitle: "the old run's graph and this one's side by side over the graph area; they follow the stepper"
    });
    this.render();
  }

  protected derive(run: TraceRunModel): Diffed | null {
    const view = run.raw.diff_against;
    return view ? { view, steps: scopeSteps(view.diff), parameters: parameterRows(view.diff) } : null;
  }

  /** Whether the panes can draw the diff: the run has the graph of the method it compares. */
  private canShow(diffed: Diffed): boolean {
    return this.ctx.run?.graphs.has(diffed.view.method) ?? false;
  }

  protected sections(diffed: Diffed): (HTMLElement | null)[] {
    const diff = diffed.view.diff;
    const v = verdict(diff);
    const head = h(
      'div',
      { class: 'jp-TraceExplorer-section' },
      this.verdictLine(
        [
          h('span', { class: `jp-TraceExplorer-badge jp-mod-${v.level}` }, v.label),
          h('span', { class: 'jp-TraceExplorer-diffSides' }, v.text)
        ],
        this.canShow(diffed)
      ),
      h('p', { class: 'jp-TraceExplorer-muted' }, `old: ${sideText(diff.old, diff.old_summary)}`),
      h('p', { class: 'jp-TraceExplorer-muted' }, `new (this run): ${sideText(diff.new, diff.new_summary)}`),
      diff.error ? h('p', { class: 'jp-TraceExplorer-error' }, diff.error) : null
    );
    return diff.error ? [head] : [head, this.scopesSection(diffed), this.parametersSection(diffed)];
  }

  private scopesSection(diffed: Diffed): HTMLElement {
    const diff = diffed.view.diff;
    const compared = diff.compared_as === 'capture' ? 'a trace against an export' : 'node for node';
    const scopes = section(`What changed, by module (${compared})`);
    if (!diffed.steps.length) {
      append(scopes, h('p', { class: 'jp-TraceExplorer-empty' }, 'The graphs match.'));
    } else {
      append(
        scopes,
        h(
          'ul',
          { class: 'jp-TraceExplorer-reasonCounts' },
          ...changedModules(diffed.steps).map(m => h('li', { class: 'jp-TraceExplorer-chip' }, m.text))
        ),
        ...this.stepper(
          step => stepCard(step),
          s => ({ text: s.text, attributes: { 'data-scope': s.scope } }),
          'jp-TraceExplorer-lineSteps jp-TraceExplorer-scopeSteps'
        )
      );
    }
    if (diff.downstream) {
      const one = diff.downstream === 1;
      append(
        scopes,
        h(
          'p',
          { class: 'jp-TraceExplorer-muted' },
          `${plural(diff.downstream, 'more op')} ${one ? 'differs' : 'differ'} only because ${one ? 'it reads' : 'they read'} what these changes computed.`
        )
      );
    }
    const methods = [
      ...diff.methods_added.map(m => `method ${m} added`),
      ...diff.methods_removed.map(m => `method ${m} removed`)
    ];
    append(scopes, ...methods.map(m => h('p', {}, m)));
    return scopes;
  }

  private parametersSection(diffed: Diffed): HTMLElement {
    const diff = diffed.view.diff;
    const parameters = section('Parameters and buffers');
    if (!diffed.parameters.length) {
      const compared = 'names and types' + (typeof diff.atol === 'number' ? `, values within ${diff.atol}` : '');
      append(parameters, h('p', { class: 'jp-TraceExplorer-empty' }, `The parameters match (${compared}).`));
    } else {
      append(
        parameters,
        h(
          'table',
          { class: 'jp-TraceExplorer-table jp-TraceExplorer-diffParameters' },
          h('tr', {}, h('th', {}, 'parameter'), h('th', {}, 'what changed')),
          ...diffed.parameters.map(p =>
            h(
              'tr',
              { 'data-change': p.change, title: p.text },
              h('td', { class: 'jp-TraceExplorer-mono' }, p.name),
              h('td', { class: 'jp-TraceExplorer-mono' }, p.what)
            )
          )
        )
      );
    }
    if (diff.values_note) {
      append(parameters, h('p', { class: 'jp-TraceExplorer-muted' }, diff.values_note));
    }
    return parameters;
  }

  protected panesContent(diffed: Diffed, step: ScopeStep | undefined): PanesContent | null {
    if (!this.canShow(diffed)) {
      return null;
    }
    const method = diffed.view.method;
    const run = this.ctx.run!;
    return {
      key: this.key,
      title: `old ↔ new: ${diffed.view.diff.old} → ${diffed.view.diff.new}`,
      labels: ['old', 'new'],
      pictures: () => diffPictures(diffed.view, run.graphs.get(method)!, run.fileNames),
      // a scope of another method has nothing in these pictures
      step: step && step.method === method ? [step.oldNodes, step.newNodes] : null,
      onNode: this.markPartners
    };
  }
}

/** The Diff tab: shown, and opened first, on a run displayed as the new side of tj.diff(old, new). */
export const DIFF_PANEL: PanelSpec<DiffPanel> = {
  id: 'diff',
  title: 'Diff',
  create: ctx => new DiffPanel(ctx),
  applies: (_run, panel) => panel.available,
  keepsSelection: true,
  // a displayed diff opens on what changed
  opening: (_run, panel) => (panel.available ? 0 : null)
};

/** The current scope: its words, and one line per root op. */
function stepCard(step: ScopeStep): HTMLElement {
  const where = (step.scope || 'top level') + (step.method !== 'forward' ? ` (${step.method})` : '');
  return h(
    'div',
    { class: 'jp-TraceExplorer-lineStep jp-TraceExplorer-scopeStep' },
    h('div', { class: 'jp-TraceExplorer-causeHead' }, h('strong', { class: 'jp-TraceExplorer-mono' }, where)),
    h(
      'ul',
      { class: 'jp-TraceExplorer-because-list' },
      ...step.details.map(d => h('li', { class: 'jp-TraceExplorer-because jp-TraceExplorer-mono' }, d))
    ),
    h(
      'p',
      { class: 'jp-TraceExplorer-muted' },
      `${opsText(step.oldNodes, 'old', 'none in the old run')}, ${opsText(step.newNodes, 'new', 'none in the new run')}`
    )
  );
}

/** A side in words: its summary, after its label when the summary does not start with it (a file's path). */
function sideText(label: string, summary: string): string {
  return summary.startsWith(label) ? summary : `${label} · ${summary}`;
}
