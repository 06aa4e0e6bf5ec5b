/**
 * The navigable graph model decoded from `GraphJSON` (mirrors jupyter_tracejit/core/graph.py).
 * Views only read it; nothing here touches the DOM.
 */

import { GRAPH_SCHEMA_VERSION, GraphJSON, NodeRole } from './protocol';
import { spellValue, ValueSpelling } from './valueText';

export type { NodeRole };

/** Roles that only carry structure into their consumers (core/graph.py PLUMBING_ROLES). */
const PLUMBING_ROLES: ReadonlySet<NodeRole> = new Set<NodeRole>(['list', 'tuple', 'dict', 'unpack', 'index']);

/** The role's family as views draw it: `constant`, `getattr`, `plumbing` or `op` (core/graph.py `fold_class`). */
export function foldClass(role: NodeRole): string {
  return PLUMBING_ROLES.has(role) ? 'plumbing' : role;
}

export interface Frame {
  file: string;
  line: number;
  func: string;
  code: string;
  internal: boolean;
}

export interface SourceLoc {
  stack: Frame[];
  userIndex: number;
}

export interface ValueInfo {
  id: number;
  name: string;
  type: string;
  /** a number, a symbol an export kept symbolic (`s27`), or null when unknown */
  shape: (number | string | null)[] | null;
  dtype: string | null;
  device: string | null;
  requiresGrad: boolean | null;
  producer: number | null;
}

export interface BlockInfo {
  inputs: number[];
  outputs: number[];
  nodes: number[];
}

export interface NodeInfo {
  id: number;
  kind: string;
  /** what the views call the node, as its back end titled it (`aten::linear` for an export's `aten::linear.default`) */
  title: string;
  role: NodeRole;
  inputs: number[];
  outputs: number[];
  scope: string;
  source: SourceLoc | null;
  attributes: Record<string, unknown>;
  blocks: BlockInfo[];
  parent: number | null;
  nondeterministic: boolean;
}

export interface ScopeInfo {
  path: string;
  name: string;
  type: string;
  parent: string | null;
  children: string[];
  /** Nodes whose innermost module is this one. */
  nodeIds: number[];
}

/**
 * The title of a node saved without one (graph.py `legacy_title`): its kind without `.default`, the overload nearly
 * every export op has (`aten::linear.default` -> `aten::linear`; `aten::add.Tensor` keeps `.Tensor`).
 */
export function legacyTitle(kind: string): string {
  const at = kind.lastIndexOf('::');
  const head = at < 0 ? '' : kind.slice(0, at + 2);
  const name = kind.slice(head.length);
  const bare = name.endsWith('.default') ? name.slice(0, -'.default'.length) : name;
  return bare ? head + bare : kind;
}

export function userFrame(source: SourceLoc | null): Frame | null {
  return source ? (source.stack[source.userIndex] ?? null) : null;
}

function scopeParent(path: string): string | null {
  if (path === '') {
    return null;
  }
  const dot = path.lastIndexOf('.');
  return dot < 0 ? '' : path.slice(0, dot);
}

export function shapeText(value: ValueInfo): string {
  if (!value.shape) {
    return value.dtype ?? value.type;
  }
  const dims = value.shape.map(d => (d === null ? '?' : String(d))).join(', ');
  return `${value.dtype ?? value.type}(${dims})`;
}

export function basename(file: string): string {
  const parts = file.split(/[\\/]/);
  return parts[parts.length - 1] || file;
}

/** How TorchScript's IR text spells a value's leaves (graph.py `format_attribute`). */
const ATTRIBUTE_SPELLING: ValueSpelling = {
  boolean: value => (value ? '1' : '0'),
  number: value => String(value),
  tensor: obj => {
    if (!('tensor' in obj)) {
      return null;
    }
    const t = obj.tensor as { dtype?: string; shape?: number[] };
    return `<Tensor ${t.dtype ?? ''}[${(t.shape ?? []).join(', ')}]>`;
  }
};

/** Attribute values as TorchScript prints them (mirrors graph.py `format_attribute`). */
export function formatAttribute(value: unknown): string {
  return spellValue(value, ATTRIBUTE_SPELLING);
}

/** `cache`'s value for `key`, worked out by `work` the first time it is asked for (a value is never undefined). */
function remembered<K, V>(cache: Map<K, V>, key: K, work: () => V): V {
  const known = cache.get(key);
  if (known !== undefined) {
    return known;
  }
  const value = work();
  cache.set(key, value);
  return value;
}

export class TraceGraph {
  readonly method: string;
  readonly nodes: NodeInfo[];
  readonly values: ValueInfo[];
  readonly inputs: number[];
  readonly outputs: number[];
  readonly scopes: Map<string, ScopeInfo>;
  readonly code: string;
  private usersOf: number[][] | null = null;
  private readonly foldTargets = new Map<number, number | null>();
  private readonly reachesOutputs = new Map<number, boolean>();
  private textCache: { lines: string[]; lineOfNode: Map<number, number>; nodeOfLine: Map<number, number> } | null =
    null;

  constructor(init: {
    method: string;
    nodes: NodeInfo[];
    values: ValueInfo[];
    inputs: number[];
    outputs: number[];
    scopeTypes: Map<string, string>;
    code: string;
  }) {
    this.method = init.method;
    this.nodes = init.nodes;
    this.values = init.values;
    this.inputs = init.inputs;
    this.outputs = init.outputs;
    this.code = init.code;
    this.scopes = buildScopes(this.nodes, init.scopeTypes);
  }

  get size(): number {
    return this.nodes.length;
  }

  producer(valueId: number): NodeInfo | null {
    const p = this.values[valueId]?.producer;
    return p === null || p === undefined ? null : this.nodes[p];
  }

  /** Ids of the nodes that read a value, in graph order. */
  users(valueId: number): number[] {
    if (!this.usersOf) {
      const users: number[][] = this.values.map(() => []);
      for (const n of this.nodes) {
        for (const v of n.inputs) {
          const list = users[v];
          if (list.length === 0 || list[list.length - 1] !== n.id) {
            list.push(n.id);
          }
        }
      }
      this.usersOf = users;
    }
    return this.usersOf[valueId] ?? [];
  }

  consumers(node: NodeInfo): number[] {
    const seen = new Set<number>();
    for (const v of node.outputs) {
      for (const u of this.users(v)) {
        seen.add(u);
      }
    }
    return [...seen];
  }

  /**
   * The op a foldable node is drawn inside: the first op (in graph order) its value reaches through foldable
   * consumers, so a GetAttr chain `self.encoder.layer.0.weight` ends in the op using the weight; null when it
   * reaches no op (mirrors graph.py `fold_target`).
   */
  foldTarget(node: NodeInfo): number | null {
    if (node.role === 'op') {
      return null;
    }
    // the same for every view: worked out once (a 60k-node graph has 40k foldable nodes)
    return remembered(this.foldTargets, node.id, () => this.searchFoldTarget(node));
  }

  private searchFoldTarget(node: NodeInfo): number | null {
    const seen = new Set<number>([node.id]);
    let frontier = [node.id];
    while (frontier.length) {
      const reached: number[] = [];
      for (const id of frontier) {
        for (const c of this.consumers(this.nodes[id])) {
          if (!seen.has(c)) {
            seen.add(c);
            reached.push(c);
          }
        }
      }
      const ops = reached.filter(c => this.nodes[c].role === 'op');
      if (ops.length) {
        return ops.reduce((a, b) => Math.min(a, b));
      }
      frontier = reached;
    }
    return null;
  }

  /** Whether a node's values reach a graph output, directly or through foldable consumers (mirrors graph.py). */
  reachesOutput(node: NodeInfo): boolean {
    return remembered(this.reachesOutputs, node.id, () => this.searchReachesOutput(node));
  }

  private searchReachesOutput(node: NodeInfo): boolean {
    const outputs = new Set(this.outputs);
    const seen = new Set<number>([node.id]);
    const stack = [node.id];
    while (stack.length) {
      const n = this.nodes[stack.pop()!];
      if (n.outputs.some(v => outputs.has(v))) {
        return true;
      }
      for (const c of this.consumers(n)) {
        if (!seen.has(c) && this.nodes[c].role !== 'op') {
          seen.add(c);
          stack.push(c);
        }
      }
    }
    return false;
  }

  /** Every node inside a module path (recursively); "" is the whole graph. */
  nodesInScope(path: string): number[] {
    if (path === '') {
      return this.nodes.map(n => n.id);
    }
    const prefix = path + '.';
    return this.nodes.filter(n => n.scope === path || n.scope.startsWith(prefix)).map(n => n.id);
  }

  /** `file:line` -> node ids whose user frame is that line (source line -> nodes). */
  nodesAt(file: string, line: number): number[] {
    return this.nodes
      .filter(n => {
        const f = userFrame(n.source);
        return f !== null && f.line === line && f.file === file;
      })
      .map(n => n.id);
  }

  /** One node in TorchScript IR syntax (mirrors graph.py `node_text`). */
  nodeText(node: NodeInfo): string {
    const outs = node.outputs.map(v => `%${this.values[v].name} : ${shapeText(this.values[v])}`).join(', ');
    const attrEntries = Object.entries(node.attributes);
    const attrs = attrEntries.length
      ? '[' + attrEntries.map(([k, v]) => `${k}=${formatAttribute(v)}`).join(', ') + ']'
      : '';
    const ins = node.inputs.map(v => `%${this.values[v].name}`).join(', ');
    const scope = node.scope ? `, scope: ${node.scope}` : '';
    const frame = userFrame(node.source);
    const src = frame ? `  # ${frame.file}:${frame.line}` : '';
    return `${outs ? outs + ' = ' : ''}${node.kind}${attrs}(${ins})${scope}${src}`;
  }

  /** The whole graph as IR text, one line per node (for the `.graph` panel); computed once. */
  text(): { lines: string[]; lineOfNode: Map<number, number>; nodeOfLine: Map<number, number> } {
    if (this.textCache) {
      return this.textCache;
    }
    const ins = this.inputs.map(v => `%${this.values[v].name} : ${shapeText(this.values[v])}`);
    const lines = [`graph(${ins.join(', ')}):`];
    const lineOfNode = new Map<number, number>();
    const emit = (ids: number[], indent: string): void => {
      for (const id of ids) {
        const n = this.nodes[id];
        lineOfNode.set(id, lines.length);
        lines.push(indent + this.nodeText(n));
        n.blocks.forEach((b, bi) => {
          lines.push(`${indent}  block${bi}(${b.inputs.map(v => '%' + this.values[v].name).join(', ')}):`);
          emit(b.nodes, indent + '    ');
          lines.push(`${indent}    -> (${b.outputs.map(v => '%' + this.values[v].name).join(', ')})`);
        });
      }
    };
    emit(
      this.nodes.filter(n => n.parent === null).map(n => n.id),
      '  '
    );
    lines.push('  return (' + this.outputs.map(v => '%' + this.values[v].name).join(', ') + ')');
    const nodeOfLine = new Map([...lineOfNode].map(([node, line]) => [line, node]));
    this.textCache = { lines, lineOfNode, nodeOfLine };
    return this.textCache;
  }
}

function buildScopes(nodes: NodeInfo[], scopeTypes: Map<string, string>): Map<string, ScopeInfo> {
  const scopes = new Map<string, ScopeInfo>();
  const ensure = (path: string): ScopeInfo => {
    const found = scopes.get(path);
    if (found) {
      return found;
    }
    const parent = scopeParent(path);
    if (parent !== null) {
      ensure(parent);
    }
    const dot = path.lastIndexOf('.');
    const scope: ScopeInfo = {
      path,
      name: dot < 0 ? path : path.slice(dot + 1),
      type: scopeTypes.get(path) ?? '',
      parent,
      children: [],
      nodeIds: []
    };
    scopes.set(path, scope);
    if (parent !== null) {
      scopes.get(parent)!.children.push(path);
    }
    return scope;
  };
  ensure('');
  // the table is in tree order with siblings in natural order ("layer2" before "layer10"), as graph.py writes it:
  // children keep that order
  for (const path of scopeTypes.keys()) {
    ensure(path);
  }
  for (const n of nodes) {
    ensure(n.scope).nodeIds.push(n.id);
  }
  return scopes;
}

export function decodeGraph(data: GraphJSON): TraceGraph {
  if (data.graph_schema !== GRAPH_SCHEMA_VERSION) {
    throw new Error(
      `graph JSON has graph_schema ${String(data.graph_schema)}; this extension reads ${GRAPH_SCHEMA_VERSION}`
    );
  }
  const st = data.strings;
  const frames: Frame[] = data.frames.map(([f, line, fn, code, internal]) => ({
    file: st[f],
    line,
    func: st[fn],
    code: st[code],
    internal: internal !== 0
  }));
  const stacks: SourceLoc[] = data.stacks.map(row => ({
    userIndex: row[0],
    stack: row.slice(1).map(i => frames[i])
  }));
  const values: ValueInfo[] = data.values.map(([name, type, shape, dtype, device, rg, producer], id) => ({
    id,
    name: st[name],
    type: st[type],
    shape,
    dtype: dtype < 0 ? null : st[dtype],
    device: device < 0 ? null : st[device],
    requiresGrad: rg < 0 ? null : rg !== 0,
    producer: producer < 0 ? null : producer
  }));
  const nodes: NodeInfo[] = data.nodes.map(
    ([kind, inputs, outputs, scope, stack, attrs, blocks, parent, flags, role, title], id) => {
      return {
        id,
        kind: st[kind],
        // a graph saved before titles has none
        title: title === undefined ? legacyTitle(st[kind]) : st[title],
        role,
        inputs,
        outputs,
        scope: st[scope],
        source: stack < 0 ? null : stacks[stack],
        attributes: attrs || {},
        blocks: (blocks || []).map(([bi, bo, bn]) => ({ inputs: bi, outputs: bo, nodes: bn })),
        parent: parent < 0 ? null : parent,
        nondeterministic: (flags & 1) !== 0
      };
    }
  );
  const scopeTypes = new Map<string, string>(data.scopes.map(([p, t]) => [st[p], st[t]]));
  return new TraceGraph({
    method: data.method,
    nodes,
    values,
    inputs: data.inputs,
    outputs: data.outputs,
    scopeTypes,
    code: data.code
  });
}
