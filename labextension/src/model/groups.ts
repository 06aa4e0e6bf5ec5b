/**
 * Collapsible groups over a graph: one group per module scope, plus two kinds of synthetic groups:
 * - a "repeat" group around consecutive sibling modules of the same class and the same structure (12
 *   `BertLayer`s, N decoder layers): drawn collapsed as one box `BertLayer ×12`, it expands on click;
 * - "bucket" groups when a module has many children (a 2,000-layer nn.Sequential would otherwise draw
 *   2,000 boxes);
 * - "section" groups of a module's own ops, SECTION_SIZE at a time in graph order, when it has more (a
 *   50,000-op loop in one function has no module structure to collapse).
 * jupyter_tracejit/render/groups.py follows the same rules (ids, labels, creation order), so both sides
 * write the same DOT for a view.
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
/** This many consecutive siblings of one class and one structure, or more, are folded into a repeat group. */
export const REPEAT_MIN = 3;
/**
 * A module whose own op nodes are more than this (a function or forward with a long Python loop: no module
 * structure to fold) has them split, in graph order, into "section" groups of this many ops: Graphviz could
 * neither lay out nor draw 50,000 ops in one picture.
 */
export const SECTION_SIZE = 256;
/** A child's name as ModuleList / Sequential number them (no leading zeros; short enough to add 1 exactly). */
const INDEX = /^(0|[1-9][0-9]{0,8})$/;

export interface Group {
  /**
   * Module path, `<parent>#<first>..<last>` for a bucket, `<parent>~<first>..<last>` for a repeat group. "" is
   * the root.
   */
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
  /** True for synthetic groups (buckets, repeats, sections): no module of their own. */
  isBucket: boolean;
  /** How many same-structured modules a repeat group folds; 0 for every other group. */
  repeat: number;
  /** A section (or a bucket of sections) of a module's own nodes: the module's path; null for other groups. */
  sectionOf: string | null;
  depth: number;
}

/** A child list's items: a module path, or a run of same-structured sibling paths to fold. */
type Item = string | string[];

export class GroupTree {
  readonly groups: Map<string, Group>;
  /** node id -> id of the group that owns it */
  readonly ownerOf: Int32Array;
  private readonly groupIndex: Map<string, number>;
  private readonly order: string[];
  private readonly graph: TraceGraph;
  private readonly bucketSize: number;
  /** module path -> id of its structure (equal ids: same class, same ops, same children, recursively) */
  private readonly structure: Map<string, number>;
  /** node id -> the section group that owns it, for nodes of modules split into sections */
  private readonly sectionOwner = new Map<number, string>();

  constructor(graph: TraceGraph, bucketSize = BUCKET_SIZE) {
    this.groups = new Map();
    this.graph = graph;
    this.bucketSize = bucketSize;
    this.structure = structureIds(graph);
    this.addScope('', null);
    this.ownerOf = new Int32Array(graph.nodes.length);
    this.order = [...this.groups.keys()];
    this.groupIndex = new Map(this.order.map((id, i) => [id, i]));
    for (const n of graph.nodes) {
      const owner = this.sectionOwner.get(n.id) ?? (this.groups.has(n.scope) ? n.scope : '');
      this.groups.get(owner)!.nodeIds.push(n.id);
      this.ownerOf[n.id] = this.groupIndex.get(owner)!;
      if (n.role === 'op') {
        for (let g: string | null = owner; g !== null; g = this.groups.get(g)!.parent) {
          this.groups.get(g)!.opCount += 1;
        }
      }
    }
  }

  private make(
    id: string,
    label: string,
    type: string,
    parent: string | null,
    isBucket: boolean,
    repeat = 0,
    sectionOf: string | null = null
  ): void {
    const depth = parent === null ? 0 : this.groups.get(parent)!.depth + 1;
    const g: Group = {
      id,
      label,
      type,
      parent,
      children: [],
      nodeIds: [],
      opCount: 0,
      isBucket,
      repeat,
      sectionOf,
      depth
    };
    this.groups.set(id, g);
    if (parent !== null) {
      this.groups.get(parent)!.children.push(id);
    }
  }

  private addScope(path: string, parent: string | null): void {
    const scope = this.graph.scopes.get(path)!;
    this.make(path, path === '' ? this.graph.method : scope.name, scope.type, parent, false);
    this.attachItems(path, path, this.foldRepeats(scope.children));
    this.attachSections(path, scope.nodeIds);
  }

  /**
   * Split a module's own nodes into sections of SECTION_SIZE ops in graph order (the nodes that are no ops go
   * with the ops after them; trailing ones with the last section), bucketed when many; none when few.
   */
  private attachSections(path: string, nodeIds: number[]): void {
    const isOp = (id: number): boolean => this.graph.nodes[id].role === 'op';
    if (nodeIds.filter(isOp).length <= SECTION_SIZE) {
      return;
    }
    const sections: number[][] = [[]];
    let ops = 0;
    for (const id of nodeIds) {
      if (isOp(id) && ops === SECTION_SIZE) {
        sections.push([]);
        ops = 0;
      }
      sections[sections.length - 1].push(id);
      ops += isOp(id) ? 1 : 0;
    }
    const n = sections.length;
    const attach = (parent: string, first: number, last: number): void => {
      const count = last - first + 1;
      if (count <= this.bucketSize) {
        for (let k = first; k <= last; k++) {
          const id = `${path}@${k + 1}`;
          this.make(id, `part ${k + 1} of ${n}`, '', parent, true, 0, path);
          sections[k].forEach(node => this.sectionOwner.set(node, id));
        }
        return;
      }
      let chunk = this.bucketSize;
      while (Math.ceil(count / chunk) > this.bucketSize) {
        chunk *= this.bucketSize;
      }
      for (let k = first; k <= last; k += chunk) {
        const end = Math.min(k + chunk - 1, last);
        const id = `${path}@${k + 1}..${end + 1}`;
        this.make(id, `parts ${k + 1} … ${end + 1} of ${n}`, '', parent, true, 0, path);
        attach(id, k, end);
      }
    };
    attach(path, 0, n - 1);
  }

  /**
   * Runs of at least REPEAT_MIN children numbered one after the other (`layer.0`, `layer.1`, … as ModuleList and
   * Sequential name them) of one known class and one structure become one item.
   */
  private foldRepeats(children: string[]): Item[] {
    const items: Item[] = [];
    const scopes = this.graph.scopes;
    const index = (path: string): number => (INDEX.test(scopes.get(path)!.name) ? Number(scopes.get(path)!.name) : -1);
    let i = 0;
    while (i < children.length) {
      const first = children[i];
      let j = i + 1;
      if (index(first) >= 0 && scopes.get(first)!.type !== '') {
        while (
          j < children.length &&
          index(children[j]) === index(children[j - 1]) + 1 &&
          this.structure.get(children[j]) === this.structure.get(first)
        ) {
          j++;
        }
      }
      if (j - i >= REPEAT_MIN) {
        items.push(children.slice(i, j));
      } else {
        items.push(...children.slice(i, j));
      }
      i = j;
    }
    return items;
  }

  private firstPath(item: Item): string {
    return typeof item === 'string' ? item : item[0];
  }

  private lastPath(item: Item): string {
    return typeof item === 'string' ? item : item[item.length - 1];
  }

  /** Attach `items` (children of the module `owner`) under the group `parent`, bucketed when many. */
  private attachItems(parent: string, owner: string, items: Item[]): void {
    const size = this.bucketSize;
    const name = (path: string): string => this.graph.scopes.get(path)!.name;
    if (items.length <= size) {
      for (const item of items) {
        if (typeof item === 'string') {
          this.addScope(item, parent);
          continue;
        }
        const id = `${parent}~${name(item[0])}..${name(item[item.length - 1])}`;
        const type = this.graph.scopes.get(item[0])!.type;
        this.make(id, `${type} ×${item.length}`, '', parent, true, item.length);
        this.attachItems(id, owner, item);
      }
      return;
    }
    // split into buckets of `size`, nesting buckets until each level fits
    let chunk = size;
    while (Math.ceil(items.length / chunk) > size) {
      chunk *= size;
    }
    const prefix = owner === '' ? '' : name(owner) + ' ';
    for (let i = 0; i < items.length; i += chunk) {
      const part = items.slice(i, i + chunk);
      const first = name(this.firstPath(part[0]));
      const last = name(this.lastPath(part[part.length - 1]));
      const id = `${parent}#${first}..${last}`;
      this.make(id, `${prefix}${first} … ${last}`, '', parent, true);
      this.attachItems(id, owner, part);
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
   * breadth-first while the visible items (boxes + own ops) stay within `limit`, leaving repeat groups
   * folded unless `openRepeats`.
   */
  autoExpanded(limit = AUTO_EXPAND_LIMIT, openRepeats = false): Set<string> {
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
      if (g.repeat && !openRepeats) {
        continue; // the point of a repeat group is to show the block once: the user opens it
      }
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

  /**
   * `expanded` with the group opened, and with it the chain of groups below that hold nothing else (a container
   * module whose only content is a ModuleList, or the repeat group of its layers): a click shows contents, not a
   * single box inside a frame (Model Explorer does the same).
   */
  opened(id: string, expanded: Set<string>): Set<string> {
    const out = new Set(expanded);
    let g = this.group(id);
    out.add(g.id);
    while (g.children.length === 1 && !g.nodeIds.some(n => this.graph.nodes[n].role === 'op')) {
      g = this.group(g.children[0]);
      out.add(g.id);
    }
    return out;
  }

  /** `expanded` with the group closed, and every group inside it (the root stays open). */
  closed(id: string, expanded: Set<string>): Set<string> {
    const out = new Set<string>();
    for (const g of expanded) {
      if (g === '' || !this.isInside(g, id)) {
        out.add(g);
      }
    }
    return out;
  }

  /** Whether group `id` is `ancestor` or inside it. */
  private isInside(id: string, ancestor: string): boolean {
    for (let g: string | null = id; g !== null; g = this.groups.get(g)?.parent ?? null) {
      if (g === ancestor) {
        return true;
      }
    }
    return false;
  }

  /**
   * `collapsedAncestor` for many nodes of one view: the answer is worked out once per owning group, so a view of
   * a 60k-node graph costs one lookup per node, not a walk up the tree.
   */
  collapsedAncestors(expanded: Set<string>): (nodeId: number) => string | null {
    const memo = new Map<number, string | null>();
    return (nodeId: number): string | null => {
      const owner = this.ownerOf[nodeId];
      let found = memo.get(owner);
      if (found === undefined) {
        found = this.collapsedAncestor(nodeId, expanded);
        memo.set(owner, found);
      }
      return found;
    };
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

/**
 * An id per module path; two modules get the same id when they have the same class, the same op kinds in the
 * same order, and the same children (by name) with the same ids, recursively (mirrors render/groups.py).
 */
export function structureIds(graph: TraceGraph): Map<string, number> {
  const idOf = new Map<string, number>();
  const known = new Map<string, number>();
  const visit = (path: string): number => {
    const scope = graph.scopes.get(path)!;
    const parts = [
      scope.type,
      scope.nodeIds
        .filter(id => graph.nodes[id].role === 'op')
        .map(id => graph.nodes[id].kind)
        .join(',')
    ];
    for (const child of scope.children) {
      parts.push(`${graph.scopes.get(child)!.name}=${visit(child)}`);
    }
    const text = parts.join('|');
    let id = known.get(text);
    if (id === undefined) {
      id = known.size;
      known.set(text, id);
    }
    idOf.set(path, id);
    return id;
  };
  visit('');
  return idOf;
}
