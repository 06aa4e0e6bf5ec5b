/**
 * Derived state shared by every panel: the decoded run (decoded once per run id), the group tree of
 * each method, the divergences, and which CSS classes each node carries. Input state stays in the
 * host; this only derives from it.
 */

import { TraceGraph } from '../model/graph';
import { GroupTree } from '../model/groups';
import { CaseDivergence, decodeRun, findingIsProblem, TraceRunModel } from '../model/run';
import { SearchOptions } from '../model/search';
import { ExplorerHost, HostKey } from './host';
import type { BackendViews, Shape } from './panels';

export class ExplorerContext {
  /** the host's run JSON last decoded: a new object is a new run, or one joined to later work (an export's draft,
   * which keeps its id) */
  private decodedRaw: unknown = null;
  private decoded: TraceRunModel | null = null;
  private decodeError: string | null = null;
  private trees = new Map<string, GroupTree>();
  /**
   * Searches the graph for a query and selects the first hit (the graph view's search box, set by the explorer);
   * returns the hits. Locations and warnings call it through `showPlace`.
   */
  searchGraph: ((query: string) => number[]) | null = null;
  /** Re-apply the graph's highlight classes (set by the graph view): marked nodes changed, not the host state. */
  repaintGraph: (() => void) | null = null;
  /** Nodes marked by a panel (an export guard's nodes), per run: highlighted as `guard` until another is marked. */
  private marked: { runId: string; method: string; ids: number[] } | null = null;

  /** `backends`: what each back end adds to the views (backends/index.ts, given by the explorer). */
  constructor(
    readonly host: ExplorerHost,
    readonly backends: readonly BackendViews[] = []
  ) {}

  /** The tooltip of a value's shape as the run's back end words it (an export's symbols); null when none does. */
  shapeTitle(shape: Shape): string | null {
    const run = this.run;
    return run ? this.firstOfBackends(b => b.shapeTitle?.(run, shape) ?? null) : null;
  }

  /** What the header says when the graph shown is not a program the back end made (an export's draft); null. */
  get draftNote(): string | null {
    const run = this.run;
    return run ? this.firstOfBackends(b => b.draftNote?.(run) ?? null) : null;
  }

  /** The first back end's answer that is not null (each answers only of its own runs). */
  private firstOfBackends<T>(answer: (backend: BackendViews) => T | null): T | null {
    for (const backend of this.backends) {
      const found = answer(backend);
      if (found !== null) {
        return found;
      }
    }
    return null;
  }

  /** What a search needs beyond the graph: the run's file names and the nodes its warnings map to. */
  searchOptions(method = this.method): SearchOptions {
    const run = this.run;
    if (!run) {
      return {};
    }
    return {
      fileNames: run.fileNames,
      atLine: run.userWarnings
        .filter(w => w.method === method)
        .map(w => ({ file: w.file, line: w.line, nodeIds: w.node_ids }))
    };
  }

  /** Select the nodes of a source line: search for the place as the views write it (`cell [9], line 7`). */
  showPlace(file: string, line: number): number[] {
    const run = this.run;
    if (!run || !this.searchGraph) {
      return [];
    }
    return this.searchGraph(run.locationLabel(file, line));
  }

  /** Mark `ids` of `method` (an export guard's nodes): select the first op of them, highlight all of them. */
  markNodes(method: string, ids: number[]): void {
    const run = this.run;
    if (!run || !ids.length) {
      return;
    }
    this.marked = { runId: run.runId, method, ids: [...ids] };
    // select an op of them, not a constant it reads (folded into the op's box, where the graph shows it)
    const graph = run.graphs.get(method);
    const first = ids.find(id => graph?.nodes[id] && graph.nodes[id].role !== 'constant') ?? ids[0];
    this.host.set({ selectedMethod: method, selectedNode: first });
    this.repaintGraph?.();
  }

  /** The nodes marked for `method` of the run on screen (empty when none). */
  markedNodes(method = this.method): number[] {
    const m = this.marked;
    return m && m.method === method && m.runId === this.run?.runId ? m.ids : [];
  }

  /** The decoded run on screen, or null (see `error`). */
  get run(): TraceRunModel | null {
    const raw = this.host.get('run');
    if (raw !== this.decodedRaw) {
      this.decodedRaw = raw;
      this.trees.clear();
      this.decoded = null;
      this.decodeError = null;
      if (raw) {
        try {
          // a saved output may have been edited or cut short: its host checks it before anything reads it
          this.decoded = decodeRun(raw, this.host.checkRun);
        } catch (err) {
          this.decodeError = err instanceof Error ? err.message : String(err);
        }
      }
    }
    return this.decoded;
  }

  /** Why the run could not be shown, if it could not. */
  get error(): string | null {
    void this.run;
    return this.decodeError;
  }

  get method(): string {
    const run = this.run;
    const wanted = this.host.get('selectedMethod');
    if (run && run.graphs.has(wanted)) {
      return wanted;
    }
    return run?.defaultMethod ?? wanted;
  }

  get graph(): TraceGraph | null {
    return this.run?.graphs.get(this.method) ?? null;
  }

  groups(method = this.method): GroupTree | null {
    const graph = this.run?.graphs.get(method);
    if (!graph) {
      return null;
    }
    let tree = this.trees.get(method);
    if (!tree) {
      tree = new GroupTree(graph);
      this.trees.set(method, tree);
    }
    return tree;
  }

  get divergences(): CaseDivergence[] {
    return this.run?.divergences ?? [];
  }

  get currentDivergence(): CaseDivergence | null {
    const i = this.host.get('currentDivergence');
    return i >= 0 ? (this.divergences[i] ?? null) : null;
  }

  /** CSS classes per node of `method`: selected, root/downstream, current, warning, hazard. */
  highlights(method = this.method): Map<number, Set<string>> {
    const out = new Map<number, Set<string>>();
    const add = (id: number | null, cls: string): void => {
      if (id === null || id < 0) {
        return;
      }
      let set = out.get(id);
      if (!set) {
        out.set(id, (set = new Set()));
      }
      set.add(cls);
    };
    const run = this.run;
    if (!run) {
      return out;
    }
    for (const w of run.userWarnings) {
      if (w.method === method) {
        w.node_ids.forEach(id => add(id, 'warning'));
      }
    }
    for (const f of run.findings) {
      if (f.method === method && findingIsProblem(f)) {
        f.node_ids.forEach(id => add(id, 'hazard'));
      }
    }
    for (const d of this.divergences) {
      if (d.method === method) {
        add(d.traceNode, d.kind);
      }
    }
    const current = this.currentDivergence;
    if (current && current.method === method) {
      add(current.traceNode, 'current');
    }
    this.markedNodes(method).forEach(id => add(id, 'guard'));
    if (method === this.method) {
      add(this.host.get('selectedNode'), 'selected');
    }
    return out;
  }

  /** Call `listener` when any of `keys` changed; the unsubscribe. */
  whenChanged(keys: readonly HostKey[], listener: () => void): () => void {
    return this.onChange(changed => {
      if (keys.some(k => changed.has(k))) {
        listener();
      }
    });
  }

  /** Subscribe to host changes; `run` changes also reset derived caches (done lazily above). */
  onChange(listener: (keys: Set<HostKey>) => void): () => void {
    return this.host.onChange(listener);
  }
}
