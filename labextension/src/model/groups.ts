/**
 * Collapsible groups over a graph: one group per module scope, plus synthetic "bucket" groups
 * when a module has many children (a 2,000-layer nn.Sequential would otherwise draw 2,000 boxes).
 *
 * The view lays out only what is visible: collapsed groups are single boxes, so a 12k-node graph
 * opens with a handful of boxes and each expansion lays out one more level (TensorBoard / Model
 * Explorer style).
 */

import { TraceGraph } from './graph';

/** A module with more child modules than this gets bucket groups of this many children. */
export const BUCKET_SIZE = 32;
/** Auto-expansion keeps the visible graph at most about this many items. */
const AUTO_EXPAND_LIMIT = 120;

export interface Group {
  /** Module path, or `<parent>#<first>..<last>` for a bucket. "" is the root. */
  id: string;
  label: string;
  /** Module class name; "" for buckets. */
  type: string;
  parent: string | null;
  children: string[];
  /** Nodes whose innermost module is this group's module (buckets own none). */
  nodeIds: number[];
  /** Op nodes (not constants / GetAttr / plumbing) inside, recursively. */
  opCount: number;
  isBucket: boolean;
  depth: number;
}

export class GroupTree {
  readonly groups: Map<string, Group>;
  /** node id -> id of the group that owns it */
  readonly ownerOf: Int32Array;
  private readonly groupIndex: Map<string, number>;
  private readonly order: string[];

  constructor(graph: TraceGraph, bucketSize = BUCKET_SIZE) {
    this.groups = new Map();
    const scopeToGroup = new Map<string, string>();
    const make = (id: string, label: string, type: string, parent: string | null, isBucket: boolean): Group => {
      const depth = parent === null ? 0 : this.groups.get(parent)!.depth + 1;
      const g: Group = { id, label, type, parent, children: [], nodeIds: [], opCount: 0, isBucket, depth };
      this.groups.set(id, g);
      if (parent !== null) {
        this.groups.get(parent)!.children.push(id);
      }
      return g;
    };
    const addScope = (path: string, parentGroup: string | null): void => {
      const scope = graph.scopes.get(path)!;
      const label = path === '' ? graph.method : scope.name;
      make(path, label, scope.type, parentGroup, false);
      scopeToGroup.set(path, path);
      this.attachChildren(graph, path, path, scope.children, bucketSize, addScope, make);
    };
    addScope('', null);
    this.ownerOf = new Int32Array(graph.nodes.length);
    this.order = [...this.groups.keys()];
    this.groupIndex = new Map(this.order.map((id, i) => [id, i]));
    for (const n of graph.nodes) {
      const owner = scopeToGroup.get(n.scope) ?? '';
      this.groups.get(owner)!.nodeIds.push(n.id);
      this.ownerOf[n.id] = this.groupIndex.get(owner)!;
      if (n.role === 'op') {
        for (let g: string | null = owner; g !== null; g = this.groups.get(g)!.parent) {
          this.groups.get(g)!.opCount += 1;
        }
      }
    }
  }

  /** Attach `children` (module paths of the module `owner`) under the group `parent`, bucketed when many. */
  private attachChildren(
    graph: TraceGraph,
    parent: string,
    owner: string,
    children: string[],
    bucketSize: number,
    addScope: (path: string, parentGroup: string | null) => void,
    make: (id: string, label: string, type: string, parent: string | null, isBucket: boolean) => Group
  ): void {
    if (children.length <= bucketSize) {
      children.forEach(c => addScope(c, parent));
      return;
    }
    // split into buckets of bucketSize, nesting buckets until each level fits
    let chunk = bucketSize;
    while (Math.ceil(children.length / chunk) > bucketSize) {
      chunk *= bucketSize;
    }
    for (let i = 0; i < children.length; i += chunk) {
      const part = children.slice(i, i + chunk);
      const first = graph.scopes.get(part[0])!.name;
      const last = graph.scopes.get(part[part.length - 1])!.name;
      const id = `${parent}#${first}..${last}`;
      const prefix = owner === '' ? '' : graph.scopes.get(owner)!.name + ' ';
      make(id, `${prefix}${first} … ${last}`, '', parent, true);
      this.attachChildren(graph, id, owner, part, bucketSize, addScope, make);
    }
  }

  group(id: string): Group {
    const g = this.groups.get(id);
    if (!g) {
      throw new Error(`unknown group ${JSON.stringify(id)}`);
    }
    return g;
  }

  /** Stable small integer of a group (its position in creation order): used in DOT names. */
  index(id: string): number {
    return this.groupIndex.get(id) ?? -1;
  }

  owner(nodeId: number): Group {
    return this.groups.get(this.order[this.ownerOf[nodeId]])!;
  }

  /** The chain of groups from the root to the node's owner, root first. */
  ancestors(nodeId: number): string[] {
    const chain: string[] = [];
    for (let g: string | null = this.owner(nodeId).id; g !== null; g = this.groups.get(g)!.parent) {
      chain.push(g);
    }
    return chain.reverse();
  }

  /**
   * The groups to open so a graph starts readable: everything when small; otherwise the root, then
   * breadth-first while the visible items (boxes + own ops) stay within `limit`.
   */
  autoExpanded(limit = AUTO_EXPAND_LIMIT): Set<string> {
    const root = this.group('');
    if (root.opCount <= limit) {
      return new Set(this.groups.keys());
    }
    const expanded = new Set<string>(['']);
    let visible = this.visibleCount(root);
    const queue = [...root.children];
    while (queue.length) {
      const id = queue.shift()!;
      const g = this.group(id);
      const extra = this.visibleCount(g) - 1;
      if (visible + extra > limit) {
        continue;
      }
      expanded.add(id);
      visible += extra;
      queue.push(...g.children);
    }
    return expanded;
  }

  /** Items shown when only this group is opened: its child groups plus its own op nodes. */
  private visibleCount(g: Group): number {
    return g.children.length + g.opCount - g.children.reduce((s, c) => s + this.group(c).opCount, 0);
  }

  /**
   * The outermost collapsed group containing the node, or null when every group on its path is
   * expanded (the node itself is visible).
   */
  collapsedAncestor(nodeId: number, expanded: Set<string>): string | null {
    for (const g of this.ancestors(nodeId)) {
      if (!expanded.has(g)) {
        return g;
      }
    }
    return null;
  }

  /** `expanded` plus every group needed to make these nodes visible (to reveal a selection). */
  revealing(nodeIds: Iterable<number>, expanded: Set<string>): Set<string> {
    const out = new Set(expanded);
    for (const id of nodeIds) {
      for (const g of this.ancestors(id)) {
        out.add(g);
      }
    }
    return out;
  }
}
