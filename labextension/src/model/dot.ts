/**
 * The visible part of a graph as Graphviz DOT, with stable ids and CSS classes.
 *
 * Conventions shared with jupyter_tracejit/core/dot.py: op nodes `n<id>`, graph inputs
 * `in<value id>`, outputs `out<i>`, collapsed groups `g<k>` (k: the group's stable index) with
 * `id="scope-<group id>"`, clusters `cluster_<k>`; every item has a `class` the stylesheet keys on
 * (`op-<role>`, `kind-<kind>`, plus highlight classes such as `selected`, `root`, `warning`).
 *
 * All text comes from user code (module names, debug names, string constants, source lines): it is
 * escaped so it can neither end a quoted string nor form a Graphviz escape (`\N`, `\G`, `\l`) or an
 * HTML entity, and control characters become spaces. No link attributes (`URL`, `href`) are emitted.
 */

import { basename, formatAttribute, NodeInfo, shapeText, TraceGraph, userFrame } from './graph';
import { GroupTree } from './groups';

export const MAX_LABEL_CHARS = 48;
export const MAX_TOOLTIP_CHARS = 160;
export const MAX_FOLDED_ITEMS = 3;
/** How a backslash of user text reads in tooltips: Graphviz expands escapes in tooltips twice. */
export const TOOLTIP_BACKSLASH = '\u29f5';

// eslint-disable-next-line no-control-regex -- matching control characters is the point: they are stripped from labels
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
const CLASS_BAD = /[^A-Za-z0-9_-]+/g;

export function truncate(text: string, limit: number): string {
  return text.length <= limit ? text : text.slice(0, Math.max(limit - 1, 0)) + '…';
}

/** One line of untrusted text as a literal fragment of a quoted DOT string. */
export function escapeText(text: string, limit = MAX_LABEL_CHARS, backslash = '\\\\'): string {
  return truncate(text.replace(CONTROL, ' '), limit)
    .replace(/&/g, '&amp;')
    .replace(/\\/g, backslash)
    .replace(/"/g, '\\"');
}

/** Lines of untrusted text as a quoted, centred multi-line DOT label. */
export function labelLines(lines: string[], limit = MAX_LABEL_CHARS): string {
  return '"' + lines.map(l => escapeText(l, limit)).join('\\n') + '"';
}

export function tooltipLines(lines: string[]): string {
  return '"' + lines.map(l => escapeText(l, MAX_TOOLTIP_CHARS, TOOLTIP_BACKSLASH)).join('&#10;') + '"';
}

export function cssToken(text: string): string {
  return text.replace(CLASS_BAD, '-').replace(/^-+|-+$/g, '') || 'x';
}

/** An id safe for DOT strings and DOM ids alike. */
export function domId(text: string): string {
  return text.replace(/[^A-Za-z0-9_.-]/g, ch => `-u${ch.codePointAt(0)!.toString(16)}-`);
}

export interface DotOptions {
  /** Fold constants, GetAttr and list plumbing into their consumers (default true). */
  fold?: boolean;
  /** Groups (module paths / bucket ids) that are open; everything else is drawn collapsed. */
  expanded: Set<string>;
  /** Extra CSS classes per node id (`selected`, `root`, `warning`, ...). */
  highlights?: Map<number, Set<string>>;
  showShapes?: boolean;
  rankdir?: 'TB' | 'LR';
}

export interface VisibleGraph {
  dot: string;
  /** node id -> the DOT name that represents it (itself, its fold target's, or its group box). */
  representative: Map<number, string>;
  /** DOT names of drawn op nodes and group boxes. */
  items: string[];
  /** Group ids drawn as boxes. */
  boxes: string[];
}

function attrText(attrs: Record<string, string>): string {
  return Object.entries(attrs)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

function quoted(text: string): string {
  return '"' + text.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';
}

/** What a folded input shows inside its consumer's label (`1`, `[-1, 2]`, `weight`). */
function foldedText(graph: TraceGraph, valueId: number, depth = 0): string | null {
  const p = graph.producer(valueId);
  if (!p || depth > 3) {
    return null;
  }
  if (p.kind === 'prim::Constant') {
    const v = p.attributes.value;
    if (v && typeof v === 'object' && 'tensor' in (v as object)) {
      const t = (v as { tensor: { preview?: unknown[]; shape?: number[] } }).tensor;
      return t.shape && t.shape.length === 0 && t.preview?.length
        ? `tensor(${formatAttribute(t.preview[0])})`
        : 'tensor';
    }
    return formatAttribute(v);
  }
  if (p.kind === 'prim::GetAttr') {
    return String(p.attributes.name ?? 'attr');
  }
  if (p.kind === 'prim::ListConstruct' || p.kind === 'prim::TupleConstruct') {
    const items = p.inputs.map(i => foldedText(graph, i, depth + 1));
    if (items.every(i => i !== null)) {
      return p.kind === 'prim::ListConstruct' ? `[${items.join(', ')}]` : `(${items.join(', ')})`;
    }
  }
  return null;
}

export function nodeLabel(graph: TraceGraph, node: NodeInfo, fold: boolean, showShapes: boolean): string[] {
  const lines = [node.kind.split('::').pop() ?? node.kind];
  if (showShapes && node.outputs.length) {
    lines.push(shapeText(graph.values[node.outputs[0]]));
  }
  if (fold) {
    const items: string[] = [];
    for (const v of node.inputs) {
      const p = graph.producer(v);
      if (p && p.role !== 'op' && p.kind !== 'prim::GetAttr') {
        const text = foldedText(graph, v);
        if (text !== null) {
          items.push(truncate(text, 24));
        }
      }
    }
    if (items.length) {
      const shown = items.slice(0, MAX_FOLDED_ITEMS);
      lines.push(shown.join(', ') + (items.length > MAX_FOLDED_ITEMS ? ', …' : ''));
    }
  }
  return lines;
}

export function nodeTooltip(graph: TraceGraph, node: NodeInfo): string[] {
  const lines = [node.kind];
  for (const v of node.outputs.slice(0, 4)) {
    lines.push(`%${graph.values[v].name} : ${shapeText(graph.values[v])}`);
  }
  if (node.scope) {
    lines.push(`scope: ${node.scope}`);
  }
  const f = userFrame(node.source);
  if (f) {
    lines.push(`${basename(f.file)}:${f.line}  ${f.code}`);
  }
  return lines;
}

/** Build the DOT of what is visible under `options`. Linear in the graph size. */
export function visibleDot(graph: TraceGraph, groups: GroupTree, options: DotOptions): VisibleGraph {
  const fold = options.fold ?? true;
  const showShapes = options.showShapes ?? true;
  const highlights = options.highlights ?? new Map<number, Set<string>>();
  const expanded = options.expanded;

  // 1. representative of every node: its collapsed group box, itself, or (folded) its target's
  const rep = new Map<number, string>();
  const boxClasses = new Map<string, Set<string>>();
  const drawnOps: NodeInfo[] = [];
  const boxOf = (nodeId: number): string | null => {
    const g = groups.collapsedAncestor(nodeId, expanded);
    return g === null ? null : `g${groups.index(g)}`;
  };
  for (const n of graph.nodes) {
    if (fold && n.role !== 'op') {
      continue;
    }
    const box = boxOf(n.id);
    if (box) {
      rep.set(n.id, box);
      const classes = highlights.get(n.id);
      if (classes) {
        let set = boxClasses.get(box);
        if (!set) {
          boxClasses.set(box, (set = new Set()));
        }
        classes.forEach(c => set!.add(`has-${c}`));
      }
    } else {
      rep.set(n.id, `n${n.id}`);
      drawnOps.push(n);
    }
  }
  if (fold) {
    const outputs = new Set(graph.outputs);
    for (const n of graph.nodes) {
      if (n.role === 'op') {
        continue;
      }
      if (graph.consumers(n).length === 0 && !n.outputs.some(v => outputs.has(v))) {
        continue; // dead plumbing (a GetAttr of a parameter-free submodule): nothing to show
      }
      const target = graph.foldTarget(n);
      if (target !== null && rep.has(target)) {
        rep.set(n.id, rep.get(target)!);
      } else {
        // unfoldable (e.g. a constant returned directly): draw it where it lives
        const box = boxOf(n.id);
        rep.set(n.id, box ?? `n${n.id}`);
        if (!box) {
          drawnOps.push(n);
        }
      }
    }
  }

  // 2. edges between representatives; folded nodes are looked through to their sources
  const edges = new Set<string>();
  const inputNames = new Map<number, string>();
  graph.inputs.forEach(v => inputNames.set(v, `in${v}`));
  const usedInputs = new Set<number>();
  const sourcesOf = (valueId: number, seen: Set<number>, out: string[]): void => {
    const p = graph.producer(valueId);
    if (!p) {
      if (inputNames.has(valueId)) {
        out.push(inputNames.get(valueId)!);
        usedInputs.add(valueId);
      }
      return;
    }
    if (fold && p.kind === 'prim::GetAttr') {
      return; // a parameter or submodule: shown in its consumer's label, not as an edge from `self`
    }
    if (fold && p.role !== 'op' && rep.get(p.id) !== `n${p.id}`) {
      if (seen.has(p.id)) {
        return;
      }
      seen.add(p.id);
      for (const v of p.inputs) {
        sourcesOf(v, seen, out);
      }
      return;
    }
    out.push(rep.get(p.id)!);
  };
  const consumersDrawn = fold ? graph.nodes.filter(n => rep.get(n.id) === `n${n.id}` || n.role === 'op') : graph.nodes;
  for (const n of consumersDrawn) {
    const dst = rep.get(n.id)!;
    const srcs: string[] = [];
    for (const v of n.inputs) {
      sourcesOf(v, new Set(), srcs);
    }
    for (const src of srcs) {
      if (src !== dst) {
        edges.add(`${src}\u0000${dst}`);
      }
    }
  }
  graph.outputs.forEach((v, i) => {
    const srcs: string[] = [];
    sourcesOf(v, new Set(), srcs);
    srcs.forEach(src => edges.add(`${src}\u0000out${i}`));
  });

  // 3. emit: clusters for expanded groups, boxes for the outermost collapsed ones
  const lines: string[] = [
    'digraph trace {',
    `  graph [rankdir=${options.rankdir ?? 'TB'} fontname="Courier" fontsize=10 nodesep=0.25 ranksep=0.35 class="trace-graph"];`,
    '  node [shape=box style="rounded,filled" fillcolor="#f7f7f7" fontname="Courier" fontsize=9 height=0.3 margin="0.08,0.04"];',
    '  edge [arrowsize=0.6];'
  ];
  const byGroup = new Map<string, string[]>();
  const push = (group: string, line: string): void => {
    let list = byGroup.get(group);
    if (!list) {
      byGroup.set(group, (list = []));
    }
    list.push(line);
  };
  for (const n of drawnOps) {
    const classes = ['node', `op-${n.role}`, `kind-${cssToken(n.kind)}`];
    if (n.nondeterministic) {
      classes.push('nondeterministic');
    }
    const extra = highlights.get(n.id);
    if (extra) {
      classes.push(...[...extra].map(cssToken).sort());
    }
    const attrs: Record<string, string> = {
      id: `"n${n.id}"`,
      label: labelLines(nodeLabel(graph, n, fold, showShapes)),
      tooltip: tooltipLines(nodeTooltip(graph, n)),
      class: quoted(classes.join(' '))
    };
    push(groups.owner(n.id).id, `n${n.id} [${attrText(attrs)}];`);
  }
  const boxes: string[] = [];
  const boxNames = new Set(rep.values());
  for (const [id, g] of groups.groups) {
    const name = `g${groups.index(id)}`;
    if (!boxNames.has(name)) {
      continue;
    }
    boxes.push(id);
    const title = g.type ? `${g.label} (${g.type})` : g.label;
    const classes = ['scope-collapsed', ...[...(boxClasses.get(name) ?? [])].map(cssToken).sort()];
    const attrs: Record<string, string> = {
      id: quoted(`scope-${domId(id)}`),
      label: labelLines([title, `${g.opCount} ops`]),
      tooltip: tooltipLines([
        g.isBucket ? `${g.label}: ${g.children.length} modules` : id || graph.method,
        'click to expand'
      ]),
      class: quoted(classes.join(' ')),
      peripheries: '2'
    };
    push(g.parent ?? '', `${name} [${attrText(attrs)}];`);
  }
  const emitGroup = (id: string, indent: string): void => {
    const g = groups.group(id);
    const own = byGroup.get(id) ?? [];
    const children = g.children.filter(c => expanded.has(c) || boxes.includes(c) || hasContent(c));
    if (id !== '') {
      if (!own.length && !children.some(c => hasContent(c))) {
        return;
      }
      const k = groups.index(id);
      const title = g.type ? `${g.label} (${g.type})` : g.label;
      lines.push(`${indent}subgraph cluster_${k} {`);
      lines.push(
        `${indent}  graph [id=${quoted(`cluster-${domId(id)}`)} label=${labelLines([title])} class="scope" style="rounded" labeljust=l fontsize=9];`
      );
    }
    const inner = id === '' ? indent : indent + '  ';
    for (const line of own) {
      lines.push(inner + line);
    }
    for (const c of children) {
      if (expanded.has(c)) {
        emitGroup(c, inner);
      }
    }
    if (id !== '') {
      lines.push(`${indent}}`);
    }
  };
  const contentMemo = new Map<string, boolean>();
  function hasContent(id: string): boolean {
    const memo = contentMemo.get(id);
    if (memo !== undefined) {
      return memo;
    }
    const g = groups.group(id);
    const result = (byGroup.get(id)?.length ?? 0) > 0 || (expanded.has(id) && g.children.some(hasContent));
    contentMemo.set(id, result);
    return result;
  }
  emitGroup('', '  ');
  for (const v of graph.inputs) {
    if (!usedInputs.has(v)) {
      continue;
    }
    const value = graph.values[v];
    lines.push(
      `  in${v} [id="in${v}" shape=ellipse class="input" label=${labelLines([value.name, shapeText(value)])}];`
    );
  }
  graph.outputs.forEach((v, i) => {
    const value = graph.values[v];
    const heading = graph.outputs.length > 1 ? `output ${i}` : 'output';
    lines.push(
      `  out${i} [id="out${i}" shape=ellipse class="output" label=${labelLines([heading, shapeText(value)])}];`
    );
  });
  for (const e of [...edges].sort()) {
    const [src, dst] = e.split('\u0000');
    lines.push(`  ${src} -> ${dst} [id="e${src}-${dst}"];`);
  }
  lines.push('}');
  return {
    dot: lines.join('\n') + '\n',
    representative: rep,
    items: [...drawnOps.map(n => `n${n.id}`), ...boxes.map(b => `g${groups.index(b)}`)],
    boxes
  };
}
