/**
 * The check: output mismatches per check input (max error vs tolerance, and the numbers torch printed), the
 * divergences grouped by cause (each root's source line with the warnings and findings that explain it, and a
 * finding's option fix as one click), a stepper over the roots (downstream on request; it starts on the first
 * root: "1 of N"), and the current divergence with both source lines. Its comparison is shown over the whole graph
 * area, in two panes that move together (check/ComparePanes.ts): "trace" and "check with <inputs>"; the panes
 * follow the stepper until closed. Any two runs of the history are compared the same way ("run 1" / "run 2").
 */

import { ExplorerContext } from '../state/context';
import { append, button, clear, h, location, numberText, withCode } from '../state/dom';
import { backendOf, fromFile } from '../model/backends';
import { sideBySide } from '../model/align';
import { TraceGraph, userFrame } from '../model/graph';
import { floatValue } from '../model/protocol';
import { Cause, Causes, groupByCause, stepOrder } from '../model/causes';
import { CheckCase, passedText, plural, TraceRunModel, WARNING_TITLES } from '../model/run';
import { followingNote, STEP_KEYS, StepCommand, Stepper } from '../model/stepper';
import { fixButton } from '../controls/fix';
import { ComparePanes, PaneSpec } from './ComparePanes';
import { Comparison } from './comparison';
import { RunComparison } from './RunComparison';

/** Roots listed per cause; the stepper reaches the rest. */
const MAX_LISTED = 8;
/** How many steps around the divergence the panes show, each way. */
const COMPARE_RADIUS = 4;

/** The check side's name: what it was traced with (`check with check_inputs[0]`). */
export function checkSideLabel(c: CheckCase): string {
  return `check with ${c.label}`;
}

function sourceLine(
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

export class CheckPanel {
  readonly element: HTMLElement;
  /** Settles when the comparison panes on screen (if any) have drawn both pictures. */
  rendered: Promise<void> = Promise.resolve();
  /** The comparison panes on screen, if any. */
  fullCompare: ComparePanes | null = null;
  private readonly unsubscribe: () => void;
  /**
   * What the panes follow while open: the check's current divergence (the stepper moves them), or a root of the
   * two runs compared (`runsRoot`); null when closed.
   */
  private comparing: 'check' | 'runs' | null = null;
  /** the run-vs-run comparison: its pickers, its roots, the root the panes show */
  private readonly runs: RunComparison;
  private compareKey = '';
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
    this.element.addEventListener('keydown', e => {
      const target = e.target as HTMLElement;
      if (target.tagName === 'SELECT' || target.tagName === 'INPUT') {
        return;
      }
      const command = STEP_KEYS[e.key];
      if (command) {
        e.preventDefault();
        this.step(command);
      }
    });
    this.unsubscribe = ctx.onChange(keys => {
      if (keys.has('run')) {
        // after this change is dispatched: a widget model does not report a change made inside its own
        void Promise.resolve().then(() => this.startOnFirstRoot());
      }
      if (
        keys.has('run') ||
        keys.has('currentDivergence') ||
        keys.has('comparison') ||
        keys.has('history') ||
        keys.has('options') ||
        keys.has('live')
      ) {
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
    this.fullCompare?.dispose();
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
              : 'The check was off (check_trace=False).'
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
        append(this.element, this.caseSection(c));
      }
      append(this.element, this.stepperSection());
    }
    append(this.element, this.runs.section());
    this.syncCompare();
  }

  private caseSection(c: CheckCase): HTMLElement {
    const outputs = c.outputs
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
      c.exception
        ? h('p', { class: 'jp-TraceExplorer-message jp-mod-error' }, c.exception.message.split('\n')[0])
        : null,
      outputs.length ? h('table', { class: 'jp-TraceExplorer-table' }, h('tbody', {}, ...outputs)) : null,
      diff && (roots || downstream)
        ? h('p', {}, `${plural(roots, 'root divergence')}, ${downstream} downstream`)
        : null,
      c.textDiffers
        ? h('p', { class: 'jp-TraceExplorer-muted' }, "torch's printed graphs differ only in debug names")
        : null,
      diff && diff.constantDiffs.length
        ? h('p', {}, `${diff.constantDiffs.length} tensor constant(s) differ in value`)
        : null
    );
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
    const controls = h(
      'div',
      { class: 'jp-TraceExplorer-stepper', role: 'toolbar', 'aria-label': 'divergence stepper' },
      button('«', () => this.step('first'), {
        title: `first ${noun} (Home)`,
        'aria-label': `first ${noun}`,
        disabled: !stepper.canStep('first')
      }),
      button('‹', () => this.step('previous'), {
        title: `previous ${noun} (← or k)`,
        'aria-label': `previous ${noun}`,
        disabled: !stepper.canStep('previous')
      }),
      h(
        'span',
        { class: 'jp-TraceExplorer-stepLabel', 'aria-live': 'polite' },
        stepper.size ? `${noun} ${stepper.label}` : stepper.label
      ),
      button('›', () => this.step('next'), {
        title: `next ${noun} (→ or j)`,
        'aria-label': `next ${noun}`,
        disabled: !stepper.canStep('next')
      }),
      button('»', () => this.step('last'), {
        title: `last ${noun} (End)`,
        'aria-label': `last ${noun}`,
        disabled: !stepper.canStep('last')
      }),
      h(
        'label',
        { class: 'jp-TraceExplorer-toggle', title: 'step through the divergences that follow from the roots too' },
        downstreamBox,
        'downstream too'
      )
    );
    const grouped = this.causes;
    const section = h(
      'div',
      { class: 'jp-TraceExplorer-section' },
      h('h4', {}, 'Divergences by cause'),
      controls,
      grouped.causes.length
        ? h('ol', { class: 'jp-TraceExplorer-causes' }, ...grouped.causes.map(c => this.causeItem(c, current)))
        : null,
      grouped.following.length
        ? h('p', { class: 'jp-TraceExplorer-muted' }, followingNote(grouped.following.length, this.withDownstream))
        : null
    );
    const shown = this.checkComparison();
    if (shown) {
      section.appendChild(this.divergenceSection(shown, 'check'));
    }
    return section;
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

  /** One cause: its line (a link to its nodes), what diverged there, why, the fix, and its roots to click. */
  private causeItem(cause: Cause, current: number): HTMLElement {
    const run = this.ctx.run!;
    const all = this.ctx.divergences;
    const several = run.cases.length > 1;
    const mine = [...cause.roots, ...cause.downstream];
    const head = h(
      'div',
      { class: 'jp-TraceExplorer-causeHead' },
      cause.line
        ? location(cause.file, cause.line, run, (file, line) => this.ctx.showPlace(file, line))
        : h('span', { class: 'jp-TraceExplorer-muted' }, '(no source line)'),
      `: ${cause.summary}`,
      cause.roots.length
        ? cause.downstream.length
          ? h('span', { class: 'jp-TraceExplorer-muted' }, ` · ${cause.downstream.length} downstream at this line`)
          : null
        : h('span', { class: 'jp-TraceExplorer-muted' }, ' (downstream of another root)'),
      several ? h('span', { class: 'jp-TraceExplorer-muted' }, ` · ${run.cases[cause.caseIndex]?.label ?? ''}`) : null
    );
    const why = [
      ...cause.warnings.map(w =>
        h(
          'li',
          { class: 'jp-TraceExplorer-because jp-mod-warning' },
          h('strong', {}, WARNING_TITLES[w.category] ?? w.category),
          ' at ',
          location(w.file, w.line, run, (file, line) => this.ctx.showPlace(file, line)),
          w.advice ? h('p', { class: 'jp-TraceExplorer-hint' }, h('strong', {}, 'Fix: '), ...withCode(w.advice)) : null
        )
      ),
      ...cause.findings.map(f =>
        h(
          'li',
          { class: `jp-TraceExplorer-because jp-mod-${f.severity}`, 'data-kind': f.kind },
          h('strong', {}, f.title),
          // what it found here (a loop's passes in the trace and in the check): the cause in its own words
          h('p', { class: 'jp-TraceExplorer-message' }, ...withCode(f.message)),
          f.hint ? h('p', { class: 'jp-TraceExplorer-hint' }, h('strong', {}, 'Fix: '), ...withCode(f.hint)) : null,
          fixButton(this.ctx, f.fix)
        )
      )
    ];
    const shown = (cause.roots.length ? cause.roots : cause.downstream.slice(0, 1)).slice(0, MAX_LISTED);
    const more = (cause.roots.length || 1) - shown.length;
    return h(
      'li',
      { class: `jp-TraceExplorer-cause${mine.includes(current) ? ' jp-mod-active' : ''}` },
      head,
      why.length ? h('ul', { class: 'jp-TraceExplorer-because-list' }, ...why) : null,
      h(
        'ol',
        { class: 'jp-TraceExplorer-divergences' },
        ...shown.map(i =>
          h(
            'li',
            { class: i === current ? 'jp-mod-active' : '' },
            button(all[i].reason || all[i].kind, () => this.select(i), { class: 'jp-TraceExplorer-link' })
          )
        ),
        more > 0 ? h('li', { class: 'jp-TraceExplorer-muted' }, `… ${more} more (the stepper walks them)`) : null
      )
    );
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
          this.fullCompare?.element.focus();
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
    if (want && this.fullCompare && this.compareKey === want.key) {
      return;
    }
    const graphArea = this.element.closest('.jp-TraceExplorer-root')?.querySelector('.jp-TraceExplorer-graph');
    this.fullCompare?.dispose();
    this.fullCompare = null;
    this.compareKey = '';
    this.rendered = Promise.resolve();
    if (!want || !graphArea) {
      if (this.comparing === 'check' && !want) {
        this.comparing = null; // nothing left to compare (a new run without a divergence)
      }
      return;
    }
    const fileNames = this.ctx.run?.fileNames;
    const [a, b] = want.labels;
    // (no titles in the pictures: each pane's header names its side)
    const sbs = sideBySide(want.a, want.b, want.diff, want.divergence, fileNames, COMPARE_RADIUS, ['', '']);
    // a click on a node of the trace side selects it in the explorer's graph (the inspector shows it)
    const selectTraceNode = (name: string): void => {
      const id = sbs.traceNames.get(name);
      if (id !== undefined) {
        this.ctx.host.set({ selectedNode: id });
      }
    };
    const panes: [PaneSpec, PaneSpec] = [
      {
        label: a,
        dot: sbs.traceDot,
        note: sbs.notes[0],
        onNode: this.comparing === 'check' ? selectTraceNode : undefined
      },
      { label: b, dot: sbs.checkDot, note: sbs.notes[1] }
    ];
    const compare = new ComparePanes(want.title, panes, () => {
      if (this.fullCompare === compare) {
        this.fullCompare = null;
        this.closeCompare();
      }
    });
    this.fullCompare = compare;
    this.compareKey = want.key;
    this.rendered = compare.rendered;
    compare.showIn(graphArea);
  }

  /** Back to the graph; the focus goes back to the button that opened the panes. */
  private closeCompare(): void {
    const hadFocus = this.fullCompare?.element.contains(document.activeElement) ?? false;
    this.comparing = null;
    this.render();
    if (hadFocus || document.activeElement === document.body) {
      this.element.querySelector<HTMLElement>('.jp-TraceExplorer-openCompare')?.focus();
    }
  }
}
