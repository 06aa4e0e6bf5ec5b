/**
 * The explorer's side panel is a row of tabs. Each view declares its own tab (what it is called, how it is made,
 * when it applies to a run, what its title counts) and the explorer builds its tabs from the list
 * (explorer/panels.ts); a back end's own tabs come from its folder (backends/<name>/index.ts, listed in
 * backends/index.ts). So the shell tests no back end's name: a tab applies by the run's registry row or its data.
 */

import { addsTab } from '../model/backends';
import type { TraceRunModel } from '../model/run';
import type { ExplorerContext } from './context';
import type { HostKey } from './host';

/** A panel as the explorer holds it. */
export interface PanelView {
  readonly element: HTMLElement;
  dispose(): void;
}

export interface PanelSpec<View extends PanelView = PanelView> {
  /** the tab's `data-tab` and its panel's `data-panel` */
  id: string;
  /** the tab's text, without what it counts */
  title: string;
  create(ctx: ExplorerContext): View;
  /** whether the tab shows for the run on screen; absent: always */
  applies?(run: TraceRunModel | null, view: View): boolean;
  /** the tab's text for a run: its title and what it counts (`Warnings (3)`); absent: the title */
  label?(run: TraceRunModel): string;
  /** a node picked in the graph leaves this tab up (its list stays in view while walking it); else the Inspector */
  keepsSelection?: boolean;
  /** whether the explorer opens on this tab for a run, and before which others (lower first); null: not */
  opening?(run: TraceRunModel | null, view: View): number | null;
}

/**
 * A panel drawn from the explorer's state: its element, drawn again by `render` whenever one of `keys` changes, until
 * it is disposed. A panel calls `render` itself at the end of its constructor, once its own fields are set (they are
 * set after this constructor has run).
 */
export abstract class StatePanel implements PanelView {
  readonly element: HTMLElement;
  private readonly unsubscribe: () => void;

  constructor(
    protected readonly ctx: ExplorerContext,
    element: HTMLElement,
    keys: readonly HostKey[]
  ) {
    this.element = element;
    this.unsubscribe = ctx.whenChanged(keys, () => this.render());
  }

  abstract render(): void;

  dispose(): void {
    this.unsubscribe();
  }
}

/** A back end's tab that lists what its back end recorded of a run, and counts it. */
export interface CountingTab<View extends PanelView> {
  /** the tab's id, as the back end's registry row lists it in `tabs` */
  id: string;
  title: string;
  create(ctx: ExplorerContext): View;
  /** how many things the tab lists for a run */
  count(run: TraceRunModel): number;
  /** where a run with something counted opens on this tab (PanelSpec.opening); absent: it never opens there */
  opensAt?: number;
}

/**
 * The spec of a back end's counting tab: it shows for the runs whose back end's row lists it, titled with its count
 * (`Guards (3)`; the title alone when there is nothing), and a node picked in the graph leaves it up.
 */
export function countingTab<View extends PanelView>(tab: CountingTab<View>): PanelSpec<View> {
  const { id, title, create, count, opensAt } = tab;
  const counted = (run: TraceRunModel | null): number => (run ? count(run) : 0);
  return {
    id,
    title,
    create,
    applies: run => addsTab(run?.raw, id),
    label: run => {
      const n = count(run);
      return n ? `${title} (${n})` : title;
    },
    keepsSelection: true,
    ...(opensAt === undefined ? {} : { opening: run => (counted(run) > 0 ? opensAt : null) })
  };
}

/** A shape as a value carries it: sizes, symbols an export kept symbolic (`s77`), or null where unknown. */
export type Shape = readonly (number | string | null)[] | null;

/** What a back end adds to the explorer, beside its registry row (backends/<name>/index.ts). */
export interface BackendViews {
  /** its tabs, after the Check tab (each applies by the run's row or data) */
  panels: readonly PanelSpec[];
  /** the tooltip of a value's shape in the Inspector (an export's symbols with their ranges); null: none */
  shapeTitle?(run: TraceRunModel, shape: Shape): string | null;
  /** what the header says under the run's error when the graph shown is not a program it made (a draft); null */
  draftNote?(run: TraceRunModel): string | null;
  /**
   * lines under the header, made once per explorer, each showing itself only for the runs it concerns (an export's
   * draft offer and its run button)
   */
  banners?: readonly ((ctx: ExplorerContext) => PanelView)[];
}
