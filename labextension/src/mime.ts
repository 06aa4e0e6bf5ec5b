/**
 * The renderer of `application/vnd.jupyter.tracejit+json`: the explorer without a kernel; and of
 * `application/vnd.jupyter.tracejit.progress+json`: what `%trace` shows while the kernel traces.
 *
 * A displayed explorer's output carries the widget view and this MIME type. This renderer ranks ahead
 * of the widget renderer: when the output's widget model is alive (the kernel created it in this page)
 * it mounts the live explorer on it, otherwise the read-only explorer of the saved run. While the live
 * explorer re-traces, the output's saved data (the run JSON, its text/html and text/plain) follows the
 * run on screen, so the saved notebook, nbconvert and GitHub show what the explorer showed last.
 *
 * Declared `safe: true` so JupyterLab uses it for untrusted notebooks (executed headless, or received from
 * someone else). That is only right because it IS safe: everything from the data becomes text nodes, and
 * the Graphviz SVG is escaped at the input and sanitized at the output (see graph/svg.ts).
 */
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { Explorer } from './explorer/Explorer';
import { liveModel, mountLive, mountStatic, onLiveModelClosed } from './explorer/mount';
import { TraceProgress, TraceRunJSON } from './model/protocol';
import { savedRunProblem } from './model/validate';
import { interruptFor } from './kernelLink';
import { button } from './state/dom';
import { MIME_TYPE, PROGRESS_MIME_TYPE } from './version';

const WIDGET_VIEW = 'application/vnd.jupyter.widget-view+json';

/**
 * The run saved in an output: its JSON text (what the kernel writes, see `run_mime_payload` in explorer.py:
 * JupyterLab deep-copies a JSON object in output data each time the output model's data is read, a string it
 * does not) or, from notebooks saved by earlier versions, the object itself. Text that is not JSON is left as is,
 * for the saved-run check to name.
 */
function savedRun(value: unknown): unknown {
  if (typeof value !== 'string') {
    return value ?? null;
  }
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
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
      this.showMessage(
        `jupyter-tracejit could not show this trace: ${err instanceof Error ? err.message : String(err)}`
      );
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
      // the kernel closed the model (it let go of the model and its ScriptModules): keep showing the last run,
      // read-only, from the output's data that follows the run on screen
      const stopWatchingClose = onLiveModelClosed(this.liveId, () => {
        this.unmount();
        this.explorer = mountStatic(this.node, savedRun(model.data[this._mimeType]) as TraceRunJSON | null);
      });
      // keep the saved copy of the run current, so the notebook reopens on what was last shown
      const stopFollowing = this.explorer.ctx.onChange(keys => {
        const host = this.explorer?.ctx.host;
        const run = host?.get('run');
        if ((keys.has('run') || keys.has('html')) && host && run) {
          const data: Record<string, unknown> = {
            ...model.data,
            [this._mimeType]: JSON.stringify(run),
            'text/plain': run.summary
          };
          const html = host.get('html');
          if (html) {
            data['text/html'] = html;
          }
          model.setData({ data: data as IRenderMime.IMimeModel['data'] });
        }
      });
      this.unsubscribe = () => {
        stopWatchingClose();
        stopFollowing();
      };
    } else {
      this.explorer = mountStatic(
        this.node,
        savedRun(model.data[this._mimeType]) as TraceRunJSON | null,
        savedRunProblem
      );
      // a saved run we cannot read (edited, cut short, another version): its reason alone, not an empty explorer
      const problem = this.explorer.ctx.error;
      if (problem) {
        this.unmount();
        this.showMessage(`jupyter-tracejit cannot show this saved trace: ${problem}`);
      }
    }
  }

  private showMessage(text: string): void {
    const message = document.createElement('p');
    message.className = 'jp-TraceExplorer-error jp-TraceExplorer-renderError';
    message.textContent = text;
    this.node.appendChild(message);
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

/**
 * "checking BertModel… 12 s (started 10:02:11) [cancel]": the kernel is busy with the trace and says only which
 * phase it entered (tracing, checking, probing; exporting...), replacing this output's data each time; the seconds
 * are counted here from the start time it sent. Cancel interrupts the kernel of the notebook this output is in
 * (kernelLink.ts; no button where none is found): the kernel then replaces this output with one "cancelled after"
 * line, and the explorer replaces it when the trace ends.
 */
export class TraceProgressRenderer extends Widget implements IRenderMime.IRenderer {
  private timer: number | null = null;
  private readonly cancelSlot = document.createElement('span');
  private cancelling = false;

  constructor(private readonly mimeType: string) {
    super();
    this.addClass('jp-TraceExplorer-progress');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.stop();
    const progress = model.data[this.mimeType] as Partial<TraceProgress> | undefined;
    const target = typeof progress?.target === 'string' ? progress.target : 'the model';
    const phase = typeof progress?.phase === 'string' && progress.phase ? progress.phase : 'tracing';
    const started = typeof progress?.started === 'number' ? progress.started : Date.now() / 1000;
    const clock = new Date(started * 1000).toLocaleTimeString([], { hour12: false });
    const text = document.createElement('span');
    text.className = 'jp-TraceExplorer-progressText';
    this.node.replaceChildren(text, this.cancelSlot);
    this.node.setAttribute('role', 'status');
    this.node.dataset.phase = phase;
    const tick = (): void => {
      const elapsed = Math.max(0, Date.now() / 1000 - started);
      const cancelling = this.cancelling ? ': cancelling…' : '';
      text.textContent = `${phase} ${target}… ${elapsed.toFixed(0)} s (started ${clock})${cancelling}`;
    };
    tick();
    this.timer = window.setInterval(tick, 1000);
    this.showCancel();
  }

  protected onAfterAttach(): void {
    this.showCancel(); // a first render may come before the output is in its notebook
  }

  /** The cancel button, when this output's kernel can be reached. */
  private showCancel(): void {
    const interrupt = this.isAttached ? interruptFor(this.node) : null;
    if (interrupt === null) {
      this.cancelSlot.replaceChildren();
      return;
    }
    const cancel = button(
      'cancel',
      () => {
        this.cancelling = true;
        cancel.disabled = true;
        interrupt().catch(err => {
          console.warn('jupyter-tracejit: could not interrupt the kernel', err);
          this.cancelling = false;
          cancel.disabled = false;
        });
      },
      {
        class: 'jp-TraceExplorer-button jp-TraceExplorer-cancel',
        title: 'stop this trace (interrupts the kernel); the variables keep what they held'
      }
    );
    cancel.disabled = this.cancelling;
    this.cancelSlot.replaceChildren(cancel);
  }

  private stop(): void {
    if (this.timer !== null) {
      window.clearInterval(this.timer);
      this.timer = null;
    }
  }

  dispose(): void {
    this.stop();
    super.dispose();
  }
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE, PROGRESS_MIME_TYPE],
  // ahead of the ipywidgets renderer (-10), so a saved explorer still shows without its kernel
  defaultRank: -20,
  createRenderer: options =>
    options.mimeType === PROGRESS_MIME_TYPE
      ? new TraceProgressRenderer(options.mimeType)
      : new TraceRunRenderer(options)
};

const extension: IRenderMime.IExtension = {
  id: 'jupyter-tracejit:mime-renderer',
  description: 'Renders jupyter-tracejit runs (application/vnd.jupyter.tracejit+json), live or without a kernel.',
  rendererFactory,
  rank: -20,
  dataType: 'json'
};

export default extension;
