/**
 * The trace graph and the check graph side by side around one divergence.
 *
 * Both sides show the ops within `radius` steps of the divergent node, plus the counterparts of
 * everything shown on the other side. A matched pair gets the same DOT name (`p<trace id>`) in both
 * graphs, so Graphviz ranks and orders them alike and the two pictures line up; nodes with no
 * counterpart are `t<id>` (trace only) or `c<id>` (check only).
 */

import { NodeInfo, TraceGraph, userFrame } from './graph';
import { FileNames, locationLabel } from './location';
import { cssToken, labelLines, nodeTooltip, tooltipLines } from './dot';
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

function sideDot(
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
    const label = [n.kind.split('::').pop() ?? n.kind];
    if (n.outputs.length) {
      const v = graph.values[n.outputs[0]];
      label.push(v.shape ? `${v.dtype ?? ''}(${v.shape.map(d => (d === null ? '?' : d)).join(', ')})` : v.type);
    }
    if (f) {
      label.push(locationLabel(f.file, f.line, fileNames));
    }
    const cls = ['node', `kind-${cssToken(n.kind)}`, ...classesOf(id)].join(' ');
    lines.push(
      `  ${name} [id="${name}" label=${labelLines(label)} tooltip=${tooltipLines(nodeTooltip(graph, n))} class="${cls}"];`
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
  const divergentTrace = new Map<number, Divergence>();
  const divergentCheck = new Map<number, Divergence>();
  for (const d of diff.divergences) {
    if (d.traceNode !== null) {
      divergentTrace.set(d.traceNode, d);
    }
    if (d.checkNode !== null) {
      divergentCheck.set(d.checkNode, d);
    }
  }
  const traceName = (id: number): string => (diff.checkPartner(id) !== null ? `p${id}` : `t${id}`);
  const checkName = (id: number): string => {
    const partner = diff.tracePartner(id);
    return partner !== null ? `p${partner}` : `c${id}`;
  };
  const classes = (
    id: number,
    current: number | null,
    divergent: Map<number, Divergence>,
    matched: boolean
  ): string[] => {
    const out: string[] = [matched ? 'matched' : 'unmatched'];
    const d = divergent.get(id);
    if (d) {
      out.push(d.kind);
    }
    if (id === current) {
      out.push('current');
    }
    return out;
  };
  const t = sideDot(
    trace,
    traceIds,
    traceName,
    id => classes(id, divergence.traceNode, divergentTrace, diff.checkPartner(id) !== null),
    titles[0],
    fileNames
  );
  const c = sideDot(
    check,
    checkIds,
    checkName,
    id => classes(id, divergence.checkNode, divergentCheck, diff.tracePartner(id) !== null),
    titles[1],
    fileNames
  );
  return {
    traceDot: t.dot,
    checkDot: c.dot,
    traceIds: [...traceIds].sort((a, b) => a - b),
    checkIds: [...checkIds].sort((a, b) => a - b),
    traceNames: t.names,
    checkNames: c.names
  };
}
