/**
 * The renderer of `application/vnd.jupyter.tracejit+json`: the explorer without a kernel.
 *
 * A displayed explorer's output carries the widget view and this MIME type. This renderer ranks ahead
 * of the widget renderer: when the output's widget model is alive (the kernel created it in this page)
 * it mounts the live explorer on it, otherwise the read-only explorer of the saved run.
 *
 * Declared `safe: true` so JupyterLab uses it for untrusted notebooks (executed headless, or received from
 * someone else). That is only right because it IS safe: everything from the data becomes text nodes, and
 * the Graphviz SVG is escaped at the input and sanitized at the output (see graph/svg.ts).
 */
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { Explorer } from './explorer/Explorer';
import { liveModel, mountLive, mountStatic } from './explorer/mount';
import { TraceRunJSON } from './model/protocol';
import { MIME_TYPE } from './version';

const WIDGET_VIEW = 'application/vnd.jupyter.widget-view+json';
/** How long to wait for the kernel's comm to create the widget model of a fresh output. */
const LIVE_WAIT_MS = 1500;

export class TraceRunRenderer extends Widget implements IRenderMime.IRenderer {
  private explorer: Explorer | null = null;
  /** The widget model the live explorer runs on (null: static, or nothing mounted). */
  private liveId: string | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType;
    this.addClass('jp-TraceExplorer');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    try {
      await this.render(model);
    } catch (err) {
      // a bug of ours or data we cannot read: say so in the output, keep the details in the console
      console.error('jupyter-tracejit: could not show this trace', err);
      this.unmount();
      const message = document.createElement('p');
      message.className = 'jp-TraceExplorer-error jp-TraceExplorer-renderError';
      message.textContent = `jupyter-tracejit could not show this trace: ${err instanceof Error ? err.message : String(err)}`;
      this.node.appendChild(message);
    }
  }

  private async render(model: IRenderMime.IMimeModel): Promise<void> {
    const view = model.data[WIDGET_VIEW] as { model_id?: string } | undefined;
    if (this.liveId !== null && view?.model_id === this.liveId) {
      return; // our own setData below: the live explorer is already showing it
    }
    this.unmount();
    const live = view?.model_id ? await liveModel(view.model_id, LIVE_WAIT_MS) : null;
    // mount in a task of our own, not inside JupyterLab's handling of the (large) output message
    await new Promise(resolve => setTimeout(resolve, 0));
    if (live) {
      this.liveId = view!.model_id!;
      this.explorer = mountLive(this.node, live);
      // keep the saved copy of the run current, so the notebook reopens on what was last shown
      this.unsubscribe = this.explorer.ctx.onChange(keys => {
        const run = this.explorer?.ctx.host.get('run');
        if (keys.has('run') && run) {
          const data = { ...model.data, [this._mimeType]: run as unknown, 'text/plain': run.summary };
          model.setData({ data: data as IRenderMime.IMimeModel['data'] });
        }
      });
    } else {
      this.explorer = mountStatic(this.node, (model.data[this._mimeType] ?? null) as TraceRunJSON | null);
    }
  }

  private unmount(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.explorer?.dispose();
    this.explorer = null;
    this.liveId = null;
    while (this.node.firstChild) {
      this.node.removeChild(this.node.firstChild);
    }
  }

  dispose(): void {
    this.unmount();
    super.dispose();
  }

  private _mimeType: string;
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  // ahead of the ipywidgets renderer (-10), so a saved explorer still shows without its kernel
  defaultRank: -20,
  createRenderer: options => new TraceRunRenderer(options)
};

const extension: IRenderMime.IExtension = {
  id: 'jupyter-tracejit:mime-renderer',
  description: 'Renders jupyter-tracejit runs (application/vnd.jupyter.tracejit+json), live or without a kernel.',
  rendererFactory,
  rank: -20,
  dataType: 'json'
};

export default extension;
