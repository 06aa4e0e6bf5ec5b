/**
 * Search nodes by kind, debug name, module scope or source line, with next / previous.
 *
 * Query forms (case-insensitive):
 * - `file.py:12` or `:12` or `line:12`, or a place as the views write it (`cell [9], line 7`, `fileNames`): nodes
 *   recorded at that source line (user frame), and the nodes a warning at that line maps to (`atLine`: a frozen
 *   `if` records nothing at its own line; its warning points at the branch it froze);
 * - `%name`: nodes with an output whose debug name starts with `name`;
 * - `kind:aten::add` / `scope:layer1.0`: only that field;
 * - anything else: substring of the kind (`linear`, `aten::add`), a debug name, or the scope path.
 * Foldable nodes (constants, GetAttr, list plumbing) are skipped unless `includeFolded`.
 */

import { basename, TraceGraph, userFrame } from './graph';
import { FileNames } from './location';

/** Nodes that belong to a source line although not recorded there (a warning's `node_ids`). */
export interface LineNodes {
  file: string;
  line: number;
  nodeIds: number[];
}

export interface SearchOptions {
  includeFolded?: boolean;
  /** file -> display name (`cell [9]`), so a place written `cell [9], line 7` is found */
  fileNames?: FileNames;
  /** more nodes per line (the warnings of the method) */
  atLine?: LineNodes[];
}

/** `cell [9], line 7` -> the files named `cell [9]` and line 7; null when the query is not such a place. */
function namedPlace(q: string, fileNames: FileNames): { files: Set<string>; line: number } | null {
  const m = /^(.+?),\s*line\s+(\d+)$/.exec(q);
  if (!m) {
    return null;
  }
  const name = m[1].trim();
  const files = new Set(
    Object.entries(fileNames)
      .filter(([, shown]) => shown.toLowerCase() === name)
      .map(([file]) => file.toLowerCase())
  );
  return files.size ? { files, line: Number(m[2]) } : null;
}

export function searchNodes(graph: TraceGraph, query: string, options: SearchOptions = {}): number[] {
  const q = query.trim().toLowerCase();
  if (!q) {
    return [];
  }
  const nodes = options.includeFolded ? graph.nodes : graph.nodes.filter(n => n.role === 'op');
  const place = namedPlace(q, options.fileNames ?? {});
  const lineMatch = place ? null : /^(?:line:|(.*?):)(\d+)$/.exec(q);
  if (place || lineMatch) {
    const file = place ? '' : (lineMatch![1] ?? '').trim();
    const line = place ? place.line : Number(lineMatch![2]);
    const fileFits = (path: string): boolean => {
      const full = path.toLowerCase();
      if (place) {
        return place.files.has(full);
      }
      return !file || full === file || basename(full) === file || full.endsWith('/' + file);
    };
    const hits = new Set(
      nodes
        .filter(n => {
          const f = userFrame(n.source);
          return f !== null && f.line === line && fileFits(f.file);
        })
        .map(n => n.id)
    );
    const shown = new Set(nodes.map(n => n.id));
    for (const extra of options.atLine ?? []) {
      if (extra.line === line && fileFits(extra.file)) {
        extra.nodeIds.filter(id => shown.has(id)).forEach(id => hits.add(id));
      }
    }
    return [...hits].sort((a, b) => a - b);
  }
  if (q.startsWith('kind:')) {
    const k = q.slice(5).trim();
    return nodes.filter(n => n.kind.toLowerCase().includes(k)).map(n => n.id);
  }
  if (q.startsWith('scope:')) {
    const s = q.slice(6).trim();
    return nodes.filter(n => n.scope.toLowerCase() === s || n.scope.toLowerCase().startsWith(s + '.')).map(n => n.id);
  }
  if (q.startsWith('%')) {
    const name = q.slice(1);
    return nodes.filter(n => n.outputs.some(v => graph.values[v].name.toLowerCase().startsWith(name))).map(n => n.id);
  }
  return nodes
    .filter(
      n =>
        n.kind.toLowerCase().includes(q) ||
        n.scope.toLowerCase().includes(q) ||
        n.outputs.some(v => graph.values[v].name.toLowerCase() === q)
    )
    .map(n => n.id);
}

/** Cycles through search hits; `label` is "2 of 7" / "no match". */
export class SearchCursor {
  readonly hits: number[];
  private index = -1;

  constructor(hits: number[]) {
    this.hits = hits;
  }

  get current(): number | null {
    return this.index < 0 ? null : this.hits[this.index];
  }

  get label(): string {
    if (this.hits.length === 0) {
      return 'no match';
    }
    return `${this.index < 0 ? '–' : this.index + 1} of ${this.hits.length}`;
  }

  /** Next hit, wrapping around at the end. */
  next(): number | null {
    if (this.hits.length === 0) {
      return null;
    }
    this.index = (this.index + 1) % this.hits.length;
    return this.hits[this.index];
  }

  /** Previous hit, wrapping around at the start. */
  previous(): number | null {
    if (this.hits.length === 0) {
      return null;
    }
    this.index = this.index <= 0 ? this.hits.length - 1 : this.index - 1;
    return this.hits[this.index];
  }
}
