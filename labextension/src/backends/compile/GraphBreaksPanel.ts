/**
 * The "Graph breaks" tab of a torch.compile run: the graphs the first call ran, in order, with the break each ends
 * at between them (a graph opens in the graph view on a click: the view's graph menu lists them all), then a stepper
 * through the breaks, one per line: the code, torch's break type and registry code (GB0059, linked to torch's page),
 * its explanation and hints, how often it is hit, and the stack when the break is inside a library the user's line
 * called. Each step shows the graph that ends at the break and the graph that resumes after it side by side over the
 * graph area (the shared comparison panes, panes/StepsTab.ts), the op before and the op after the break marked; the
 * card's "op before" / "op after" buttons mark that op in the graph view instead. The model is compileReport.ts.
 */

import { pairedPictures } from '../../model/align';
import type { TraceGraph } from '../../model/graph';
import type { CompileOpRef, CompileReport } from '../../model/protocol.generated';
import { TraceRunModel } from '../../model/run';
import { plural } from '../../model/words';
import { PanesContent, PanesPictures } from '../../panes/SteppedPanes';
import { StepsTab } from '../../panes/StepsTab';
import { ExplorerContext } from '../../state/context';
import { button, card, h, location, withCode } from '../../state/dom';
import { countingTab } from '../../state/panels';
import type { PanelSpec } from '../../state/panels';
import { BreakStep, breakSteps, breaksHeadline, compileRecords, firstCallProgram, registryPage } from './compileReport';

interface Breaks {
  report: CompileReport;
  steps: BreakStep[];
}

/** An empty picture, for the side of a break with no graph (a function dynamo gave up on). */
const NO_GRAPH = 'digraph side {\n}\n';

export class GraphBreaksPanel extends StepsTab<Breaks, BreakStep> {
  constructor(ctx: ExplorerContext) {
    super(ctx, {
      className: 'jp-TraceExplorer-graphBreaks',
      label: 'graph breaks',
      empty: 'graph breaks are recorded by torch.compile runs',
      unit: 'break',
      action: 'graph-break-panes',
      open: 'before ↔ after the break',
      openTitle: 'the graph that ends at the break and the graph after it, side by side over the graph area'
    });
    this.render();
  }

  protected derive(run: TraceRunModel): Breaks | null {
    const report = compileRecords(run.raw);
    return report ? { report, steps: breakSteps(report) } : null;
  }

  protected sections(model: Breaks): (HTMLElement | null)[] {
    const head = h(
      'div',
      { class: 'jp-TraceExplorer-section jp-TraceExplorer-breaksHead' },
      this.verdictLine([h('span', {}, breaksHeadline(model.report))], model.steps.length > 0),
      ...model.report.unknown.map(note => h('p', { class: 'jp-TraceExplorer-muted' }, `not known: ${note}`))
    );
    const steps = this.stepsSection(
      'Breaks, line by line',
      step => this.stepCard(step),
      s => ({ text: `${this.place(s)}: ${s.gb.code || s.title}`, attributes: { 'data-break': String(s.index) } }),
      'jp-TraceExplorer-lineSteps'
    );
    return [head, this.programSection(model.report), steps];
  }

  private place(step: BreakStep): string {
    return this.ctx.run?.locationLabel(step.gb.file, step.gb.line) ?? `${step.gb.file}:${step.gb.line}`;
  }

  /** The first call's graphs in order, each break between two of them at its line. */
  private programSection(report: CompileReport): HTMLElement {
    const rows = firstCallProgram(report).map(row => {
      if (row.kind === 'break') {
        const gb = row.step.gb;
        return card(
          { class: 'jp-TraceExplorer-guard jp-mod-break', 'data-program-break': String(row.step.index) },
          [
            h('strong', { title: 'graph break' }, '✂ break'),
            location(gb.file, gb.line, this.ctx.run),
            row.step.cost
              ? h(
                  'span',
                  { class: 'jp-TraceExplorer-muted' },
                  row.step.gb.skipped_frame ? 'skipped a function' : `×${gb.count}`
                )
              : null
          ],
          [h('pre', { class: 'jp-TraceExplorer-code' }, gb.code || row.step.title)],
          { title: 'step to this break', run: () => this.select(row.step.index) }
        );
      }
      const region = row.region;
      return card(
        { class: 'jp-TraceExplorer-guard', 'data-program-graph': region.graph },
        [
          h('strong', {}, region.graph),
          h('span', { class: 'jp-TraceExplorer-muted' }, plural(region.ops, 'op')),
          region.file ? location(region.file, region.line, this.ctx.run) : null
        ],
        [],
        {
          title: 'show this graph in the graph view',
          run: () => this.ctx.host.set({ selectedMethod: region.graph, selectedNode: -1 }),
          active: this.ctx.method === region.graph
        }
      );
    });
    return h(
      'div',
      { class: 'jp-TraceExplorer-section', 'data-section': 'program' },
      h('h4', { title: 'the graphs dynamo compiled for the first call, in the order they ran' }, 'Graphs in order'),
      h('ul', { class: 'jp-TraceExplorer-list' }, ...rows)
    );
  }

  /** Mark an op of one of the run's graphs in the graph view (showing that graph). */
  private showOp(ref: CompileOpRef | null): void {
    if (ref) {
      this.ctx.markNodes(ref.graph, [ref.node]);
    }
  }

  private opButton(ref: CompileOpRef | null, side: 'before' | 'after'): HTMLElement {
    const graph = ref ? this.ctx.run?.graphs.get(ref.graph) : undefined;
    const node = ref && graph ? graph.nodes[ref.node] : undefined;
    if (!ref || !node) {
      return h('span', { class: 'jp-TraceExplorer-muted' }, `no op ${side} it`);
    }
    return button(`op ${side}: ${node.title || node.kind} in ${ref.graph}`, () => this.showOp(ref), {
      class: 'jp-TraceExplorer-button',
      'data-op': side,
      title: `mark it in the graph view (${ref.graph})`
    });
  }

  /** The current break: where, its code, torch's words and hints, its cost, the ops around it. */
  private stepCard(step: BreakStep): HTMLElement {
    const gb = step.gb;
    const page = registryPage(gb.gb_code);
    const inLibrary = gb.package && gb.stack.length > 1;
    return h(
      'div',
      { class: 'jp-TraceExplorer-lineStep', 'data-gb-code': gb.gb_code || undefined },
      h(
        'div',
        { class: 'jp-TraceExplorer-causeHead' },
        location(gb.file, gb.line, this.ctx.run, () => this.showOp(step.before ?? step.after)),
        ' ',
        h('strong', { class: 'jp-TraceExplorer-breakTitle' }, step.title),
        ' ',
        page
          ? h(
              'a',
              { href: page, target: '_blank', rel: 'noopener noreferrer', title: "torch's page on this break type" },
              'torch’s page'
            )
          : null
      ),
      gb.code ? h('pre', { class: 'jp-TraceExplorer-code' }, gb.code) : null,
      gb.explanation ? h('p', { class: 'jp-TraceExplorer-message' }, ...withCode(gb.explanation)) : null,
      step.cost ? h('p', { class: 'jp-TraceExplorer-verdict jp-mod-cost' }, step.cost) : null,
      inLibrary
        ? h(
            'p',
            { class: 'jp-TraceExplorer-muted' },
            `inside ${gb.package}, called from your line: `,
            ...gb.stack.map((f, i) => (i ? ` → ${f.func}` : f.func))
          )
        : null,
      gb.hints.length
        ? h(
            'ul',
            { class: 'jp-TraceExplorer-because-list', 'aria-label': "torch's hints" },
            ...gb.hints.map(hint =>
              h('li', { class: 'jp-TraceExplorer-hint' }, h('strong', {}, 'Hint: '), ...withCode(hint))
            )
          )
        : null,
      h(
        'p',
        { class: 'jp-TraceExplorer-breakOps' },
        this.opButton(step.before, 'before'),
        ' ',
        this.opButton(step.after, 'after')
      ),
      h(
        'details',
        {},
        h('summary', {}, "torch's words"),
        h('pre', { class: 'jp-TraceExplorer-code jp-TraceExplorer-detail' }, gb.reason)
      )
    );
  }

  protected panesContent(_model: Breaks, step: BreakStep | undefined): PanesContent | null {
    const run = this.ctx.run;
    if (!run || !step || (!step.before && !step.after)) {
      return null;
    }
    const left = step.before ? run.graphs.get(step.before.graph) : undefined;
    const right = step.after ? run.graphs.get(step.after.graph) : undefined;
    const names: [string, string] = [step.before?.graph ?? '', step.after?.graph ?? ''];
    return {
      key: `${this.key}:${names.join('|')}`,
      title: `${this.place(step)}: ${step.title}`,
      labels: [
        left ? `${names[0]}: ends at the break` : 'no graph before the break',
        right ? `${names[1]}: resumes after it` : 'no graph after the break'
      ],
      pictures: () => breakPictures(left, right, run.fileNames),
      step: [step.before && left ? [step.before.node] : [], step.after && right ? [step.after.node] : []]
    };
  }
}

/** The two graphs around a break, every op drawn (none is paired: they are different graphs). */
function breakPictures(
  left: TraceGraph | undefined,
  right: TraceGraph | undefined,
  fileNames: Record<string, string>
): PanesPictures {
  const region = (g: typeof left): Map<number, string[]> =>
    new Map((g?.nodes ?? []).filter(n => n.role === 'op').map(n => [n.id, ['region']]));
  if (left && right) {
    const p = pairedPictures([left, right], [], [region(left), region(right)], ['b', 'a'], fileNames);
    return { dots: p.dots, names: p.names, nameOf: p.nameOf };
  }
  const only = (left ?? right)!;
  const p = pairedPictures([only, only], [], [region(only), region(only)], ['b', 'a'], fileNames);
  const none = 'no graph: dynamo ran this side in Python';
  return left
    ? {
        dots: [p.dots[0], NO_GRAPH],
        names: [p.names[0], new Map()],
        nameOf: [p.nameOf[0], id => `a${id}`],
        notes: ['', none]
      }
    : {
        dots: [NO_GRAPH, p.dots[1]],
        names: [new Map(), p.names[1]],
        nameOf: [id => `b${id}`, p.nameOf[1]],
        notes: [none, '']
      };
}

/** The "Graph breaks" tab: a back end that records graph breaks adds it (its row's `tabs`), counting them. */
export const GRAPH_BREAKS_PANEL: PanelSpec<GraphBreaksPanel> = countingTab({
  id: 'graphBreaks',
  title: 'Graph breaks',
  create: ctx => new GraphBreaksPanel(ctx),
  count: run => compileRecords(run.raw)?.graph_breaks.length ?? 0,
  // a compiled run with breaks opens here: before the Warnings tab (2), after a failed check (1)
  opensAt: 1.5
});
