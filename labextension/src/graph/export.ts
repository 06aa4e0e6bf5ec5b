/**
 * The graph view's downloads: the SVG of what is on screen, the DOT of the whole graph (every group
 * expanded), and the run as JSON. Files are named `<target>.<method>.<ext>`.
 */

import { visibleDot } from '../model/dot';
import { ExplorerContext } from '../state/context';

/** Save `text` as a file through a temporary link (no server round trip: the data is already in the page). */
function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** `<target>.<method>`, with anything unsafe in a file name replaced. */
function fileStem(ctx: ExplorerContext): string {
  const run = ctx.run;
  return `${(run?.target.name ?? 'trace').replace(/[^A-Za-z0-9_.-]+/g, '_')}.${ctx.method}`;
}

/** The picture as drawn (current groups, highlights and zoom). */
export function exportSvg(ctx: ExplorerContext, svg: SVGSVGElement | null): void {
  if (svg) {
    download(`${fileStem(ctx)}.svg`, 'image/svg+xml', new XMLSerializer().serializeToString(svg));
  }
}

/** The whole graph with every group expanded; constants folded as in the view. */
export function exportDot(ctx: ExplorerContext, fold: boolean): void {
  const graph = ctx.graph;
  const tree = ctx.groups();
  if (graph && tree) {
    download(
      `${fileStem(ctx)}.dot`,
      'text/vnd.graphviz',
      visibleDot(graph, tree, { expanded: new Set(tree.groups.keys()), fold }).dot
    );
  }
}

/** The run exactly as the kernel sent it (what `TraceRun.from_json` reads back). */
export function exportJson(ctx: ExplorerContext): void {
  const raw = ctx.host.get('run');
  if (raw) {
    download(`${fileStem(ctx)}.json`, 'application/json', JSON.stringify(raw));
  }
}
