/**
 * `layoutDot(dot)`: DOT source to SVG text, laid out by Graphviz in a Web Worker.
 *
 * One worker serves every view on the page, one request at a time (Graphviz is single-threaded and the
 * requests would only queue inside the worker anyway; queueing here lets a crashed worker be replaced).
 */
import type { ILayoutRequest, LayoutResponse } from './layout.worker';

interface IPending {
  resolve: (svg: string) => void;
  reject: (error: Error) => void;
}

let worker: Worker | null = null;
let nextId = 1;
const pending = new Map<number, IPending>();
let queue: Promise<unknown> = Promise.resolve();

function failAll(message: string): void {
  for (const p of pending.values()) {
    p.reject(new Error(message));
  }
  pending.clear();
}

function getWorker(): Worker {
  if (worker !== null) {
    return worker;
  }
  // Keep this ONE expression naming the compiled .js file: rspack only emits a worker chunk for
  // `new Worker(new URL('<literal>', import.meta.url))`; split up, it silently runs on the main thread.
  const created = new Worker(new URL('./layout.worker.js', import.meta.url));
  created.onmessage = (event: MessageEvent<LayoutResponse>) => {
    const data = event.data;
    const p = pending.get(data.id);
    if (p === undefined) {
      return;
    }
    pending.delete(data.id);
    if ('svg' in data) {
      p.resolve(data.svg);
    } else {
      p.reject(new Error(`Graphviz layout failed: ${data.error}`));
    }
  };
  created.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    // the worker died (e.g. could not load): fail what is waiting, start a new one next time
    failAll(`Graphviz layout worker failed: ${event.message || 'could not start the worker'}`);
    created.terminate();
    if (worker === created) {
      worker = null;
    }
  };
  worker = created;
  return created;
}

function send(dot: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    const request: ILayoutRequest = { id, dot };
    try {
      getWorker().postMessage(request);
    } catch (err) {
      pending.delete(id);
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}

/** Lay out `dot` with Graphviz's `dot` engine; resolves to the SVG document as text. */
export function layoutDot(dot: string): Promise<string> {
  const result = queue.then(() => send(dot));
  queue = result.catch(() => undefined);
  return result;
}

let warmed = false;

/**
 * Start the worker and load Graphviz's WASM ahead of the first real layout (it is most of the first
 * paint's time); called when the extension activates, once the page is idle.
 */
export function warmUpLayout(): void {
  if (warmed) {
    return;
  }
  warmed = true;
  layoutDot('digraph warmup {}').catch(() => {
    warmed = false; // a later layout reports the problem; let the next call try again
  });
}
