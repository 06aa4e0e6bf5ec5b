/**
 * Graphviz layout off the main thread.
 *
 * WASM Graphviz's `dot()` is synchronous: on the page's main thread a large graph freezes JupyterLab for
 * seconds. This worker owns the one Graphviz instance of the page; `layout.ts` sends it one request at a time.
 *
 * Messages in: `{id, dot}`; out: `{id, svg}` or `{id, error}`.
 */
import { ILayoutRequest, LayoutResponse, loadGraphviz } from './graphviz';

export type { ILayoutRequest, LayoutResponse };

/** The worker's global scope, typed without pulling the whole WebWorker lib into the DOM build. */
interface IWorkerScope {
  onmessage: ((event: MessageEvent<ILayoutRequest>) => void) | null;
  postMessage(message: LayoutResponse): void;
}

const scope = self as unknown as IWorkerScope;

scope.onmessage = async event => {
  const { id, dot } = event.data;
  try {
    const gv = await loadGraphviz();
    scope.postMessage({ id, svg: gv.dot(dot, 'svg') });
  } catch (err) {
    scope.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
};
