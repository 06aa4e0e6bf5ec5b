/**
 * "Open With > Trace explorer" on a `.pt` / `.pt2` file: the document's content.
 *
 * The browser never reads the file: the server extension (jupyter_tracejit/server) loads it with torch in a
 * process of its own and answers the run's JSON, which is shown by the saved-run renderer of the MIME extension
 * (mime.ts, through JupyterLab's rendermime registry): the same read-only explorer as a saved notebook output.
 *
 * A `.pt2` that needs a module imported first (its program returns a class the module registers with torch's
 * pytree, archive/imports.ts) gets a "retry importing MODULE" button above that explorer: the file is asked for
 * again with the module in the request, which the server's reading process imports before the load. The modules
 * asked for stay with the document (its Reload keeps them).
 */
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { Panel, Widget } from '@lumino/widgets';

import { MIME_TYPE } from '../version';
import { unregisteredModule } from './imports';

/** Loads the run of a file (server side), importing `imports` first. */
export type LoadRun = (path: string, signal: AbortSignal, imports: readonly string[]) => Promise<string>;

/** The document's content: a loading line, then the explorer of the run, or the server's message. */
export class ArchiveView extends Panel {
  private renderer: Widget | null = null;
  /** Counts loads, so that an answer to an earlier one (Reload pressed while loading) is dropped. */
  private generation = 0;
  /** Aborts the load in flight: the server stops reading the file when its client goes away. */
  private inFlight: AbortController | null = null;
  /** The modules the user asked the server to import before loading this file (the retry button). */
  private imports: string[] = [];

  constructor(
    private readonly path: string,
    private readonly rendermime: IRenderMimeRegistry,
    private readonly load: LoadRun
  ) {
    super();
    this.addClass('jp-TraceArchive');
  }

  /** Load (or load again) the file and show its run. */
  async reload(): Promise<void> {
    const generation = ++this.generation;
    const name = this.path.split('/').pop() || this.path;
    this.clear();
    const status = this.showStatus();
    const text = document.createElement('span');
    text.className = 'jp-TraceExplorer-progressText';
    text.textContent = `loading ${name} with torch…`;
    status.setAttribute('role', 'status');
    status.appendChild(text);
    this.inFlight?.abort();
    const inFlight = (this.inFlight = new AbortController());
    let run: string;
    try {
      run = await this.load(this.path, inFlight.signal, this.imports);
    } catch (err) {
      if (generation === this.generation && !this.isDisposed) {
        this.showError(`${name} could not be opened: ${err instanceof Error ? err.message : String(err)}`);
      }
      return;
    }
    if (generation !== this.generation || this.isDisposed) {
      return;
    }
    this.clear();
    // the MIME renderer shows a run whose load failed (not an archive, a pickle, ...) with its error and hint
    const renderer = this.rendermime.createRenderer(MIME_TYPE);
    this.renderer = renderer;
    this.addWidget(renderer);
    const module = unregisteredModule(run);
    if (module !== null && !this.imports.includes(module)) {
      this.showRetry(module);
    }
    await renderer.renderModel(this.rendermime.createModel({ data: { [MIME_TYPE]: run }, trusted: true }));
  }

  /** Closing the document while it loads stops the load on the server. */
  dispose(): void {
    this.inFlight?.abort();
    this.inFlight = null;
    super.dispose();
  }

  /** The retry button: load again, the server importing `module` first (importing runs its code: said so). */
  private showRetry(module: string): void {
    const bar = document.createElement('div');
    bar.className = 'jp-TraceArchive-status jp-TraceArchive-retry';
    const text = document.createElement('span');
    text.textContent = `The program returns a class that ${module} registers with torch's pytree, and the server's reading process has not imported it. `;
    const retry = document.createElement('button');
    retry.type = 'button';
    retry.className = 'jp-TraceExplorer-button jp-mod-accept';
    retry.dataset.module = module;
    retry.textContent = `retry importing ${module}`;
    retry.title =
      `Load the file again, the server importing ${module} first. Importing a module runs its code (in the ` +
      'process that reads the file, on the server): retry only for a module you know, installed where the ' +
      'server runs.';
    retry.addEventListener('click', () => {
      this.imports = [...this.imports, module];
      void this.reload();
    });
    bar.append(text, retry);
    this.node.insertBefore(bar, this.node.firstChild); // above the explorer
  }

  private showStatus(): HTMLElement {
    const status = document.createElement('div');
    status.className = 'jp-TraceExplorer-progress jp-TraceArchive-status';
    this.node.appendChild(status);
    return status;
  }

  private showError(message: string): void {
    this.clear();
    const text = document.createElement('p');
    text.className = 'jp-TraceExplorer-error jp-TraceArchive-error';
    text.textContent = message;
    this.showStatus().appendChild(text);
  }

  private clear(): void {
    this.renderer?.dispose();
    this.renderer = null;
    this.node.querySelectorAll(':scope > .jp-TraceArchive-status').forEach(el => el.remove());
  }
}
