/**
 * The line under the header of a refused export that says its draft is available and what it adds, with a button
 * that asks the kernel for it (`{"type": "draft"}`: the options bar then counts "draft-exporting… 3.1 s" with its
 * cancel); then that it runs, that it ran (the draft's graph and report are the run's now) or that it failed.
 * Hidden for every other run.
 */

import { append, button, clear, h } from '../../state/dom';
import type { ExplorerContext } from '../../state/context';
import { StatePanel } from '../../state/panels';
import type { PanelView } from '../../state/panels';
import { draftBanner } from './draftOffer';
import { exportRecords } from './exportReport';

export class DraftBanner extends StatePanel {
  constructor(ctx: ExplorerContext) {
    super(ctx, h('div', { class: 'jp-TraceExplorer-draftOffer', role: 'region', 'aria-label': 'export draft' }), [
      'run',
      'status',
      'phase',
      'live'
    ]);
    this.render();
  }

  render(): void {
    clear(this.element);
    const host = this.ctx.host;
    const model = draftBanner(exportRecords(this.ctx.run?.raw), {
      live: host.get('live') && !host.readOnly,
      status: host.get('status'),
      phase: host.get('phase')
    });
    this.element.hidden = model === null;
    if (!model) {
      return;
    }
    this.element.dataset.state = model.state;
    const action = model.button;
    append(
      this.element,
      h('span', { class: 'jp-TraceExplorer-draftOfferText' }, model.headline, model.adds.length ? ':' : ''),
      action
        ? button(action.label, () => this.ctx.host.send({ type: 'draft' }), {
            class: 'jp-TraceExplorer-button jp-mod-accept',
            'data-action': 'draft',
            title: action.title,
            disabled: !action.enabled
          })
        : null,
      model.adds.length
        ? h('ul', { class: 'jp-TraceExplorer-draftAdds' }, ...model.adds.map(a => h('li', {}, a)))
        : null
    );
  }
}

/** The banner as a back end declares it (backends/export/index.ts). */
export const draftBannerOf = (ctx: ExplorerContext): PanelView => new DraftBanner(ctx);
