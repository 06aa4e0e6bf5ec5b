/**
 * JupyterLab entry point: registers the `jupyter-tracejit` ipywidgets module, opens `.pt` / `.pt2` files in the
 * trace explorer (archive/plugin.ts), and tells the `%trace` placeholder (mime.ts) how to reach the kernel of the
 * notebook it is in, for its cancel button.
 *
 * The MIME renderer for saved runs is the separate `mimeExtension` entry (mime.ts), as JupyterLab wants.
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IJupyterWidgetRegistry } from '@jupyter-widgets/base';

import { setKernelFinder, shellKernelFinder } from './kernelLink';
import { archivePlugin } from './archive/plugin';
import { MODULE_NAME, MODULE_VERSION } from './version';

const widgetPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-tracejit:widget',
  description: 'The jupyter-tracejit trace explorer widget.',
  requires: [IJupyterWidgetRegistry],
  autoStart: true,
  activate: (_app: JupyterFrontEnd, registry: IJupyterWidgetRegistry): void => {
    // the first graph would otherwise wait ~0.3 s for the layout worker and Graphviz's WASM to load
    const idle = (window as { requestIdleCallback?: (cb: () => void) => void }).requestIdleCallback;
    const warm = (): void => void import('./graph/layout').then(m => m.warmUpLayout());
    if (idle) {
      idle(warm);
    } else {
      setTimeout(warm, 2000);
    }
    registry.registerWidget({
      name: MODULE_NAME,
      version: MODULE_VERSION,
      // loaded on first use: the widget code stays out of JupyterLab's startup
      exports: async () => {
        const widget = await import('./widget');
        return {
          TraceExplorerModel: widget.TraceExplorerModel,
          TraceExplorerView: widget.TraceExplorerView
        };
      }
    });
  }
};

const kernelLinkPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-tracejit:kernel-link',
  description: "Lets the %trace placeholder interrupt its notebook's kernel (its cancel button).",
  autoStart: true,
  activate: (app: JupyterFrontEnd): void => {
    setKernelFinder(shellKernelFinder(app.shell));
  }
};

const plugins: JupyterFrontEndPlugin<unknown>[] = [widgetPlugin, archivePlugin, kernelLinkPlugin];
export default plugins;
