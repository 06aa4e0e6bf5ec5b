/**
 * `layoutDot(dot)` for the standalone HTML report: the report build (`build.mjs`) swaps this module in for
 * `../graph/layout`, with the same API.
 *
 * The report is one file opened from disk (`file://`), where a Worker cannot be started from a file URL. So the
 * worker is this very script, started from a Blob URL of its own source (`setWorkerSource`, called by
 * `standalone.ts` with the text of its inline `<script>`); in the worker, the script serves layouts
 * (`serveLayouts`). Where no worker can be had (no source, a CSP that forbids `blob:` workers, a worker that
 * dies before its first answer), Graphviz runs on the page's main thread instead: slower to interact with on
 * big graphs, but the report still works. Requests go one at a time, as in `../graph/layout`.
 */
import { ILayoutRequest, LayoutResponse, loadGraphviz } from '../graph/graphviz';

/** The slice of a worker's global scope that `serveLayouts` uses. */
export interface ILayoutScope {
  onmessage: ((event: MessageEvent<ILayoutRequest>) => void) | null;
  postMessage(message: LayoutResponse): void;
}

/** Where layouts run: not decided yet, in a worker, or on the main thread. */
export type LayoutMode = 'pending' | 'worker' | 'main-thread';

async function layoutHere(dot: string): Promise<string> {
  const gv = await loadGraphviz();
  return gv.dot(dot, 'svg');
}

/** The worker side: answer `{id, dot}` with `{id, svg}` or `{id, error}`. */
export function serveLayouts(scope: ILayoutScope): void {
  scope.onmessage = async event => {
    const { id, dot } = event.data;
    try {
      scope.postMessage({ id, svg: await layoutHere(dot) });
    } catch (err) {
      scope.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
    }
  };
}

let workerSource: string | null = null;
/** A module script that serves layouts when started as a module worker (the anywidget bundle itself). */
let workerModule: string | null = null;
let worker: Worker | null = null;
/** True once the current worker has answered: after that, a crash is an error, not a reason to give up on workers. */
let workerAnswered = false;
let mode: LayoutMode = 'pending';
let nextId = 1;
let queue: Promise<unknown> = Promise.resolve();

/** The page's script text, run as the layout worker; `null`: lay out on the main thread. */
export function setWorkerSource(source: string | null): void {
  workerSource = source && source.trim() ? source : null;
  workerModule = null;
  mode = workerSource === null ? 'main-thread' : 'pending';
}

/**
 * The URL of an ES module that serves layouts when it runs in a worker (the anywidget bundle, `import.meta.url`:
 * the host's own URL for it, or a Blob URL); `null`: lay out on the main thread.
 */
export function setWorkerModule(url: string | null, startNow = false): void {
  workerModule = url || null;
  workerSource = null;
  mode = workerModule === null ? 'main-thread' : 'pending';
  if (workerModule !== null && startNow) {
    // a Blob URL the host revokes once the module is imported (anywidget's JupyterLab front end does) must be
    // resolved now: the Worker constructor takes hold of the blob; the first layout finds the worker running
    try {
      const w = startWorker();
      w.onerror = (event: ErrorEvent) => {
        event.preventDefault();
        w.terminate();
        if (worker === w) {
          worker = null; // the first layout tries once more, then falls back to the main thread
        }
      };
      worker = w;
    } catch {
      mode = 'main-thread';
    }
  }
}

/** Where layouts run (the browser test and the curious read it). */
export function layoutMode(): LayoutMode {
  return mode;
}

function startWorker(): Worker {
  workerAnswered = false;
  if (workerModule !== null) {
    return new Worker(workerModule, { type: 'module' });
  }
  const url = URL.createObjectURL(new Blob([workerSource ?? ''], { type: 'text/javascript' }));
  return new Worker(url);
}

/** One request to the worker; rejects with `fallback: true` when the worker never worked. */
function viaWorker(dot: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let w: Worker;
    try {
      w = worker ?? startWorker();
    } catch (err) {
      reject(Object.assign(new Error(String(err)), { fallback: true }));
      return;
    }
    worker = w;
    const id = nextId++;
    w.onmessage = (event: MessageEvent<LayoutResponse>) => {
      const data = event.data;
      if (data.id !== id) {
        return;
      }
      workerAnswered = true;
      mode = 'worker';
      if ('svg' in data) {
        resolve(data.svg);
      } else {
        reject(new Error(`Graphviz layout failed: ${data.error}`));
      }
    };
    w.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      w.terminate();
      if (worker === w) {
        worker = null;
      }
      const message = `Graphviz layout worker failed: ${event.message || 'could not start the worker'}`;
      reject(Object.assign(new Error(message), { fallback: !workerAnswered }));
    };
    w.postMessage({ id, dot } satisfies ILayoutRequest);
  });
}

async function layoutOnce(dot: string): Promise<string> {
  if (mode !== 'main-thread' && (workerSource !== null || workerModule !== null)) {
    try {
      return await viaWorker(dot);
    } catch (err) {
      if (!(err as { fallback?: boolean }).fallback) {
        throw err;
      }
      console.warn(`tracejit report: laying out graphs on the main thread (${(err as Error).message})`);
      mode = 'main-thread';
    }
  }
  mode = 'main-thread';
  return layoutHere(dot);
}

/** Lay out `dot` with Graphviz's `dot` engine; resolves to the SVG document as text. */
export function layoutDot(dot: string): Promise<string> {
  const result = queue.then(() => layoutOnce(dot));
  queue = result.catch(() => undefined);
  return result;
}
