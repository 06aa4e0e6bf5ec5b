/**
 * What the graph's colours and borders mean. Each swatch is a tiny drawing with the same classes the Graphviz
 * drawing carries (`g.node.root`, `g.cluster`, ...) inside a `.jp-TraceExplorer-svg`, so the graph's own CSS
 * rules paint it: the legend cannot drift from the picture, in any theme.
 */

import { append, h } from '../state/dom';
import { CURSOR_CLASS } from './keyboard';
import { decorateRepeat } from './repeats';

const SVG_NS = 'http://www.w3.org/2000/svg';
const SWATCH_W = 38;
const SWATCH_H = 18;

type SwatchShape = 'box' | 'ellipse' | 'double' | 'cluster' | 'repeat';

/** [classes on the swatch's `g`, its shape, what it means] */
export const LEGEND: [string, SwatchShape, string][] = [
  ['node op-op', 'box', 'an op: click (or Enter) to inspect'],
  ['node input', 'ellipse', 'a graph input or output'],
  ['node scope-collapsed', 'double', 'a module folded into one box: click to open'],
  ['node scope-collapsed scope-repeat', 'repeat', 'N modules of one structure folded into one (×N): click to open'],
  ['cluster scope', 'cluster', 'an open module: click its frame to fold it'],
  ['node op-constant', 'box', "a constant or plumbing (shown when 'fold constants' is off)"],
  ['node warning', 'box', 'a tracer warning or a finding points here'],
  ['node root', 'box', 'divergence root: the check trace differs from here'],
  ['node downstream', 'box', 'downstream of a divergence root'],
  ['node current', 'box', 'the divergence the stepper is on'],
  ['node unmatched', 'box', 'only in this trace or only in the check trace (Check tab)'],
  ['node selected', 'box', 'selected: the inspector shows it'],
  ['node search-hit', 'box', 'a search match'],
  [`node ${CURSOR_CLASS}`, 'box', 'the keyboard cursor'],
  ['node scope-collapsed has-root', 'double', 'a folded box takes the mark of a node inside it']
];

function svgEl(tag: string, attrs: Record<string, string | number>): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    el.setAttribute(k, String(v));
  }
  return el;
}

function roundedBox(x: number, y: number, w: number, hgt: number): SVGElement {
  const r = 3;
  return svgEl('path', {
    d:
      `M${x + r},${y} H${x + w - r} Q${x + w},${y} ${x + w},${y + r} V${y + hgt - r} ` +
      `Q${x + w},${y + hgt} ${x + w - r},${y + hgt} H${x + r} Q${x},${y + hgt} ${x},${y + hgt - r} ` +
      `V${y + r} Q${x},${y} ${x + r},${y} Z`
  });
}

function swatch(classes: string, shape: SwatchShape): SVGSVGElement {
  const svg = svgEl('svg', {
    class: 'jp-TraceExplorer-svg jp-TraceExplorer-swatch',
    width: SWATCH_W,
    height: SWATCH_H,
    viewBox: `0 0 ${SWATCH_W} ${SWATCH_H}`,
    'aria-hidden': 'true'
  }) as SVGSVGElement;
  const g = svgEl('g', { class: classes });
  if (shape === 'ellipse') {
    g.appendChild(svgEl('ellipse', { cx: SWATCH_W / 2, cy: SWATCH_H / 2, rx: SWATCH_W / 2 - 2, ry: SWATCH_H / 2 - 2 }));
  } else {
    if (shape === 'double' || shape === 'repeat') {
      g.appendChild(roundedBox(1, 1, SWATCH_W - 2, SWATCH_H - 2));
    }
    const inset = shape === 'double' || shape === 'repeat' ? 3.5 : 1.5;
    g.appendChild(roundedBox(inset, inset, SWATCH_W - 2 * inset, SWATCH_H - 2 * inset));
  }
  if (shape !== 'cluster') {
    const text = svgEl('text', {
      x: SWATCH_W / 2,
      y: SWATCH_H / 2 + 3,
      'text-anchor': 'middle',
      'font-size': 9
    });
    text.textContent = shape === 'ellipse' ? 'x' : 'op';
    g.appendChild(text);
  }
  svg.appendChild(g);
  if (shape === 'repeat') {
    decorateRepeat(g, 3); // the stack and the badge the picture draws
  }
  return svg;
}

/** The legend toggle for the toolbar and the panel it shows over the canvas. */
export class Legend {
  readonly button: HTMLButtonElement;
  readonly panel: HTMLElement;
  /** Called before the panel opens (the graph view places it over the canvas). */
  onOpen: (() => void) | null = null;

  constructor() {
    // the entries are drawn when first opened: most explorers never show them, and the closed graph view holds
    // no drawing but its picture
    this.panel = h('div', {
      class: 'jp-TraceExplorer-legend',
      hidden: true,
      role: 'region',
      'aria-label': 'graph legend'
    });
    this.button = h(
      'button',
      {
        type: 'button',
        class: 'jp-TraceExplorer-button jp-TraceExplorer-legendButton',
        'aria-expanded': 'false',
        title: 'what the colours and borders mean'
      },
      'legend'
    ) as HTMLButtonElement;
    this.button.addEventListener('click', () => this.toggle());
    this.panel.addEventListener('keydown', e => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        this.toggle(false);
        this.button.focus();
      }
    });
  }

  toggle(open = this.panel.hidden): void {
    if (open) {
      this.onOpen?.();
      if (!this.panel.firstChild) {
        append(
          this.panel,
          h('div', { class: 'jp-TraceExplorer-legendTitle' }, 'What the colours mean'),
          h(
            'ul',
            {},
            ...LEGEND.map(([classes, shape, text]) =>
              h('li', { 'data-classes': classes }, swatch(classes, shape), h('span', {}, text))
            )
          )
        );
      }
    }
    this.panel.hidden = !open;
    this.button.setAttribute('aria-expanded', String(open));
  }
}
