/**
 * The graph view's downloads: pictures (SVG or PNG, of the view on screen or of the whole laid-out graph, with
 * the theme's colours written into the file), the DOT of the whole graph (every group expanded), and the run as
 * JSON. Files are named `<target>.<method>.<ext>`.
 *
 * The drawing on screen takes its colours from JupyterLab's CSS variables, which a file opened elsewhere does not
 * have: the exported copy carries each shape's and text's computed fill, stroke and font instead, and the canvas
 * background as a rectangle, so it looks as it did in the explorer, in the theme it was exported from.
 */

import { visibleDot } from '../model/dot';
import { translation } from '../model/geometry';
import { ExplorerContext } from '../state/context';
import { h } from '../state/dom';
import { PINNED_LAYER } from './groupLabels';

const SVG_NS = 'http://www.w3.org/2000/svg';
/** Painted properties written into exported shapes and texts (their computed values: no `var(--…)` left). */
const SHAPE_PROPERTIES = [
  'fill',
  'fill-opacity',
  'stroke',
  'stroke-width',
  'stroke-dasharray',
  'stroke-opacity',
  'opacity'
];
const TEXT_PROPERTIES = [...SHAPE_PROPERTIES, 'font-family', 'font-size', 'font-weight', 'font-style'];
const PAINTED = new Set(['path', 'polygon', 'polyline', 'ellipse', 'circle', 'rect', 'line', 'text']);
/** PNG pixels per layout unit, and Chromium's canvas limits (per side, and in all). */
const PNG_SCALE = 2;
const MAX_CANVAS_SIDE = 16384;
const MAX_CANVAS_PIXELS = 128e6;

export type PictureFormat = 'svg' | 'png';
/** The part on screen, or everything laid out (the groups open as they are now). */
export type PictureExtent = 'view' | 'whole';

/** Save `data` as a file through a temporary link (no server round trip: the data is already in the page). */
function download(name: string, type: string, data: string | Blob): void {
  const url = URL.createObjectURL(typeof data === 'string' ? new Blob([data], { type }) : data);
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

/** The area the whole drawing covers, in the picture's user units (Graphviz's own viewBox, before any pan). */
function wholeBox(svg: SVGSVGElement): [number, number, number, number] {
  const graph = svg.querySelector<SVGGraphicsElement>('g.graph');
  if (!graph) {
    const vb = svg.viewBox.baseVal;
    return [vb.x, vb.y, vb.width, vb.height];
  }
  const b = graph.getBBox();
  const [tx, ty] = translation(graph.getAttribute('transform'));
  return [b.x + tx, b.y + ty, b.width, b.height];
}

/** A class chain that decides an element's computed paint (its own and its ancestors' classes). */
function styleKey(el: Element, root: Element): string {
  const parts: string[] = [];
  for (let e: Element | null = el; e && e !== root; e = e.parentElement) {
    parts.push(`${e.localName}.${e.getAttribute('class') ?? ''}`);
  }
  return parts.join('<');
}

/**
 * A copy of the drawing that stands alone: computed paint and fonts inlined on every shape and text, the canvas
 * background behind it, sized to `extent`. The copy is detached from the page.
 */
export function standalonePicture(svg: SVGSVGElement, extent: PictureExtent): SVGSVGElement {
  const copy = svg.cloneNode(true) as SVGSVGElement;
  const originals = Array.from(svg.querySelectorAll('*'));
  const copies = Array.from(copy.querySelectorAll('*'));
  const cache = new Map<string, string>();
  originals.forEach((el, i) => {
    const tag = el.localName;
    if (!PAINTED.has(tag)) {
      return;
    }
    const key = styleKey(el, svg);
    let style = cache.get(key);
    if (style === undefined) {
      const computed = getComputedStyle(el);
      style = (tag === 'text' ? TEXT_PROPERTIES : SHAPE_PROPERTIES)
        .map(p => [p, computed.getPropertyValue(p)])
        .filter(([, v]) => v !== '')
        .map(([p, v]) => `${p}: ${v}`)
        .join('; ');
      cache.set(key, style);
    }
    copies[i].setAttribute('style', style);
  });
  let [x, y, w, hgt] = wholeBox(svg);
  let width = w;
  let height = hgt;
  if (extent === 'whole') {
    // group labels slid or pinned into the view (graph/groupLabels.ts) go back where Graphviz placed them
    for (const label of Array.from(copy.querySelectorAll('[data-slid]'))) {
      label.removeAttribute('transform');
      label.removeAttribute('data-slid');
    }
    copy.querySelector(`.${PINNED_LAYER}`)?.remove();
    for (const label of Array.from(copy.querySelectorAll('g.cluster text[visibility="hidden"]'))) {
      label.removeAttribute('visibility');
    }
  } else {
    const vb = svg.viewBox.baseVal;
    [x, y, w, hgt] = [vb.x, vb.y, vb.width, vb.height];
    width = svg.clientWidth || w;
    height = svg.clientHeight || hgt;
  }
  copy.setAttribute('viewBox', `${x} ${y} ${w} ${hgt}`);
  copy.setAttribute('width', String(Math.round(width)));
  copy.setAttribute('height', String(Math.round(height)));
  copy.removeAttribute('class');
  const background = document.createElementNS(SVG_NS, 'rect');
  for (const [k, v] of [
    ['x', x],
    ['y', y],
    ['width', w],
    ['height', hgt]
  ] as const) {
    background.setAttribute(k, String(v));
  }
  const canvas = svg.parentElement ?? svg;
  background.setAttribute('style', `fill: ${getComputedStyle(canvas).backgroundColor}`);
  copy.insertBefore(background, copy.firstChild);
  return copy;
}

/** The standalone picture as SVG text. */
export function pictureSvgText(svg: SVGSVGElement, extent: PictureExtent): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(standalonePicture(svg, extent))
  );
}

/** The standalone picture as a PNG, at PNG_SCALE pixels per unit (less where Chromium's canvas limits say so). */
export async function picturePng(svg: SVGSVGElement, extent: PictureExtent): Promise<Blob> {
  const copy = standalonePicture(svg, extent);
  const width = Number(copy.getAttribute('width'));
  const height = Number(copy.getAttribute('height'));
  const scale = Math.min(
    PNG_SCALE,
    MAX_CANVAS_SIDE / Math.max(width, 1),
    MAX_CANVAS_SIDE / Math.max(height, 1),
    Math.sqrt(MAX_CANVAS_PIXELS / Math.max(width * height, 1))
  );
  const url = URL.createObjectURL(new Blob([new XMLSerializer().serializeToString(copy)], { type: 'image/svg+xml' }));
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(width * scale));
    canvas.height = Math.max(1, Math.round(height * scale));
    canvas.getContext('2d')!.drawImage(image, 0, 0, canvas.width, canvas.height);
    return await new Promise<Blob>((resolve, reject) =>
      canvas.toBlob(b => (b ? resolve(b) : reject(new Error('the PNG could not be made'))), 'image/png')
    );
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** Download the picture on screen as `format`, of the view or of the whole graph. */
export async function exportPicture(
  ctx: ExplorerContext,
  svg: SVGSVGElement | null,
  format: PictureFormat,
  extent: PictureExtent
): Promise<void> {
  if (!svg) {
    return;
  }
  const name = `${fileStem(ctx)}${extent === 'view' ? '.view' : ''}.${format}`;
  if (format === 'svg') {
    download(name, 'image/svg+xml', pictureSvgText(svg, extent));
  } else {
    download(name, 'image/png', await picturePng(svg, extent));
  }
}

/** The toolbar's picture menu: SVG or PNG, of the view or of the whole graph. */
export function pictureMenu(ctx: ExplorerContext, picture: () => SVGSVGElement | null): HTMLSelectElement {
  const choices: [string, PictureFormat, PictureExtent][] = [
    ['SVG of the view', 'svg', 'view'],
    ['SVG of the whole graph', 'svg', 'whole'],
    ['PNG of the view', 'png', 'view'],
    ['PNG of the whole graph', 'png', 'whole']
  ];
  const select = h(
    'select',
    {
      class: 'jp-TraceExplorer-pictureMenu',
      'aria-label': 'export picture',
      title: 'download the picture (SVG or PNG, view or whole graph) in the colours on screen'
    },
    h('option', { value: '' }, 'image…'),
    ...choices.map(([label, format, extent]) => h('option', { value: `${format}:${extent}` }, label))
  );
  select.addEventListener('change', () => {
    const [format, extent] = select.value.split(':') as [PictureFormat, PictureExtent];
    select.value = '';
    if (format) {
      exportPicture(ctx, picture(), format, extent).catch(err => console.warn('tracejit: export failed', err));
    }
  });
  return select;
}

/** The whole graph with every group expanded; constants folded as in the view. */
export function exportDot(ctx: ExplorerContext, fold: boolean): void {
  const graph = ctx.graph;
  const tree = ctx.groups();
  if (graph && tree) {
    download(
      `${fileStem(ctx)}.dot`,
      'text/vnd.graphviz',
      visibleDot(graph, tree, { expanded: new Set(tree.groups.keys()), fold, fileNames: ctx.run?.fileNames }).dot
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
