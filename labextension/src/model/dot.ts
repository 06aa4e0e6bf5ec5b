/**
 * The visible part of a graph as Graphviz DOT, with stable ids and CSS classes.
 *
 * There is one set of DOT rules: this file builds the DOT the interactive view lays out, and
 * jupyter_tracejit/render/dot.py follows the same rules line for line, so `run.to_dot()`, `tracejit --dot` and
 * the explorer's "export DOT" give the same text for the same view (tests/frontend_fixtures.py writes the Python
 * text of the same runs and views into dot.cases.json; labextension/test/dotText.test.ts compares this file's with it).
 *
 * Names: op nodes `n<id>`, graph inputs `in<value id>`, outputs `out<i>`, a collapsed group is one box `g<k>`
 * (k: the group's index in the GroupTree) with `id="scope-<group id>"`, an expanded one `subgraph cluster_<k>`
 * with `id="cluster-<group id>"`; edges `id="e<src>-<dst>"`; classes `node op-<role> kind-<kind>` plus highlight
 * classes (`selected`, `root`, `warning`, ...; `has-<class>` on the box or op standing for a hidden node).
 *
 * All text comes from user code (module names, debug names, string constants, source lines): it is escaped so
 * it can neither end a quoted string nor form a Graphviz escape (`\N`, `\G`, `\l`) or an HTML entity, and
 * control characters become spaces (dotText.ts). No link attributes (`URL`, `href`) are emitted. What a node's
 * box and tooltip say is nodeLabels.ts.
 */

import { foldClass, NodeInfo, shapeText, TraceGraph } from './graph';
import { FileNames } from './location';
import { Group, GroupTree } from './groups';
import { cssToken, domId, labelLines, MAX_TITLE_CHARS, quoted, tooltipLines } from './dotText';
import { nodeLabel, nodeTooltip } from './nodeLabels';

export interface DotOptions {
  /** Fold constants, GetAttr and list plumbing into their consumers (default true). */
  fold?: boolean;
  /** Groups (module paths / bucket ids) that are open; everything else is drawn collapsed. */
  expanded: Set<string>;
  /** Extra CSS classes per node id (`selected`, `root`, `warning`, ...). */
  highlights?: Map<number, Set<string>>;
  showShapes?: boolean;
  rankdir?: 'TB' | 'LR' | 'BT' | 'RL';
  /** A title above the graph. */
  title?: string;
  /** file -> display name (`run.fileNames`): the tooltips say `cell [9], line 7` as every view does. */
  fileNames?: FileNames;
}

export interface VisibleGraph {
  dot: string;
  /** node id -> the DOT name that represents it (itself, its fold target's, or its group box). */
  representative: Map<number, string>;
  /** DOT names of drawn nodes and group boxes. */
  items: string[];
  /** Group ids drawn as boxes. */
  boxes: string[];
}

function groupTitle(label: string, type: string): string {
  return type ? `${label} (${type})` : label;
}

/** A group's tooltip: what a synthetic group holds, else `module` (its path, or the method for the root). */
function groupTip(g: Group, module: string, method: string): string {
  if (g.repeat) {
    return `${g.label}: ${g.repeat} modules of the same structure`;
  }
  if (g.sectionOf !== null) {
    return `${g.label}: the nodes of ${g.sectionOf || method} in graph order`;
  }
  return g.isBucket ? `${g.label}: ${g.children.length} modules` : module;
}

type Item = [number, 'line' | 'group', string];

/** What is drawn, before it is written: the items and the edges between them. */
interface VisibleItems {
  /** node id -> the DOT item that stands for it */
  rep: Map<number, string>;
  /** the nodes drawn as themselves, in id order */
  drawn: NodeInfo[];
  /** DOT item -> its highlight classes */
  classes: Map<string, Set<string>>;
  /** `source\0target` -> the value the edge carries (the first one, in graph order) */
  edges: Map<string, number>;
  /** graph inputs that feed something drawn */
  usedInputs: Set<number>;
}

/**
 * Build the DOT of what is visible under `options` (the rules of render/dot.py `visible_dot`), in the same three
 * steps: which item stands for each node, the edges between the items, and the text.
 */
export function visibleDot(graph: TraceGraph, groups: GroupTree, options: DotOptions): VisibleGraph {
  const fold = options.fold ?? true;
  const { rep, drawn } = representatives(graph, groups, options.expanded, fold);
  const classes = new Map<string, Set<string>>();
  for (const [id, names] of options.highlights ?? new Map<number, Set<string>>()) {
    const r = rep.get(id);
    if (r === undefined) {
      continue;
    }
    const direct = r === `n${id}`;
    let set = classes.get(r);
    if (!set) {
      classes.set(r, (set = new Set()));
    }
    names.forEach(c => c && set!.add(cssToken(direct ? c : `has-${c}`)));
  }

  const { edges, usedInputs } = visibleEdges(graph, rep, fold);
  return emitDot(graph, groups, options, { rep, drawn, classes, edges, usedInputs });
}

/** Which DOT item stands for each node: its collapsed group's box, itself, or (folded) its consumer's. */
function representatives(
  graph: TraceGraph,
  groups: GroupTree,
  expanded: Set<string>,
  fold: boolean
): { rep: Map<number, string>; drawn: NodeInfo[] } {
  const collapsedAncestor = groups.collapsedAncestors(expanded);
  const boxOf = (nodeId: number): string | null => {
    const g = collapsedAncestor(nodeId);
    return g === null ? null : `g${groups.index(g)}`;
  };
  const rep = new Map<number, string>();
  const drawn: NodeInfo[] = [];
  for (const n of graph.nodes) {
    if (fold && n.role !== 'op') {
      continue;
    }
    const box = boxOf(n.id);
    rep.set(n.id, box ?? `n${n.id}`);
    if (box === null) {
      drawn.push(n);
    }
  }
  if (fold) {
    for (const n of graph.nodes) {
      if (n.role === 'op') {
        continue;
      }
      const target = graph.foldTarget(n);
      if (target !== null) {
        rep.set(n.id, rep.get(target)!);
      } else if (graph.reachesOutput(n)) {
        // a constant or tuple returned directly: drawn where it lives
        const box = boxOf(n.id);
        rep.set(n.id, box ?? `n${n.id}`);
        if (box === null) {
          drawn.push(n);
        }
      }
      // else: dead plumbing (the GetAttr of a parameter-free submodule), nothing to show
    }
  }
  drawn.sort((a, b) => a.id - b.id);

  return { rep, drawn };
}

/** The edges between the items; folded plumbing is looked through to its sources. */
function visibleEdges(
  graph: TraceGraph,
  rep: Map<number, string>,
  fold: boolean
): { edges: Map<string, number>; usedInputs: Set<number> } {
  const edges = new Map<string, number>();
  const usedInputs = new Set<number>();
  const graphInputs = new Set(graph.inputs);
  const sources = (valueId: number, seen: Set<number>, out: [string, number][]): void => {
    const p = graph.producer(valueId);
    if (!p) {
      if (graphInputs.has(valueId)) {
        out.push([`in${valueId}`, valueId]);
        usedInputs.add(valueId);
      }
      return;
    }
    if (fold && p.role === 'getattr') {
      return; // a parameter or submodule: shown in its consumer, not as an edge from `self`
    }
    if (fold && p.role !== 'op' && rep.get(p.id) !== `n${p.id}`) {
      if (seen.has(p.id)) {
        return;
      }
      seen.add(p.id);
      p.inputs.forEach(v => sources(v, seen, out));
      return;
    }
    out.push([rep.get(p.id)!, valueId]);
  };
  const addEdge = (src: string, dst: string, via: number): void => {
    const key = `${src}\u0000${dst}`;
    if (!edges.has(key)) {
      edges.set(key, via);
    }
  };
  for (const n of graph.nodes) {
    if (fold && n.role !== 'op' && rep.get(n.id) !== `n${n.id}`) {
      continue;
    }
    const dst = rep.get(n.id);
    if (dst === undefined) {
      continue;
    }
    const srcs: [string, number][] = [];
    n.inputs.forEach(v => sources(v, new Set(), srcs));
    srcs.filter(([src]) => src !== dst).forEach(([src, via]) => addEdge(src, dst, via));
  }
  graph.outputs.forEach((v, i) => {
    const srcs: [string, number][] = [];
    sources(v, new Set(), srcs);
    srcs.forEach(([src, via]) => addEdge(src, `out${i}`, via));
  });

  return { edges, usedInputs };
}

/** The text: each group's own nodes, boxes and clusters in order of their first node, then inputs, outputs, edges. */
function emitDot(graph: TraceGraph, groups: GroupTree, options: DotOptions, items: VisibleItems): VisibleGraph {
  const title = options.title !== undefined ? ` label=${labelLines([options.title], MAX_TITLE_CHARS)} labelloc=t` : '';
  const lines: string[] = [
    'digraph trace {',
    `  graph [rankdir=${options.rankdir ?? 'TB'} fontname="Courier" fontsize=10 nodesep=0.25 ranksep=0.35 class="trace-graph"${title}];`,
    '  node [shape=box style="rounded,filled" fillcolor="#f7f7f7" fontname="Courier" fontsize=9 height=0.3 margin="0.08,0.04"];',
    '  edge [arrowsize=0.6];'
  ];
  // each group's own statements (its nodes, its collapsed children), keyed by the first node they stand for
  const content = new Map<string, Item[]>();
  const push = (group: string, item: Item): void => {
    let list = content.get(group);
    if (!list) {
      content.set(group, (list = []));
    }
    list.push(item);
  };
  nodeStatements(graph, groups, options, items, push);
  const boxes = boxStatements(graph, groups, items, push);
  clusterLines(graph, groups, options.expanded, content, lines);
  lines.push(...ioLines(graph, items.usedInputs, options.showShapes ?? true), ...edgeLines(graph, items.edges), '}');
  return {
    dot: lines.join('\n') + '\n',
    representative: items.rep,
    items: [...items.drawn.map(n => `n${n.id}`), ...boxes.map(b => `g${groups.index(b)}`)],
    boxes
  };
}

/** A statement per node drawn as itself, in its group. */
function nodeStatements(
  graph: TraceGraph,
  groups: GroupTree,
  options: DotOptions,
  { drawn, classes }: VisibleItems,
  push: (group: string, item: Item) => void
): void {
  const fold = options.fold ?? true;
  const showShapes = options.showShapes ?? true;
  for (const n of drawn) {
    const base = ['node', `op-${foldClass(n.role)}`, `kind-${cssToken(n.kind)}`];
    if (n.nondeterministic) {
      base.push('nondeterministic');
    }
    const extra = [...(classes.get(`n${n.id}`) ?? [])].filter(c => !base.includes(c)).sort();
    const attrs =
      `id="n${n.id}" label=${labelLines(nodeLabel(graph, n, fold, showShapes))} ` +
      `tooltip=${tooltipLines(nodeTooltip(graph, n, options.fileNames))} class=${quoted([...base, ...extra].join(' '))}`;
    push(groups.owner(n.id).id, [n.id, 'line', `n${n.id} [${attrs}];`]);
  }
}

/** A box per collapsed group that stands for a node, in its parent group; the ids of the groups drawn as boxes. */
function boxStatements(
  graph: TraceGraph,
  groups: GroupTree,
  { rep, classes }: VisibleItems,
  push: (group: string, item: Item) => void
): string[] {
  const firstOfBox = new Map<string, number>();
  for (const [id, r] of rep) {
    if (r.startsWith('g')) {
      firstOfBox.set(r, Math.min(firstOfBox.get(r) ?? id, id));
    }
  }
  const boxes: string[] = [];
  for (const [id, g] of groups.groups) {
    const name = `g${groups.index(id)}`;
    const first = firstOfBox.get(name);
    if (first === undefined) {
      continue;
    }
    boxes.push(id);
    const cls = ['scope-collapsed', ...(g.repeat ? ['scope-repeat'] : []), ...[...(classes.get(name) ?? [])].sort()];
    const tip = groupTip(g, id || graph.method, graph.method);
    const attrs =
      `id=${quoted(`scope-${domId(id)}`)} label=${labelLines([groupTitle(g.label, g.type), `${g.opCount} ops`])} ` +
      `tooltip=${tooltipLines([tip, 'click to expand'])} class=${quoted(cls.join(' '))} peripheries=2`;
    push(g.parent ?? '', [first, 'line', `${name} [${attrs}];`]);
  }
  return boxes;
}

/** Each group's statements and expanded children (a cluster each), in order of the first node they hold. */
function clusterLines(
  graph: TraceGraph,
  groups: GroupTree,
  expanded: Set<string>,
  content: Map<string, Item[]>,
  lines: string[]
): void {
  const firstMemo = new Map<string, number | null>();
  const firstInside = (id: string): number | null => {
    if (firstMemo.has(id)) {
      return firstMemo.get(id)!;
    }
    const candidates = (content.get(id) ?? []).map(item => item[0]);
    for (const child of groups.group(id).children) {
      if (expanded.has(child)) {
        const found = firstInside(child);
        if (found !== null) {
          candidates.push(found);
        }
      }
    }
    const result = candidates.length ? candidates.reduce((a, b) => Math.min(a, b)) : null;
    firstMemo.set(id, result);
    return result;
  };
  const emit = (id: string, indent: string): void => {
    const items: Item[] = [...(content.get(id) ?? [])];
    for (const child of groups.group(id).children) {
      if (expanded.has(child)) {
        const key = firstInside(child);
        if (key !== null) {
          items.push([key, 'group', child]);
        }
      }
    }
    items.sort((a, b) => a[0] - b[0]);
    for (const [, what, payload] of items) {
      if (what === 'line') {
        lines.push(indent + payload);
        continue;
      }
      const g = groups.group(payload);
      const tip = groupTip(g, payload + (g.type ? ` (${g.type})` : ''), graph.method);
      lines.push(`${indent}subgraph cluster_${groups.index(payload)} {`);
      lines.push(
        `${indent}  graph [id=${quoted(`cluster-${domId(payload)}`)} label=${labelLines([groupTitle(g.label, g.type)])} ` +
          `tooltip=${tooltipLines([tip])} class="scope${g.repeat ? ' scope-repeat' : ''}" style="rounded" labeljust=l fontsize=9];`
      );
      emit(payload, indent + '  ');
      lines.push(`${indent}}`);
    }
  };
  emit('', '  ');
}

/** `%x : Float(3)`: a value as the tooltips name it. */
function valueText(graph: TraceGraph, v: number): string {
  return `%${graph.values[v].name} : ${shapeText(graph.values[v])}`;
}

/** The graph inputs that feed something drawn, then the outputs. */
function ioLines(graph: TraceGraph, usedInputs: Set<number>, showShapes: boolean): string[] {
  const lines: string[] = [];
  for (const v of graph.inputs) {
    if (usedInputs.has(v)) {
      const label = labelLines([graph.values[v].name, ...(showShapes ? [shapeText(graph.values[v])] : [])]);
      const tip = tooltipLines([`input ${valueText(graph, v)}`]);
      lines.push(`  in${v} [id="in${v}" shape=ellipse class="input" label=${label} tooltip=${tip}];`);
    }
  }
  graph.outputs.forEach((v, i) => {
    const heading = graph.outputs.length === 1 ? 'output' : `output ${i}`;
    const label = labelLines([heading, ...(showShapes ? [shapeText(graph.values[v])] : [])]);
    const tip = tooltipLines([`${heading} ${valueText(graph, v)}`]);
    lines.push(`  out${i} [id="out${i}" shape=ellipse class="output" label=${label} tooltip=${tip}];`);
  });
  return lines;
}

/** The edges, sorted by (source, target): the \0 separator sorts before every character of a name. */
function edgeLines(graph: TraceGraph, edges: Map<string, number>): string[] {
  return [...edges]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, via]) => {
      const [src, dst] = key.split('\u0000');
      return `  ${src} -> ${dst} [id="e${src}-${dst}" tooltip=${tooltipLines([valueText(graph, via)])}];`;
    });
}
