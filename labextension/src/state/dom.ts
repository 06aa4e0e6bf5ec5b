/**
 * Small DOM helpers. Every string from a run (names, messages, source lines) is user data: it only
 * ever reaches the page as a text node (`textContent`), never as markup.
 */

import { locationLabel } from '../model/location';
import type { TraceRunModel } from '../model/run';

export type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) {
      continue;
    }
    if (name === 'class') {
      el.className = String(value);
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) {
      continue;
    }
    parent.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  }
}

/**
 * The advice texts (the kernel's ADVICE and hints) mark code with backticks, as the CLI and the HTML report
 * show it: here each `span` becomes a <code> element, built from text nodes like everything else.
 */
export function withCode(text: string): Child[] {
  return text.split(/(`[^`\n]+`)/).map((part, i) => (i % 2 === 1 ? h('code', {}, part.slice(1, -1)) : part));
}

/** The fix (the core's advice, a finding's hint) as every view writes it, where there is one. */
export function fixHint(advice: string | null | undefined): HTMLElement | null {
  return advice ? h('p', { class: 'jp-TraceExplorer-hint' }, h('strong', {}, 'Fix: '), ...withCode(advice)) : null;
}

export function clear(el: Element): void {
  while (el.firstChild) {
    el.removeChild(el.firstChild);
  }
}

/** A button that calls `onClick`, keyboard reachable like every button. */
export function button(
  label: string,
  onClick: () => void,
  attrs: Record<string, string | boolean | undefined> = {}
): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'jp-TraceExplorer-button', ...attrs }, label);
  b.addEventListener('click', e => {
    e.preventDefault();
    onClick();
  });
  return b;
}

/**
 * `element` acts as a button: `activate` on a click, and on Enter or Space while it has the focus itself (keys on a
 * link inside it are the link's).
 */
export function onActivate(element: HTMLElement, activate: () => void): void {
  element.addEventListener('click', activate);
  element.addEventListener('keydown', e => {
    if (e.target === element && (e.key === 'Enter' || e.key === ' ')) {
      e.preventDefault();
      activate();
    }
  });
}

/** A section of a panel: its heading, then what it shows. */
export function section(heading: string, ...children: Child[]): HTMLElement {
  return h('div', { class: 'jp-TraceExplorer-section' }, h('h4', {}, heading), ...children);
}

/** What a click on a card (or Enter or Space on it) does, and its title saying so; `active`: it is what is shown. */
export interface CardAction {
  title: string;
  run(): void;
  active?: boolean;
}

/**
 * A card of a tab's list: an item whose first line is its head (what it is, where, how often), then its body. With
 * an action it acts as a button (`jp-mod-clickable`, keyboard reachable, `jp-mod-active` while it is shown).
 */
export function card(
  attrs: { class: string } & Record<string, string>,
  head: Child[],
  body: Child[] = [],
  action: CardAction | null = null
): HTMLLIElement {
  const item = h(
    'li',
    {
      ...attrs,
      class: `${attrs.class}${action ? ' jp-mod-clickable' : ''}${action?.active ? ' jp-mod-active' : ''}`,
      tabindex: action ? 0 : undefined,
      role: action ? 'button' : undefined,
      title: action?.title
    },
    h('div', { class: 'jp-TraceExplorer-warningHead' }, ...head),
    ...body
  );
  if (action) {
    onActivate(item, () => action.run());
  }
  return item;
}

/**
 * A place in the source as every view shows it: `cell [9], line 7` in notebook code, `model.py:12` elsewhere
 * (`run.locationLabel`); the full path goes into the title tooltip. With `open` it is a link (the explorer's
 * `ctx.showPlace`: select that line's nodes).
 */
export function location(
  file: string,
  line: number,
  run: TraceRunModel | null,
  open?: (file: string, line: number) => void
): HTMLElement {
  const label = run ? run.locationLabel(file, line) : locationLabel(file, line, {});
  if (!open || !file) {
    return h('span', { class: 'jp-TraceExplorer-loc', title: `${file}:${line}` }, label);
  }
  // a link: selects the nodes recorded at that line (clicks on it do not also activate the card around it)
  const link = h(
    'button',
    { type: 'button', class: 'jp-TraceExplorer-loc jp-TraceExplorer-link', title: `${file}:${line}: show its nodes` },
    label
  );
  link.addEventListener('click', e => {
    e.preventDefault();
    e.stopPropagation();
    open(file, line);
  });
  return link;
}

export function formatNumber(x: number | null): string {
  if (x === null) {
    return '–';
  }
  if (!Number.isFinite(x)) {
    return String(x);
  }
  return Math.abs(x) >= 1e4 || (Math.abs(x) < 1e-3 && x !== 0) ? x.toExponential(2) : String(Number(x.toPrecision(4)));
}

/** A number as `formatNumber` writes it, kept on one line: a narrow sidebar broke `1.00e-5` at its minus sign. */
export function numberText(x: number | null): HTMLElement {
  return h('span', { class: 'jp-TraceExplorer-number' }, formatNumber(x));
}
