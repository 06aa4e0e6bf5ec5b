/**
 * The check: output mismatches per check input (max error vs tolerance, and the numbers torch printed), the
 * divergences grouped by cause (each root's source line with the warnings and findings that explain it, and a
 * finding's option fix as one click), a stepper over the roots (downstream on request; it starts on the first
 * root: "1 of N"), and the current divergence with both source lines. Its comparison is shown over the whole graph
 * area, in two panes that move together (panes/SteppedPanes.ts): "trace" and "check with <inputs>"; the panes
 * follow the stepper until closed. Any two runs of the history are compared the same way ("run 1" / "run 2").
 */

import { ExplorerContext } from '../state/context';
import type { HostKey } from '../state/host';
import { append, button, clear, h, section } from '../state/dom';
import type { PanelSpec } from '../state/panels';
import { backendOf, checkOffWords, fromFile } from '../model/backends';
import { sideBySide } from '../model/align';
import { Causes, groupByCause, stepOrder } from '../model/causes';
import { passedText, plural } from '../model/run';
import { followingNote, StepCommand, Stepper } from '../model/stepper';
import { ComparePanes } from '../panes/ComparePanes';
import { bindStepKeys, PanesContent, SteppedPanes, stepperBar } from '../panes/SteppedPanes';
import { caseSection, checkSideLabel, sourceLine } from './cases';
import { causeItem } from './causeItem';
import { Comparison } from './comparison';
import { RunComparison } from './RunComparison';

/** What the tab shows changes with these. */
const RENDER_ON: readonly HostKey[] = ['run', 'currentDivergence', 'comparison', 'history', 'options', 'live'];
/** How many steps around the divergence the panes show, each way. */
const COMPARE_RADIUS = 4;

export class CheckPanel {
  readonly element: HTMLElement;
  private readonly unsubscribe: () => void;
  /** the comparison panes over the graph area, while open */
  private readonly stepped: SteppedPanes;
  /**
   * What the panes follow while open: the check's current divergence (the stepper moves them), or a root of the
   * two runs compared (`runsRoot`); null when closed.
   */
  private comparing: 'check' | 'runs' | null = null;
  /** the run-vs-run comparison: its pickers, its roots, the root the panes show */
  private readonly runs: RunComparison;
  /** the stepper walks downstream divergences too (off: the roots only) */
  private withDownstream = false;
  private grouped: { runId: string; causes: Causes } | null = null;

  constructor(private readonly ctx: ExplorerContext) {
    this.runs = new RunComparison(
      ctx,
      (root, render) => {
        this.comparing = 'runs';
        this.runs.root = root;
        if (render) {
          this.render();
        }
      },
      cmp => this.divergenceSection(cmp, 'runs')
    );
    this.element = h('section', {
      class: 'jp-TraceExplorer-check',
      tabindex: 0,
      'aria-label': 'check and divergences'
    });
    bindStepKeys(this.element, command => {
      this.step(command);
      return true;
    });
    this.stepped = new SteppedPanes(this.element, () => this.closeCompare());
    this.unsubscribe = ctx.onChange(keys => {
      if (keys.has('run')) {
        // after this change is dispatched: a widget model does not report a change made inside its own
        void Promise.resolve().then(() => this.startOnFirstRoot());
      }
      if (RENDER_ON.some(k => keys.has(k))) {
        this.render();
      }
    });
    this.render();
    this.startOnFirstRoot();
  }

  /** The run's divergences grouped by cause (worked out once per run). */
  get causes(): Causes {
    const run = this.ctx.run;
    const id = run ? `${run.runId}:${run.raw.created}` : '';
    if (!this.grouped || this.grouped.runId !== id) {
      this.grouped = { runId: id, causes: run ? groupByCause(run) : { causes: [], following: [] } };
    }
    return this.grouped.causes;
  }

  /** The divergence indices the stepper walks, in order. */
  get order(): number[] {
    return stepOrder(this.causes, this.withDownstream);
  }

  /** A failed check opens on its first root (the stepper reads "1 of N", not "– of N"); true when it selected. */
  private startOnFirstRoot(): boolean {
    const first = stepOrder(this.causes, false)[0];
    const d = first === undefined ? undefined : this.ctx.divergences[first];
    if (!d || this.ctx.currentDivergence !== null) {
      return false;
    }
    // the divergence is current (the graph marks it, the stepper reads 1 of N); what is selected stays the user's
    this.ctx.host.set({ currentDivergence: first, selectedMethod: d.method });
    return true;
  }

  private select(index: number): void {
    const d = this.ctx.divergences[index];
    if (d) {
      this.ctx.host.set({ currentDivergence: index, selectedMethod: d.method, selectedNode: d.traceNode ?? -1 });
    }
  }

  dispose(): void {
    this.unsubscribe();
    this.stepped.dispose();
  }

  /** The comparison panes on screen, if any. */
  get fullCompare(): ComparePanes | null {
    return this.stepped.panes;
  }

  /** Settles when the comparison panes on screen (if any) have drawn both pictures. */
  get rendered(): Promise<void> {
    return this.stepped.rendered;
  }

  get count(): number {
    return this.ctx.run?.cases.filter(c => !c.ok).length ?? 0;
  }

  /** The stepper over `order`; a current divergence the roots do not hold (a downstream one) turns downstream on. */
  private stepper(): { stepper: Stepper; order: number[] } {
    const current = this.ctx.host.get('currentDivergence');
    if (current >= 0 && !this.withDownstream && !this.order.includes(current)) {
      this.withDownstream = true;
    }
    const order = this.order;
    return { stepper: new Stepper(order.length, order.indexOf(current)), order };
  }

  step(command: StepCommand): void {
    const { stepper, order } = this.stepper();
    const at = stepper.step(command);
    if (at >= 0) {
      this.select(order[at]);
    }
  }

  render(): void {
    clear(this.element);
    const run = this.ctx.run;
    if (!run) {
      this.syncCompare();
      return;
    }
    if (!run.raw.check) {
      append(
        this.element,
        h(
          'p',
          { class: 'jp-TraceExplorer-empty' },
          run.error
            ? `${backendOf(run.raw).failure}: nothing was checked.`
            : fromFile(run.raw)
              ? 'Read from a saved archive: nothing was run, so nothing was checked.'
              : checkOffWords(backendOf(run.raw))
        )
      );
    } else {
      append(
        this.element,
        h(
          'p',
          { class: run.raw.check.ok ? 'jp-TraceExplorer-verdict jp-mod-ok' : 'jp-TraceExplorer-verdict jp-mod-error' },
          run.raw.check.ok && !run.cases.length
            ? 'Nothing to check: no check inputs were given and no dimension is dynamic.'
            : run.raw.check.ok
              ? `Check passed on ${passedText(run.cases)}.`
              : `Check failed (tolerance ${run.raw.check.tolerance}).`
        )
      );
      for (const c of run.cases) {
        append(this.element, caseSection(c));
      }
      append(this.element, this.stepperSection());
    }
    append(this.element, this.runs.section());
    this.syncCompare();
  }

  private stepperSection(): HTMLElement {
    const all = this.ctx.divergences;
    const current = this.ctx.host.get('currentDivergence');
    const { stepper } = this.stepper();
    const noun = this.withDownstream ? 'divergence' : 'root';
    const downstreamBox = h('input', {
      type: 'checkbox',
      checked: this.withDownstream,
      'data-action': 'downstream',
      disabled: !all.some(d => d.kind === 'downstream')
    });
    downstreamBox.addEventListener('change', () => {
      this.withDownstream = downstreamBox.checked;
      if (!this.withDownstream && current >= 0 && !this.order.includes(current)) {
        const first = this.order[0];
        if (first !== undefined) {
          this.select(first); // back to the roots: the one walked from is downstream
          return;
        }
      }
      this.render();
    });
    const controls = stepperBar(stepper, {
      unit: noun,
      label: stepper.size ? `${noun} ${stepper.label}` : stepper.label,
      onStep: command => this.step(command),
      name: 'divergence stepper',
      after: h(
        'label',
        { class: 'jp-TraceExplorer-toggle', title: 'step through the divergences that follow from the roots too' },
        downstreamBox,
        'downstream too'
      )
    });
    const grouped = this.causes;
    const byCause = section(
      'Divergences by cause',
      controls,
      grouped.causes.length
        ? h(
            'ol',
            { class: 'jp-TraceExplorer-causes' },
            ...grouped.causes.map(c => causeItem(this.ctx, c, current, i => this.select(i)))
          )
        : null,
      grouped.following.length
        ? h('p', { class: 'jp-TraceExplorer-muted' }, followingNote(grouped.following.length, this.withDownstream))
        : null
    );
    const shown = this.checkComparison();
    if (shown) {
      byCause.appendChild(this.divergenceSection(shown, 'check'));
    }
    return byCause;
  }

  /** The check's current divergence as a comparison of the trace and the check trace, if there is one. */
  private checkComparison(): Comparison | null {
    const d = this.ctx.currentDivergence;
    const run = this.ctx.run;
    const c = d && run ? run.caseOf(d) : undefined;
    const trace = d && run ? (run.graphs.get(d.method) ?? null) : null;
    const check = c?.graph ?? trace;
    if (!d || !run || !c || !c.diff || !trace || !check) {
      return null;
    }
    const labels: [string, string] = ['trace', checkSideLabel(c)];
    return {
      key: `check:${run.runId}:${run.raw.created}:${this.ctx.host.get('currentDivergence')}`,
      title: `${labels[0]} ↔ ${labels[1]}: ${d.reason || d.kind}`,
      labels,
      a: trace,
      b: check,
      diff: c.diff,
      divergence: d
    };
  }

  /**
   * One divergence: what diverged, both source lines, and the button that shows (or closes) the two graphs side
   * by side over the graph area.
   */
  private divergenceSection(cmp: Comparison, mode: 'check' | 'runs'): HTMLElement {
    const [a, b] = cmp.labels;
    const d = cmp.divergence;
    const showPlace = (file: string, line: number): void => void this.ctx.showPlace(file, line);
    // (the panes show this section's divergence whenever they are open in this mode: the check's current one, or
    // the root of the runs picked in the list)
    const open = this.comparing === mode;
    const toggle = button(
      open ? 'close the comparison' : `compare ${a} ↔ ${mode === 'check' ? 'check' : b}`,
      () => {
        if (open) {
          this.closeCompare();
        } else {
          this.comparing = mode;
          this.render();
          this.stepped.panes?.element.focus();
        }
      },
      {
        class: 'jp-TraceExplorer-button jp-TraceExplorer-openCompare',
        'aria-pressed': String(open),
        title: open
          ? 'back to the graph (Esc in the panes)'
          : `${a} and ${b} side by side over the graph area, moving together` +
            (mode === 'check' ? '; they follow the stepper' : '')
      }
    );
    return h(
      'div',
      { class: 'jp-TraceExplorer-sideBySide' },
      h('p', { class: 'jp-TraceExplorer-reason' }, `${d.kind}: ${d.reason || 'reads a diverged value'}`, ' ', toggle),
      h(
        'div',
        { class: 'jp-TraceExplorer-sides' },
        sourceLine(this.ctx.run, cmp.a, d.traceNode, a, showPlace),
        sourceLine(this.ctx.run, cmp.b, d.checkNode, b, showPlace)
      )
    );
  }

  /** The comparison the panes should show now, or null (closed, or nothing left to compare). */
  private wantedComparison(): Comparison | null {
    if (this.comparing === 'check') {
      return this.checkComparison();
    }
    if (this.comparing === 'runs') {
      return this.runs.comparisons()[this.runs.root] ?? null;
    }
    return null;
  }

  /** Put the wanted comparison on screen: keep the panes when it is the one shown, else replace or drop them. */
  private syncCompare(): void {
    const want = this.wantedComparison();
    if (this.comparing === 'check' && !want) {
      this.comparing = null; // nothing left to compare (a new run without a divergence)
    }
    this.stepped.showing = this.comparing !== null;
    this.stepped.sync(want && this.panesContent(want));
  }

  /** A comparison in the panes: the divergence's neighbourhood on each side; a click on a trace node selects it. */
  private panesContent(want: Comparison): PanesContent {
    const fileNames = this.ctx.run?.fileNames;
    // a click on a node of the trace side selects it in the explorer's graph (the inspector shows it)
    const selectTraceNode = (side: 0 | 1, name: string): void => {
      const id = side === 0 ? this.stepped.nodeId(0, name) : undefined;
      if (id !== undefined) {
        this.ctx.host.set({ selectedNode: id });
      }
    };
    return {
      key: want.key,
      title: want.title,
      labels: want.labels,
      pictures: () => {
        // (no titles in the pictures: each pane's header names its side)
        const sbs = sideBySide(want.a, want.b, want.diff, want.divergence, fileNames, COMPARE_RADIUS, ['', '']);
        return { dots: [sbs.traceDot, sbs.checkDot], names: [sbs.traceNames, sbs.checkNames], notes: sbs.notes };
      },
      step: null,
      onNode: this.comparing === 'check' ? selectTraceNode : undefined
    };
  }

  /** Back to the graph; the focus goes back to the button that opened the panes. */
  private closeCompare(): void {
    const hadFocus = this.stepped.panes?.element.contains(document.activeElement) ?? false;
    this.comparing = null;
    this.render();
    if (hadFocus || document.activeElement === document.body) {
      this.element.querySelector<HTMLElement>('.jp-TraceExplorer-openCompare')?.focus();
    }
  }
}

/** The Check tab, counting a failed check's roots; a run with a failed check input opens on it. */
export const CHECK_PANEL: PanelSpec<CheckPanel> = {
  id: 'check',
  title: 'Check',
  create: ctx => new CheckPanel(ctx),
  label: run => {
    const n = run.verdict.roots;
    const failed = run.raw.check && !run.raw.check.ok;
    return failed ? (n > 0 ? `Check (${plural(n, 'root')})` : 'Check (failed)') : 'Check';
  },
  keepsSelection: true,
  opening: run => (run && run.cases.some(c => !c.ok) ? 1 : null)
};
