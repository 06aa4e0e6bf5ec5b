/**
 * `.pt` and `.pt2` files open in the trace explorer: their file types, and the "Trace explorer" document
 * (a read-only view, default for both; "Open With" offers it too). See view.ts for what it shows.
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ABCWidgetFactory, DocumentRegistry, DocumentWidget, TextModelFactory } from '@jupyterlab/docregistry';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { Contents } from '@jupyterlab/services';
import { refreshIcon, ToolbarButton } from '@jupyterlab/ui-components';

import { savedFileTypes } from '../model/backends';
import { fetchRun } from './fetch';
import { ArchiveView, LoadRun } from './view';

export const FACTORY = 'Trace explorer';
const MODEL = 'jupyter-tracejit-archive';
/** Each back end's saved files (its registry row's `files`): `.pt`, `.pt2`. */
const FILE_TYPES = savedFileTypes();

/**
 * The document model of an archive: it loads nothing (the browser never reads the file, the server does), so a
 * large archive is not sent to the page (a null file format: JupyterLab asks the contents API for no content).
 */
class ArchiveModelFactory extends TextModelFactory {
  get name(): string {
    return MODEL;
  }
  get fileFormat(): Contents.FileFormat {
    return null;
  }
}

type ArchiveDocument = DocumentWidget<ArchiveView, DocumentRegistry.IModel>;

class ArchiveViewFactory extends ABCWidgetFactory<ArchiveDocument> {
  constructor(
    options: DocumentRegistry.IWidgetFactoryOptions<ArchiveDocument>,
    private readonly rendermime: IRenderMimeRegistry,
    private readonly load: LoadRun
  ) {
    super(options);
  }

  protected createNewWidget(context: DocumentRegistry.IContext<DocumentRegistry.IModel>): ArchiveDocument {
    const content = new ArchiveView(context.localPath, this.rendermime, this.load);
    const widget = new DocumentWidget({ content, context });
    widget.toolbar.addItem(
      'reload',
      new ToolbarButton({
        icon: refreshIcon,
        tooltip: 'Load the file again (after it changed on disk)',
        onClick: () => void content.reload()
      })
    );
    // the file's path is all the view needs: it does not wait for the document's (empty) model
    void content.reload();
    return widget;
  }
}

export const archivePlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-tracejit:archive-viewer',
  description: 'Opens TorchScript (.pt) and torch.export (.pt2) archives in the read-only trace explorer.',
  requires: [IRenderMimeRegistry],
  autoStart: true,
  activate: (app: JupyterFrontEnd, rendermime: IRenderMimeRegistry): void => {
    const settings = app.serviceManager.serverSettings;
    for (const fileType of FILE_TYPES) {
      app.docRegistry.addFileType({ ...fileType, mimeTypes: ['application/octet-stream'], fileFormat: 'base64' });
    }
    app.docRegistry.addModelFactory(new ArchiveModelFactory());
    app.docRegistry.addWidgetFactory(
      new ArchiveViewFactory(
        {
          name: FACTORY,
          label: FACTORY,
          modelName: MODEL,
          fileTypes: FILE_TYPES.map(t => t.name),
          defaultFor: FILE_TYPES.map(t => t.name),
          readOnly: true
        },
        rendermime,
        (path, signal, imports) => fetchRun(path, settings, signal, imports)
      )
    );
  }
};
