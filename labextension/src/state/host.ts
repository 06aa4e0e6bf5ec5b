/**
 * Where the explorer's state lives. The views never talk to ipywidgets directly: a live widget
 * (`WidgetHost`, state in the kernel-synced model) and the kernel-free MIME renderer
 * (`StaticHost`, state in memory, read-only run) implement the same interface.
 */

import type { DimsEditor } from '../model/protocol.generated';
import {
  ComparisonJSON,
  ExplorerRequest,
  ExplorerStatus,
  HistoryEntry,
  TraceRunJSON,
  TRAIT_DEFAULTS
} from '../model/protocol';

export interface HostState {
  run: TraceRunJSON | null;
  /** `to_html()` of the run on screen, for the notebook's saved text/html ("" when the host has none). */
  html: string;
  /** True when changing options re-traces in the kernel. */
  live: boolean;
  /** The options bar's values, by the keys of the run's back end's bar (model/backends.ts barOptions). */
  options: Record<string, unknown> | null;
  checkInputLabels: string[];
  status: ExplorerStatus;
  /** Seconds since the epoch when tracing started (the view counts the elapsed time). */
  statusSince: number;
  statusMessage: string;
  /** What the capture under way does while status is tracing (tracing, exporting, draft-exporting...); "" else. */
  phase: string;
  history: HistoryEntry[];
  selectedMethod: string;
  /** -1: nothing selected. */
  selectedNode: number;
  /** Index into the run's divergences (case-major); -1: none. */
  currentDivergence: number;
  comparison: ComparisonJSON | null;
  /** The dims editor of the run on screen (an export's dynamic dims as specs); null when none. */
  dims: DimsEditor | null;
}

export type HostKey = keyof HostState;

/** What the views may change. */
export type HostPatch = Partial<Pick<HostState, 'selectedMethod' | 'selectedNode' | 'currentDivergence' | 'options'>>;

export interface ExplorerHost {
  readonly readOnly: boolean;
  get<K extends HostKey>(key: K): HostState[K];
  set(patch: HostPatch): void;
  /** Ask the kernel for something (ignored by a read-only host). */
  send(request: ExplorerRequest): void;
  /** Call `listener` with the changed keys after every change; returns the unsubscribe function. */
  onChange(listener: (keys: Set<HostKey>) => void): () => void;
  /** Interrupt the kernel (what its Interrupt button does); absent where there is no kernel. */
  interruptKernel?(): void;
  /**
   * Why the run cannot be shown, checked before it is decoded (null: fine); absent where the run is our own
   * kernel's. The MIME renderer passes the schema check of model/validate.ts for saved outputs; the standalone
   * report, whose run we wrote, leaves it out (and Ajv out of its bundle).
   */
  readonly checkRun?: (data: unknown) => string | null;
}

/** A saved run's state: the widget traits' defaults (from the schema), with the run and its default method. */
/**
 * The widget picks forward, else the first traced method (explorer.py _default_method). `run` may be anything a
 * saved output holds: it is validated later, when decoded (model/validate.ts).
 */
function defaultMethod(run: TraceRunJSON | null): string {
  const graphs: unknown = run && typeof run === 'object' ? run.graphs : null;
  if (!graphs || typeof graphs !== 'object') {
    return TRAIT_DEFAULTS.selected_method;
  }
  return 'forward' in graphs ? 'forward' : (Object.keys(graphs)[0] ?? TRAIT_DEFAULTS.selected_method);
}

function defaultState(run: TraceRunJSON | null): HostState {
  const d = TRAIT_DEFAULTS;
  return {
    run,
    html: d.html,
    live: d.live,
    options: null,
    checkInputLabels: d.check_input_labels,
    status: d.status,
    statusSince: d.status_since,
    statusMessage: d.status_message,
    phase: d.phase,
    // a saved run has no history: its own entry only (the options bar shows its recorded options instead)
    history: d.runs,
    selectedMethod: defaultMethod(run),
    selectedNode: d.selected_node,
    currentDivergence: d.current_divergence,
    comparison: null,
    dims: null
  };
}

/** The kernel-free host: a saved run, explored in memory; nothing is sent anywhere. */
export class StaticHost implements ExplorerHost {
  readonly readOnly = true;
  private state: HostState;
  private listeners = new Set<(keys: Set<HostKey>) => void>();

  constructor(
    run: TraceRunJSON | null,
    readonly checkRun?: (data: unknown) => string | null
  ) {
    this.state = defaultState(run);
  }

  get<K extends HostKey>(key: K): HostState[K] {
    return this.state[key];
  }

  set(patch: HostPatch): void {
    const changed = new Set<HostKey>();
    for (const [key, value] of Object.entries(patch) as [HostKey, unknown][]) {
      if (key === 'options') {
        continue; // a saved run cannot be re-traced
      }
      if (this.state[key] !== value) {
        (this.state as unknown as Record<string, unknown>)[key] = value;
        changed.add(key);
      }
    }
    if (changed.size) {
      this.listeners.forEach(l => l(changed));
    }
  }

  send(_request: ExplorerRequest): void {
    // read-only: there is no kernel behind a saved notebook
  }

  onChange(listener: (keys: Set<HostKey>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Trait names of `jupyter_tracejit.widgets.TraceExplorer`, per host key. */
const TRAIT_OF: Record<HostKey, string> = {
  run: 'run_json',
  html: 'html',
  live: 'live',
  options: 'options',
  checkInputLabels: 'check_input_labels',
  status: 'status',
  statusSince: 'status_since',
  statusMessage: 'status_message',
  phase: 'phase',
  history: 'runs',
  selectedMethod: 'selected_method',
  selectedNode: 'selected_node',
  currentDivergence: 'current_divergence',
  comparison: 'comparison',
  dims: 'dims'
};

/** The slice of a Backbone/ipywidgets model the widget host needs (keeps this file testable). */
export interface SyncedModel {
  get(name: string): unknown;
  set(values: Record<string, unknown>): void;
  save_changes(): void;
  send(content: unknown, callbacks?: unknown): void;
  on(event: string, callback: (...args: unknown[]) => void, context?: unknown): void;
  off(event: string, callback?: (...args: unknown[]) => void, context?: unknown): void;
}

/** The live host: state is the widget model's traits, synced with the kernel. */
export class WidgetHost implements ExplorerHost {
  readonly readOnly = false;
  private listeners = new Set<(keys: Set<HostKey>) => void>();
  private readonly onModelChange: () => void;

  constructor(private readonly model: SyncedModel) {
    const keyOf = new Map(Object.entries(TRAIT_OF).map(([k, t]) => [t, k as HostKey]));
    this.onModelChange = () => {
      const changed = new Set<HostKey>();
      const attrs = (
        this.model as unknown as { changedAttributes(): Record<string, unknown> | false }
      ).changedAttributes?.();
      if (attrs) {
        for (const name of Object.keys(attrs)) {
          const key = keyOf.get(name);
          if (key) {
            changed.add(key);
          }
        }
      }
      if (changed.size) {
        this.listeners.forEach(l => l(changed));
      }
    };
    model.on('change', this.onModelChange);
  }

  dispose(): void {
    this.model.off('change', this.onModelChange);
    this.listeners.clear();
  }

  get<K extends HostKey>(key: K): HostState[K] {
    const raw = this.model.get(TRAIT_OF[key]);
    if (key === 'run' || key === 'comparison' || key === 'dims') {
      // the kernel sends {} for "none"
      return (raw && Object.keys(raw as object).length ? raw : null) as HostState[K];
    }
    if (key === 'options') {
      return (raw && Object.keys(raw as object).length ? raw : null) as HostState[K];
    }
    return raw as HostState[K];
  }

  set(patch: HostPatch): void {
    const values: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(patch) as [HostKey, unknown][]) {
      values[TRAIT_OF[key]] = key === 'options' ? { ...(this.get('options') ?? {}), ...(value as object) } : value;
    }
    this.model.set(values);
    this.model.save_changes();
  }

  send(request: ExplorerRequest): void {
    this.model.send(request);
  }

  interruptKernel(): void {
    // ipywidgets' manager holds the kernel connection in JupyterLab and Notebook 7 (its interface does not say so)
    const manager = (this.model as unknown as { widget_manager?: { kernel?: { interrupt(): Promise<void> } | null } })
      .widget_manager;
    const kernel = manager?.kernel;
    kernel?.interrupt().catch(err => console.warn('jupyter-tracejit: could not interrupt the kernel', err));
  }

  onChange(listener: (keys: Set<HostKey>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
