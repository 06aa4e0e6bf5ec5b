/** The ipywidgets model and view of `jupyter_tracejit.widgets.TraceExplorer`. */
import { DOMWidgetModel, DOMWidgetView, IBackboneModelOptions, ISerializers } from '@jupyter-widgets/base';

import { Explorer } from './explorer/Explorer';
import { mountLive, registerLiveModel } from './explorer/mount';
import { TRAIT_DEFAULTS } from './model/protocol';
import { MODULE_NAME, MODULE_SEMVER } from './version';

export class TraceExplorerModel extends DOMWidgetModel {
  static model_name = 'TraceExplorerModel';
  static model_module = MODULE_NAME;
  static model_module_version = MODULE_SEMVER;
  static view_name = 'TraceExplorerView';
  static view_module = MODULE_NAME;
  static view_module_version = MODULE_SEMVER;
  static serializers: ISerializers = { ...DOMWidgetModel.serializers };

  defaults(): Backbone.ObjectHash {
    return {
      ...super.defaults(),
      _model_name: TraceExplorerModel.model_name,
      _model_module: TraceExplorerModel.model_module,
      _model_module_version: TraceExplorerModel.model_module_version,
      _view_name: TraceExplorerModel.view_name,
      _view_module: TraceExplorerModel.view_module,
      _view_module_version: TraceExplorerModel.view_module_version,
      // every synced trait's default, from the contract (explorer.schema.json)
      ...structuredClone(TRAIT_DEFAULTS)
    };
  }

  initialize(attributes: Backbone.ObjectHash, options: IBackboneModelOptions): void {
    super.initialize(attributes, options);
    // the MIME renderer of the same output looks the live model up here (see explorer/mount.ts)
    registerLiveModel(this.model_id, this);
    this.once('comm:close destroy', () => registerLiveModel(this.model_id, null));
  }
}

export class TraceExplorerView extends DOMWidgetView {
  private explorer: Explorer | null = null;

  render(): void {
    this.el.classList.add('jp-TraceExplorer');
    this.explorer = mountLive(this.el, this.model);
  }

  /** Settles when the graph on screen is laid out (tests and benchmarks wait on it). */
  get rendered(): Promise<void> {
    return this.explorer?.graph.rendered ?? Promise.resolve();
  }

  remove(): this {
    this.explorer?.dispose();
    this.explorer = null;
    return super.remove();
  }
}
