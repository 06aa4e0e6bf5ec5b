/**
 * Putting an explorer on the page, live or static, and deciding which.
 *
 * A displayed explorer carries two representations in one output: the ipywidgets view (live, needs
 * the kernel) and the run as `application/vnd.jupyter.tracejit+json` (kernel-free). Our MIME renderer
 * ranks ahead of the widget renderer and decides: when the widget model of that output is alive in
 * this page (it registers here when the kernel creates it), it mounts the live explorer on it;
 * otherwise (a saved notebook reopened, nbconvert, no kernel) the read-only one from the JSON.
 */

import { Explorer } from './Explorer';
import { StaticHost, SyncedModel, WidgetHost } from '../state/host';
import { TraceRunJSON } from '../model/protocol';

const liveModels = new Map<string, SyncedModel>();
const waiting = new Map<string, ((model: SyncedModel) => void)[]>();
const closing = new Map<string, Set<() => void>>();

/** Called by the widget model when the kernel creates it (and with null when it is closed). */
export function registerLiveModel(modelId: string, model: SyncedModel | null): void {
  if (model === null) {
    liveModels.delete(modelId);
    const listeners = closing.get(modelId);
    closing.delete(modelId);
    listeners?.forEach(cb => cb());
    return;
  }
  liveModels.set(modelId, model);
  const callbacks = waiting.get(modelId) ?? [];
  waiting.delete(modelId);
  callbacks.forEach(cb => cb(model));
}

/** The live model of `modelId`, waiting up to `timeoutMs` for the kernel's comm to create it. */
export function liveModel(modelId: string, timeoutMs: number): Promise<SyncedModel | null> {
  const found = liveModels.get(modelId);
  if (found || timeoutMs <= 0) {
    return Promise.resolve(found ?? null);
  }
  return new Promise(resolve => {
    const timer = setTimeout(() => {
      const list = waiting.get(modelId) ?? [];
      waiting.set(
        modelId,
        list.filter(cb => cb !== done)
      );
      resolve(null);
    }, timeoutMs);
    const done = (model: SyncedModel): void => {
      clearTimeout(timer);
      resolve(model);
    };
    waiting.set(modelId, [...(waiting.get(modelId) ?? []), done]);
  });
}

/**
 * Call `callback` once when the kernel closes the widget model `modelId` (a newer `%trace` of the same cell, or
 * `close()`: the kernel let go of the model and its ScriptModules); returns the unsubscribe function.
 */
export function onLiveModelClosed(modelId: string, callback: () => void): () => void {
  let listeners = closing.get(modelId);
  if (!listeners) {
    closing.set(modelId, (listeners = new Set()));
  }
  listeners.add(callback);
  return () => {
    listeners.delete(callback);
  };
}

export function mountLive(container: HTMLElement, model: SyncedModel): Explorer {
  const explorer = new Explorer(new WidgetHost(model));
  container.appendChild(explorer.element);
  return explorer;
}

/** `checkRun`: why the saved data cannot be shown, if it cannot (see ExplorerHost.checkRun). */
export function mountStatic(
  container: HTMLElement,
  run: TraceRunJSON | null,
  checkRun?: (data: unknown) => string | null
): Explorer {
  const explorer = new Explorer(new StaticHost(run, checkRun));
  explorer.element.classList.add('jp-mod-readOnly');
  container.appendChild(explorer.element);
  return explorer;
}
