/**
 * The trace graph and the check graph side by side around one divergence.
 *
 * Both sides show the ops within `radius` steps of the divergent node, plus the counterparts of
 * everything shown on the other side. A matched pair gets the same DOT name (`p<trace id>`) in both
 * graphs, so Graphviz ranks and orders them alike and the two pictures line up; nodes with no
 * counterpart are `t<id>` (trace only) or `c<id>` (check only). A side left empty (an op with no counterpart and
 * nothing matched near it) shows what stands in its place instead (`standIns`).
 */

import { NodeInfo, TraceGraph, userFrame } from './graph';
import { FileNames, locationLabel } from './location';
import { nodeTooltip, opTitle } from './nodeLabels';
import { cssToken, labelLines, tooltipLines } from './dotText';
import { Divergence, GraphDiff } from './run';

export interface SideBySide {
  traceDot: string;
  checkDot: string;
  /** node ids shown on each side */
  traceIds: number[];
  checkIds: number[];
  /** DOT name -> node id, per side (for clicks) */
  traceNames: Map<string, number>;
  checkNames: Map<string, number>;
  /** per side, what its nodes stand for when nothing there matches the other side's (else '') */
  notes: [string, string];
}

/** The most ops shown in place of a counterpart that does not exist. */
const STAND_INS = 8;

/**
 * Ops of `other` to show where the op `seed` of the other graph has no counterpart and nothing matched is near it
 * (a frozen branch at the start of a model: both branches and everything after them differ, so the pane would be
 * empty): the ops recorded at the same line, else in the same module, else the ops at about the same place in
 * the graph; with a note saying which.
 */
function standIns(seedGraph: TraceGraph, seed: number, other: TraceGraph): { ids: Set<number>; note: string } {
  const node = seedGraph.nodes[seed];
  const ops = other.nodes.filter(n => n.role === 'op');
  const frame = userFrame(node.source);
  const sameLine = frame
    ? ops.filter(n => {
        const f = userFrame(n.source);
        return f !== null && f.file === frame.file && f.line === frame.line;
      })
    : [];
  const sameScope = node.scope ? ops.filter(n => n.scope === node.scope) : [];
  const [chosen, note] = sameLine.length
    ? [sameLine, 'no counterpart: the ops of the same line here']
    : sameScope.length
      ? [sameScope, `no counterpart: the ops of ${node.scope} here`]
      : [ops, 'no counterpart: the ops at about the same place here'];
  const near = [...chosen].sort((a, b) => Math.abs(a.id - seed) - Math.abs(b.id - seed) || a.id - b.id);
  return { ids: new Set(near.slice(0, STAND_INS).map(n => n.id)), note };
}

/** Op neighbours of an op node, looking through constants, GetAttr and list plumbing. */
function opNeighbours(graph: TraceGraph, node: NodeInfo): number[] {
  const out = new Set<number>();
  const up = (valueId: number, depth: number): void => {
    const p = graph.producer(valueId);
    if (!p || depth > 4) {
      return;
    }
    if (p.role === 'op') {
      out.add(p.id);
    } else {
      p.inputs.forEach(v => up(v, depth + 1));
    }
  };
  const down = (n: NodeInfo, depth: number): void => {
    for (const c of graph.consumers(n)) {
      const cn = graph.nodes[c];
      if (cn.role === 'op') {
        out.add(c);
      } else if (depth < 4) {
        down(cn, depth + 1);
      }
    }
  };
  node.inputs.forEach(v => up(v, 0));
  down(node, 0);
  out.delete(node.id);
  return [...out];
}

function neighbourhood(graph: TraceGraph, seed: number | null, radius: number): Set<number> {
  const seen = new Set<number>();
  if (seed === null) {
    return seen;
  }
  let frontier = [seed];
  seen.add(seed);
  for (let r = 0; r < radius; r++) {
    const next: number[] = [];
    for (const id of frontier) {
      for (const nb of opNeighbours(graph, graph.nodes[id])) {
        if (!seen.has(nb)) {
          seen.add(nb);
          next.push(nb);
        }
      }
    }
    frontier = next;
  }
  return seen;
}

export function sideDot(
  graph: TraceGraph,
  ids: Set<number>,
  nameOf: (id: number) => string,
  classesOf: (id: number) => string[],
  title: string,
  fileNames: FileNames
): { dot: string; names: Map<string, number> } {
  const names = new Map<string, number>();
  const sorted = [...ids].sort((a, b) => a - b);
  const lines = [
    'digraph side {',
    // the title above the picture, if any (the compare panes name each side in their own header instead)
    `  graph [rankdir=TB fontname="Courier" fontsize=10 nodesep=0.25 ranksep=0.3${title ? ` label=${labelLines([title])} labelloc=t` : ''}];`,
    '  node [shape=box style="rounded,filled" fillcolor="#f7f7f7" fontname="Courier" fontsize=9 height=0.3];',
    '  edge [arrowsize=0.6];'
  ];
  for (const id of sorted) {
    const n = graph.nodes[id];
    const name = nameOf(id);
    names.set(name, id);
    const f = userFrame(n.source);
    const label = [opTitle(n)];
    if (n.outputs.length) {
      const v = graph.values[n.outputs[0]];
      label.push(v.shape ? `${v.dtype ?? ''}(${v.shape.map(d => (d === null ? '?' : d)).join(', ')})` : v.type);
    }
    if (f) {
      label.push(locationLabel(f.file, f.line, fileNames));
    }
    const cls = ['node', `kind-${cssToken(n.kind)}`, ...classesOf(id)].join(' ');
    lines.push(
      `  ${name} [id="${name}" label=${labelLines(label)} tooltip=${tooltipLines(nodeTooltip(graph, n, fileNames))} class="${cls}"];`
    );
  }
  const edges = new Set<string>();
  for (const id of sorted) {
    for (const nb of opNeighbours(graph, graph.nodes[id])) {
      if (ids.has(nb) && nb < id) {
        edges.add(`  ${nameOf(nb)} -> ${nameOf(id)};`);
      }
    }
  }
  lines.push(...[...edges].sort(), '}');
  return { dot: lines.join('\n') + '\n', names };
}

export function sideBySide(
  trace: TraceGraph,
  check: TraceGraph,
  diff: GraphDiff,
  divergence: Divergence,
  fileNames: FileNames = {},
  radius = 2,
  titles: [string, string] = ['trace', 'check trace']
): SideBySide {
  const { traceIds, checkIds, notes } = sideNodes(trace, check, diff, divergence, radius);
  // per side (0 the trace, 1 the check): the divergences at its nodes, the one shown, each node's partner
  const divergent = [new Map<number, Divergence>(), new Map<number, Divergence>()];
  for (const d of diff.divergences) {
    if (d.traceNode !== null) {
      divergent[0].set(d.traceNode, d);
    }
    if (d.checkNode !== null) {
      divergent[1].set(d.checkNode, d);
    }
  }
  const current = [divergence.traceNode, divergence.checkNode];
  const partner = [(id: number) => diff.checkPartner(id), (id: number) => diff.tracePartner(id)];
  const traceName = (id: number): string => (diff.checkPartner(id) !== null ? `p${id}` : `t${id}`);
  const checkName = (id: number): string => {
    const p = diff.tracePartner(id);
    return p !== null ? `p${p}` : `c${id}`;
  };
  const classes = (side: number, id: number): string[] => {
    const out: string[] = [partner[side](id) !== null ? 'matched' : 'unmatched'];
    const d = divergent[side].get(id);
    if (d) {
      out.push(d.kind);
    }
    if (id === current[side]) {
      out.push('current');
    }
    return out;
  };
  const [t, c] = [trace, check].map((graph, side) =>
    sideDot(
      graph,
      [traceIds, checkIds][side],
      [traceName, checkName][side],
      id => classes(side, id),
      titles[side],
      fileNames
    )
  );
  return {
    traceDot: t.dot,
    checkDot: c.dot,
    traceIds: [...traceIds].sort((a, b) => a - b),
    checkIds: [...checkIds].sort((a, b) => a - b),
    traceNames: t.names,
    checkNames: c.names,
    notes
  };
}

/**
 * The nodes each side shows around `divergence`: its neighbourhood within `radius`, with the counterparts of the
 * other side's; a side with no node of its own shows stand-ins, and its note says what they are.
 */
function sideNodes(
  trace: TraceGraph,
  check: TraceGraph,
  diff: GraphDiff,
  divergence: Divergence,
  radius: number
): { traceIds: Set<number>; checkIds: Set<number>; notes: [string, string] } {
  const traceIds = neighbourhood(trace, divergence.traceNode, radius);
  const checkIds = neighbourhood(check, divergence.checkNode, radius);
  // when one side has no node, centre it on the counterparts of the other side's neighbours
  for (const id of [...traceIds]) {
    const partner = diff.checkPartner(id);
    if (partner !== null) {
      checkIds.add(partner);
    }
  }
  for (const id of [...checkIds]) {
    const partner = diff.tracePartner(id);
    if (partner !== null) {
      traceIds.add(partner);
    }
  }
  const notes: [string, string] = ['', ''];
  if (!checkIds.size && divergence.traceNode !== null) {
    const found = standIns(trace, divergence.traceNode, check);
    found.ids.forEach(id => checkIds.add(id));
    notes[1] = found.ids.size ? found.note : '';
  }
  if (!traceIds.size && divergence.checkNode !== null) {
    const found = standIns(check, divergence.checkNode, trace);
    found.ids.forEach(id => traceIds.add(id));
    notes[0] = found.ids.size ? found.note : '';
  }
  return { traceIds, checkIds, notes };
}

/**
 * Two whole graphs as the comparison panes draw them, whatever paired their nodes (a trace and its export, two
 * runs of one model): every op of each side, plus whatever `classes` names that is not one (a size a constant
 * fed), so that a step always finds its nodes. A matched pair has one DOT name (`p<id on side 0>`) in both
 * pictures, so Graphviz ranks them alike and a click on one finds its partner; an op with no partner is
 * `<prefix><id>`. Each op is classed `matched`, else what `classes` gives for it, else `differs`.
 */
export interface PairedPictures {
  dots: [string, string];
  /** node id -> DOT name, per side */
  nameOf: [(id: number) => string, (id: number) => string];
  /** DOT name -> node id, per side */
  names: [Map<string, number>, Map<string, number>];
}

export function pairedPictures(
  graphs: [TraceGraph, TraceGraph],
  matched: Iterable<readonly [number, number]>,
  classes: [Map<number, string[]>, Map<number, string[]>],
  prefixes: [string, string],
  fileNames: FileNames = {}
): PairedPictures {
  const partnerOf: [Map<number, number>, Map<number, number>] = [new Map(), new Map()];
  for (const [a, b] of matched) {
    partnerOf[0].set(a, b);
    partnerOf[1].set(b, a);
  }
  const nameOf: PairedPictures['nameOf'] = [
    id => (partnerOf[0].has(id) ? `p${id}` : `${prefixes[0]}${id}`),
    id => {
      const partner = partnerOf[1].get(id);
      return partner !== undefined ? `p${partner}` : `${prefixes[1]}${id}`;
    }
  ];
  const sides = ([0, 1] as const).map(side => {
    const graph = graphs[side];
    const ids = new Set([
      ...graph.nodes.filter(n => n.role === 'op').map(n => n.id),
      ...partnerOf[side].keys(),
      ...classes[side].keys()
    ]);
    const classesOf = (id: number): string[] =>
      partnerOf[side].has(id) ? ['matched'] : (classes[side].get(id) ?? ['differs']);
    return sideDot(graph, ids, nameOf[side], classesOf, '', fileNames);
  });
  return { dots: [sides[0].dot, sides[1].dot], nameOf, names: [sides[0].names, sides[1].names] };
}
