/**
 * The line under the header of a live export with dynamic dims: its dynamic_shapes as the `--dynamic` flags to
 * paste into `%export` or `tracejit export` (the run on screen's, re-exports from the Dims tab included), with a
 * copy button. Hidden for every other run.
 */

import { append, clear, h } from '../../state/dom';
import type { ExplorerContext } from '../../state/context';
import { StatePanel } from '../../state/panels';
import type { PanelView } from '../../state/panels';
import { flagsLine } from './DimsPanel';

export class DimsBanner extends StatePanel {
  constructor(ctx: ExplorerContext) {
    super(ctx, h('div', { class: 'jp-TraceExplorer-dimsBanner' }), ['dims']);
    this.render();
  }

  render(): void {
    clear(this.element);
    const dims = this.ctx.host.readOnly ? null : this.ctx.host.get('dims');
    this.element.hidden = !dims?.specs.length;
    if (dims?.specs.length) {
      append(this.element, flagsLine('as %export flags: ', dims.specs, 'banner'));
    }
  }
}

/** The banner as a back end declares it (backends/export/index.ts). */
export const dimsBannerOf = (ctx: ExplorerContext): PanelView => new DimsBanner(ctx);
