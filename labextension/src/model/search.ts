/**
 * Search nodes by kind, debug name, module scope or source line, with next / previous.
 *
 * Query forms (case-insensitive):
 * - `file.py:12` or `:12` or `line:12`: nodes recorded at that source line (user frame);
 * - `%name`: nodes with an output whose debug name starts with `name`;
 * - `kind:aten::add` / `scope:layer1.0`: only that field;
 * - anything else: substring of the kind (`linear`, `aten::add`), a debug name, or the scope path.
 * Foldable nodes (constants, GetAttr, list plumbing) are skipped unless `includeFolded`.
 */

import { basename, TraceGraph, userFrame } from './graph';

export interface SearchOptions {
  includeFolded?: boolean;
}

export function searchNodes(graph: TraceGraph, query: string, options: SearchOptions = {}): number[] {
  const q = query.trim().toLowerCase();
  if (!q) {
    return [];
  }
  const nodes = options.includeFolded ? graph.nodes : graph.nodes.filter(n => n.role === 'op');
  const lineMatch = /^(?:line:|(.*?):)(\d+)$/.exec(q);
  if (lineMatch) {
    const file = (lineMatch[1] ?? '').trim();
    const line = Number(lineMatch[2]);
    return nodes
      .filter(n => {
        const f = userFrame(n.source);
        if (!f || f.line !== line) {
          return false;
        }
        if (!file) {
          return true;
        }
        const full = f.file.toLowerCase();
        return full === file || basename(full) === file || full.endsWith('/' + file);
      })
      .map(n => n.id);
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
