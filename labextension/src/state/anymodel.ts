/**
 * anywidget's model as the `SyncedModel` that `WidgetHost` reads: the one adapter between the anywidget front-end
 * module API (AFM) and the explorer, so that no view code is written twice.
 *
 * The AFM model that every anywidget host (JupyterLab, Notebook 7, VS Code, Colab, marimo) hands to `render`
 * promises only `get(key)`, `set(key, value)`, `save_changes()`, `send(content)`, and `on`/`off` for
 * `change:<key>` and `msg:custom`. `WidgetHost` was written against Backbone (`set({...})`, one `change` event
 * with `changedAttributes()`), so this adapter subscribes to `change:<trait>` for every synced trait of the
 * contract, collects what changed in one task (a kernel state message sets several traits at once) and then
 * calls the `change` listeners with `changedAttributes()` answering those names.
 */
import type { SyncedModel } from './host';
import { TRAIT_DEFAULTS } from '../model/protocol';

/** The anywidget front-end module's model (the subset we use; see anywidget's `AnyModel` type). */
export interface AnyModel {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
  save_changes(): void;
  send(content: unknown, callbacks?: unknown, buffers?: unknown): void;
  on(event: string, callback: (...args: unknown[]) => void): void;
  off(event?: string | null, callback?: ((...args: unknown[]) => void) | null): void;
}

type Listener = (...args: unknown[]) => void;

/** Every synced trait of the contract (explorer.schema.json). */
export const SYNCED_TRAITS: readonly string[] = Object.keys(TRAIT_DEFAULTS);

export class AnyModelAdapter implements SyncedModel {
  private readonly changeListeners = new Set<Listener>();
  private readonly perTrait = new Map<string, Listener>();
  private pending = new Set<string>();
  private changed: Record<string, unknown> | false = false;
  private scheduled = false;

  constructor(
    private readonly model: AnyModel,
    traits: readonly string[] = SYNCED_TRAITS,
    /** How the collected changes are delivered (tests pass a synchronous one). */
    private readonly schedule: (flush: () => void) => void = flush => queueMicrotask(flush)
  ) {
    for (const trait of traits) {
      const onTrait: Listener = () => this.noteChange(trait);
      this.perTrait.set(trait, onTrait);
      model.on(`change:${trait}`, onTrait);
    }
  }

  private noteChange(trait: string): void {
    this.pending.add(trait);
    if (this.scheduled) {
      return;
    }
    this.scheduled = true;
    this.schedule(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    if (!this.pending.size) {
      return;
    }
    this.changed = Object.fromEntries([...this.pending].map(name => [name, this.model.get(name)]));
    this.pending = new Set();
    try {
      for (const listener of [...this.changeListeners]) {
        listener();
      }
    } finally {
      this.changed = false;
    }
  }

  /** Backbone's: the attributes of the change being reported (what `WidgetHost` reads in its listener). */
  changedAttributes(): Record<string, unknown> | false {
    return this.changed;
  }

  get(name: string): unknown {
    return this.model.get(name);
  }

  set(values: Record<string, unknown>): void {
    for (const [name, value] of Object.entries(values)) {
      this.model.set(name, value);
    }
  }

  save_changes(): void {
    this.model.save_changes();
  }

  send(content: unknown): void {
    this.model.send(content);
  }

  on(event: string, callback: Listener): void {
    if (event !== 'change') {
      throw new Error(`AnyModelAdapter: only 'change' is supported, got ${JSON.stringify(event)}`);
    }
    this.changeListeners.add(callback);
  }

  off(event: string, callback?: Listener): void {
    if (event !== 'change') {
      return;
    }
    if (callback) {
      this.changeListeners.delete(callback);
    } else {
      this.changeListeners.clear();
    }
  }

  /** Stop listening to the model (the view is gone). */
  dispose(): void {
    for (const [trait, listener] of this.perTrait) {
      this.model.off(`change:${trait}`, listener);
    }
    this.perTrait.clear();
    this.changeListeners.clear();
    this.pending.clear();
  }
}
