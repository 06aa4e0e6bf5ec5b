/**
 * The one Graphviz instance of a thread (a worker, or the standalone report's main thread), and the messages
 * layout requests use. Loading it fetches / compiles the ~800 KB WASM module once; a failed load is retried.
 */
import { Graphviz } from '@hpcc-js/wasm-graphviz';

export interface ILayoutRequest {
  id: number;
  dot: string;
}

export type LayoutResponse = { id: number; svg: string } | { id: number; error: string };

let loaded: Promise<Graphviz> | null = null;

export function loadGraphviz(): Promise<Graphviz> {
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
