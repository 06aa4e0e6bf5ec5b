/**
 * Graphviz layout off the main thread.
 *
 * WASM Graphviz's `dot()` is synchronous: on the page's main thread a large graph freezes JupyterLab for
 * seconds. This worker owns the one Graphviz instance of the page; `layout.ts` sends it one request at a time.
 *
 * Messages in: `{id, dot}`; out: `{id, svg}` or `{id, error}`.
 */
import { Graphviz } from '@hpcc-js/wasm-graphviz';

export interface ILayoutRequest {
  id: number;
  dot: string;
}

export type LayoutResponse = { id: number; svg: string } | { id: number; error: string };

/** The worker's global scope, typed without pulling the whole WebWorker lib into the DOM build. */
interface IWorkerScope {
  onmessage: ((event: MessageEvent<ILayoutRequest>) => void) | null;
  postMessage(message: LayoutResponse): void;
}

const scope = self as unknown as IWorkerScope;
let loaded: Promise<Graphviz> | null = null;

/** The page's one Graphviz (the ~800 KB WASM module is fetched on the first layout); a failed load is retried. */
function graphviz(): Promise<Graphviz> {
  if (loaded === null) {
    const loading = Graphviz.load();
    loading.catch(() => {
      if (loaded === loading) {
        loaded = null;
      }
    });
    loaded = loading;
  }
  return loaded;
}

scope.onmessage = async event => {
  const { id, dot } = event.data;
  try {
    const gv = await graphviz();
    scope.postMessage({ id, svg: gv.dot(dot, 'svg') });
  } catch (err) {
    scope.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
};
