/**
 * "Open With > Trace explorer" on a `.pt` / `.pt2` file: the document's content.
 *
 * The browser never reads the file: the server extension (jupyter_tracejit/server) loads it with torch in a
 * process of its own and answers the run's JSON, which is shown by the saved-run renderer of the MIME extension
 * (mime.ts, through JupyterLab's rendermime registry): the same read-only explorer as a saved notebook output.
 */
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { Panel, Widget } from '@lumino/widgets';

import { MIME_TYPE } from '../version';

/** The document's content: a loading line, then the explorer of the run, or the server's message. */
export class ArchiveView extends Panel {
  private renderer: Widget | null = null;
  /** Counts loads, so that an answer to an earlier one (Reload pressed while loading) is dropped. */
  private generation = 0;
  /** Aborts the load in flight: the server stops reading the file when its client goes away. */
  private inFlight: AbortController | null = null;

  constructor(
    private readonly path: string,
    private readonly rendermime: IRenderMimeRegistry,
    private readonly load: (path: string, signal: AbortSignal) => Promise<string>
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
      run = await this.load(this.path, inFlight.signal);
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
    await renderer.renderModel(this.rendermime.createModel({ data: { [MIME_TYPE]: run }, trusted: true }));
  }

  /** Closing the document while it loads stops the load on the server. */
  dispose(): void {
    this.inFlight?.abort();
    this.inFlight = null;
    super.dispose();
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
