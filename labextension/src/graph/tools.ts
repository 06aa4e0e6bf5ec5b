/**
 * The graph view's tools beside pan and zoom: the minimap, the keyboard cursor, the colour legend, group labels
 * that stay in view, the look of repeat groups, and the picture export menu. (Node tooltips come with the DOT:
 * model/dot.ts names the cell's line as every view does.) The graph view makes one and places its toolbar items;
 * the rest watch the canvas for new pictures, so the view needs no other hook.
 */

import { ExplorerContext } from '../state/context';
import { pictureMenu } from './export';
import { domId } from '../model/dotText';
import { GroupLabels } from './groupLabels';
import { GraphKeyboard } from './keyboard';
import { Legend } from './legend';
import { Minimap } from './minimap';
import { decorateRepeats } from './repeats';
import { Viewport } from './viewport';

export interface GraphToolsHost {
  readonly viewport: Viewport;
  /** open or fold a module group (what a click on its box does) */
  toggleGroup(groupId: string): void;
  /** what a click on an op does after selecting it (the explorer shows the inspector) */
  inspect(nodeId: number): void;
}

export class GraphTools {
  readonly legend = new Legend();
  readonly minimap: Minimap;
  /** for the toolbar: the legend toggle and the picture menu */
  readonly toolbarItems: HTMLElement[];
  private keyboard: GraphKeyboard | null = null;

  constructor(
    private readonly ctx: ExplorerContext,
    private readonly host: GraphToolsHost
  ) {
    const viewport = host.viewport;
    this.minimap = new Minimap(
      viewport.element,
      (x, y) => viewport.panTo(x, y),
      () => viewport.canvasSize
    );
    this.toolbarItems = [pictureMenu(ctx, () => viewport.svg), this.legend.button, this.minimap.button];
    new GroupLabels(viewport);
    // each new picture (it comes with a view) gets its repeat groups' stack and badge
    let decorated: SVGSVGElement | null = null;
    viewport.onViewChange(() => {
      const svg = viewport.svg;
      if (svg && svg !== decorated) {
        decorated = svg;
        decorateRepeats(svg, this.repeatCounts());
      }
    });
  }

  /** Drawn id -> how many blocks a repeat group folds, for the method on screen. */
  private repeatCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const [id, g] of this.ctx.groups()?.groups ?? []) {
      if (g.repeat) {
        counts.set(`scope-${domId(id)}`, g.repeat);
        counts.set(`cluster-${domId(id)}`, g.repeat);
      }
    }
    return counts;
  }

  /** Put the overlays on the graph element (which holds the toolbar and the canvas) and listen for keys. */
  attach(graphElement: HTMLElement): void {
    graphElement.classList.add('jp-TraceExplorer-hasTools');
    graphElement.append(this.minimap.element, this.legend.panel);
    const viewport = this.host.viewport;
    // over the canvas's top left, below the toolbar however many rows it wraps to
    this.legend.onOpen = () => (this.legend.panel.style.top = `${viewport.element.offsetTop + 6}px`);
    this.keyboard = new GraphKeyboard(this.ctx, {
      graphElement,
      canvas: viewport.element,
      picture: () => viewport.svg,
      centerOn: el => viewport.centerOn(el),
      inspect: id => this.host.inspect(id),
      toggleGroup: id => this.host.toggleGroup(id)
    });
  }

  dispose(): void {
    this.keyboard?.dispose();
  }
}
