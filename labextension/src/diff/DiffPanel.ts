/**
 * The "Diff" tab of a run shown as the new side of `tj.diff(old, new)` (`run.diff_against`): the verdict, what
 * changed per module scope in the kernel's words, a stepper through those scopes (each step lists its root ops) and
 * the parameters that differ. The old graph and this run's are shown side by side over the graph area in the
 * comparison panes ("old" and "new", moving together), stepped as the "Trace vs export" tab steps
 * (check/SteppedPanes.ts): each step marks its scope's changed ops in both and brings them into view. The model
 * (steps, rows, pictures) is model/runDiff.ts; everything it needs is in the run's JSON, so a saved notebook or
 * page shows it without a kernel.
 */

import { ComparePanes } from '../check/ComparePanes';
import { bindStepKeys, PanesContent, SteppedPanes, stepperBar } from '../check/SteppedPanes';
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
import { plural } from '../model/run';
import { StepCommand, Stepper } from '../model/stepper';
import { ExplorerContext } from '../state/context';
import { append, button, clear, h } from '../state/dom';

interface Diffed {
  /** the run it belongs to: a new run starts over */
  key: string;
  view: DiffAgainst;
  steps: ScopeStep[];
  parameters: ParameterRow[];
}

export class DiffPanel {
  readonly element: HTMLElement;
  private readonly stepped: SteppedPanes;
  private diffed: Diffed | null = null;
  private current = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly ctx: ExplorerContext) {
    this.element = h('section', { class: 'jp-TraceExplorer-diff', tabindex: 0, 'aria-label': 'diff' });
    bindStepKeys(this.element, command => {
      if (!this.diffed?.steps.length) {
        return false;
      }
      this.step(command);
      return true;
    });
    this.stepped = new SteppedPanes(this.element, () => {
      this.render();
      this.element.querySelector<HTMLElement>('[data-action="diff-panes"]')?.focus();
    });
    this.unsubscribe = ctx.onChange(keys => {
      if (keys.has('run')) {
        this.render();
      }
    });
    this.render();
  }

  /** Whether the run carries a diff (the explorer shows the tab only then, and opens on it). */
  get available(): boolean {
    return this.model() !== null;
  }

  /** The steps, one per changed module scope (tests read them). */
  get steps(): ScopeStep[] {
    return this.model()?.steps ?? [];
  }

  get currentStep(): number {
    return this.current;
  }

  /** The panes on screen, if any. */
  get panes(): ComparePanes | null {
    return this.stepped.panes;
  }

  /** Settles when the panes on screen (if any) show both pictures with the current step marked. */
  get rendered(): Promise<void> {
    return this.stepped.rendered;
  }

  dispose(): void {
    this.unsubscribe();
    this.stepped.dispose();
  }

  private model(): Diffed | null {
    const run = this.ctx.run;
    const view = run?.raw.diff_against;
    if (!run || !view) {
      return null;
    }
    const key = `${run.runId}:${run.raw.created}`;
    if (this.diffed?.key !== key) {
      this.diffed = { key, view, steps: scopeSteps(view.diff), parameters: parameterRows(view.diff) };
      this.current = 0;
    }
    return this.diffed;
  }

  step(command: StepCommand): void {
    this.select(new Stepper(this.steps.length, this.current).step(command));
  }

  /** Make step `index` current and show it in the panes (opening them). */
  select(index: number): void {
    if (index < 0 || index >= this.steps.length) {
      return;
    }
    this.current = index;
    this.stepped.showing = true;
    this.render();
  }

  /** Open or close the panes. */
  toggle(open = !this.stepped.showing): void {
    this.stepped.showing = open;
    this.render();
    if (open) {
      this.stepped.panes?.element.focus();
    }
  }

  render(): void {
    clear(this.element);
    const diffed = this.model();
    if (!diffed) {
      append(
        this.element,
        h('p', { class: 'jp-TraceExplorer-empty' }, 'Display tj.diff(old, new) to compare two runs or saved models.')
      );
      this.stepped.sync(null);
      return;
    }
    const diff = diffed.view.diff;
    const v = verdict(diff);
    const showing = this.stepped.showing;
    const canShow = this.ctx.run?.graphs.has(diffed.view.method) ?? false;
    const toggle = canShow
      ? button(showing ? 'close the comparison' : 'old ↔ new side by side', () => this.toggle(), {
          class: 'jp-TraceExplorer-button jp-TraceExplorer-openCompare',
          'data-action': 'diff-panes',
          'aria-pressed': String(showing),
          title: showing
            ? 'back to the graph (Esc in the panes)'
            : "the old run's graph and this one's side by side over the graph area; they follow the stepper"
        })
      : null;
    append(
      this.element,
      h(
        'div',
        { class: 'jp-TraceExplorer-section' },
        h(
          'p',
          { class: 'jp-TraceExplorer-verdict' },
          h('span', { class: `jp-TraceExplorer-badge jp-mod-${v.level}` }, v.label),
          h('span', { class: 'jp-TraceExplorer-diffSides' }, v.text),
          ' ',
          toggle
        ),
        h('p', { class: 'jp-TraceExplorer-muted' }, `old: ${sideText(diff.old, diff.old_summary)}`),
        h('p', { class: 'jp-TraceExplorer-muted' }, `new (this run): ${sideText(diff.new, diff.new_summary)}`),
        diff.error ? h('p', { class: 'jp-TraceExplorer-error' }, diff.error) : null
      )
    );
    if (!diff.error) {
      append(this.element, this.scopesSection(diffed), this.parametersSection(diffed));
    }
    this.stepped.sync(canShow ? this.panesContent(diffed) : null);
  }

  private scopesSection(diffed: Diffed): HTMLElement {
    const diff = diffed.view.diff;
    const compared = diff.compared_as === 'capture' ? 'a trace against an export' : 'node for node';
    const section = h(
      'div',
      { class: 'jp-TraceExplorer-section' },
      h('h4', {}, `What changed, by module (${compared})`)
    );
    const methods = [
      ...diff.methods_added.map(m => `method ${m} added`),
      ...diff.methods_removed.map(m => `method ${m} removed`)
    ];
    if (!diffed.steps.length) {
      append(section, h('p', { class: 'jp-TraceExplorer-empty' }, 'The graphs match.'));
    } else {
      const stepper = new Stepper(diffed.steps.length, this.current);
      append(
        section,
        h(
          'ul',
          { class: 'jp-TraceExplorer-reasonCounts' },
          ...changedModules(diffed.steps).map(m => h('li', { class: 'jp-TraceExplorer-chip' }, m.text))
        ),
        stepperBar(stepper, 'change', `change ${stepper.label}`, command => this.step(command)),
        this.stepCard(diffed.steps[this.current]),
        h(
          'ol',
          { class: 'jp-TraceExplorer-lineSteps jp-TraceExplorer-scopeSteps' },
          ...diffed.steps.map((s, i) =>
            h(
              'li',
              { class: i === this.current ? 'jp-mod-active' : '', 'data-scope': s.scope },
              button(s.text, () => this.select(i), { class: 'jp-TraceExplorer-link' })
            )
          )
        )
      );
    }
    if (diff.downstream) {
      append(
        section,
        h(
          'p',
          { class: 'jp-TraceExplorer-muted' },
          `${plural(diff.downstream, 'more op')} ${diff.downstream === 1 ? 'differs' : 'differ'} only because ${diff.downstream === 1 ? 'it reads' : 'they read'} what these changes computed.`
        )
      );
    }
    append(section, ...methods.map(m => h('p', {}, m)));
    return section;
  }

  /** The current scope: its words, and one line per root op. */
  private stepCard(step: ScopeStep): HTMLElement {
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
      h('p', { class: 'jp-TraceExplorer-muted' }, `${opsText(step.oldNodes, 'old')}, ${opsText(step.newNodes, 'new')}`)
    );
  }

  private parametersSection(diffed: Diffed): HTMLElement {
    const diff = diffed.view.diff;
    const section = h('div', { class: 'jp-TraceExplorer-section' }, h('h4', {}, 'Parameters and buffers'));
    if (!diffed.parameters.length) {
      const compared = 'names and types' + (typeof diff.atol === 'number' ? `, values within ${diff.atol}` : '');
      append(section, h('p', { class: 'jp-TraceExplorer-empty' }, `The parameters match (${compared}).`));
    } else {
      append(
        section,
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
      append(section, h('p', { class: 'jp-TraceExplorer-muted' }, diff.values_note));
    }
    return section;
  }

  private panesContent(diffed: Diffed): PanesContent {
    const step = diffed.steps[this.current];
    const method = diffed.view.method;
    return {
      key: diffed.key,
      title: `old ↔ new: ${diffed.view.diff.old} → ${diffed.view.diff.new}`,
      labels: ['old', 'new'],
      pictures: () => diffPictures(diffed.view, this.ctx.run!.graphs.get(method)!, this.ctx.run!.fileNames),
      // a scope of another method has nothing in these pictures
      step: step && step.method === method ? [step.oldNodes, step.newNodes] : null
    };
  }
}

/** A side in words: its summary, after its label when the summary does not start with it (a file's path). */
function sideText(label: string, summary: string): string {
  return summary.startsWith(label) ? summary : `${label} · ${summary}`;
}

function opsText(ids: number[], side: string): string {
  return ids.length ? plural(ids.length, `${side} op`) : `none in the ${side} run`;
}
