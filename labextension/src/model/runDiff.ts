/**
 * The Diff view of `tj.diff(old, new)` shown on the new run (`run.diff_against`, core/run_diff.py): the verdict,
 * what changed per module scope (the kernel's words: one rule, `ScopeChange.text`), the parameters that differ, one
 * step per changed scope with its root ops on each side, and the two graphs as the comparison panes draw them (a
 * node-for-node matched pair under one name). Torch-free and DOM-free, so vitest checks it on the `diffed` fixture.
 */

import type { DiffAgainst, ParameterChange, RunDiff, ScopeChange } from './protocol.generated';
import { decodeGraph, TraceGraph } from './graph';
import { FileNames } from './location';
import { PairedPictures, pairedPictures } from './align';
import { GraphDiff } from './run';
import { plural } from './words';

/** One step of the Diff view's stepper: a module scope of one method and its root differences. */
export interface ScopeStep {
  /** `encoder.layer.3`; '' for the top level */
  scope: string;
  method: string;
  /** `block.1: 1 op changed (aten::relu -> aten::gelu)` */
  text: string;
  /** one line per root op */
  details: string[];
  /** the roots' node ids per side, in id order */
  oldNodes: number[];
  newNodes: number[];
}

/** Where a scope sits in the module tree, for the tree-wide summary: `encoder.layer.3` -> `encoder`. */
export function topModule(scope: string): string {
  return scope.split('.')[0] ?? '';
}

/**
 * The steps, one per changed scope in the kernel's order (by the graph's order of their first root), `forward`
 * first. Only the scopes of the method the panes draw can be shown there; the others still count as steps (their
 * text says what changed) and mark nothing.
 */
export function scopeSteps(diff: RunDiff): ScopeStep[] {
  return diff.scopes.map((s: ScopeChange) => ({
    scope: s.scope,
    method: s.method,
    text: s.text ?? s.scope,
    details: s.details,
    oldNodes: [...s.old_nodes].sort((a, b) => a - b),
    newNodes: [...s.new_nodes].sort((a, b) => a - b)
  }));
}

/** Per top-level module, how many scopes changed under it (`block: 2 scopes`): the summary's chips. */
export function changedModules(steps: ScopeStep[]): { module: string; scopes: number; text: string }[] {
  const counts = new Map<string, number>();
  for (const s of steps) {
    const m = topModule(s.scope);
    counts.set(m, (counts.get(m) ?? 0) + 1);
  }
  return [...counts].map(([module, scopes]) => ({
    module,
    scopes,
    text: `${module || 'top level'}: ${plural(scopes, 'scope')} changed`
  }));
}

/** The verdict in words: `different: v1.pt -> gelu.pt`, `same: ...`, `not compared: ...` (the summary's first line). */
export function verdict(diff: RunDiff): { level: 'ok' | 'warning' | 'error'; label: string; text: string } {
  const first = (diff.summary_text ?? '').split('\n')[0];
  if (diff.error) {
    return { level: 'error', label: 'not compared', text: first || diff.error };
  }
  const same = diff.same ?? !(diff.scopes.length || diff.parameters.length);
  return same
    ? { level: 'ok', label: 'same', text: first }
    : { level: 'warning', label: 'different', text: `${diff.old} → ${diff.new}` };
}

/** A parameter row: name, what changed, both types, and the largest difference when values were compared. */
export interface ParameterRow {
  name: string;
  change: ParameterChange['change'];
  before: string;
  after: string;
  /** `0.00123`; '' unless values were compared */
  maxAbs: string;
  /** what changed, after the name: `Float(8) → Float(16)`, `added: Float(8)`, `values differ by 0.00123` */
  what: string;
  text: string;
}

export function parameterRows(diff: RunDiff): ParameterRow[] {
  return diff.parameters.map(p => {
    const maxAbs = typeof p.max_abs === 'number' ? p.max_abs.toPrecision(3) : '';
    const what =
      p.change === 'added'
        ? `added: ${p.after}`
        : p.change === 'removed'
          ? `removed: ${p.before}`
          : p.change === 'type'
            ? `${p.before} → ${p.after}`
            : `values differ${maxAbs ? ` by ${maxAbs}` : ''}`;
    return { name: p.name, change: p.change, before: p.before, after: p.after, maxAbs, what, text: p.text ?? p.name };
  });
}

/** The two graphs of the Diff view, decoded and drawn once per run. */
export interface DiffPictures extends PairedPictures {
  old: TraceGraph;
}

/**
 * The old graph and the new run's graph of the view's method as the panes draw them: node-for-node matched pairs
 * (the structural diff's) under one name; each root classed `differs root`, each op that differs only downstream
 * of one `differs downstream`. A trace against an export has no pairing: every op is its own.
 */
export function diffPictures(view: DiffAgainst, current: TraceGraph, fileNames: FileNames = {}): DiffPictures {
  const old = decodeGraph(view.old_graph);
  const pairs = view.graph_diff ? new GraphDiff(view.graph_diff) : null;
  const classes: [Map<number, string[]>, Map<number, string[]>] = [new Map(), new Map()];
  for (const d of pairs?.divergences ?? []) {
    const cls = ['differs', d.kind];
    if (d.traceNode !== null) {
      classes[0].set(d.traceNode, cls);
    }
    if (d.checkNode !== null) {
      classes[1].set(d.checkNode, cls);
    }
  }
  for (const s of view.diff.scopes.filter(s => s.method === view.method)) {
    s.old_nodes.forEach(id => classes[0].set(id, ['differs', 'root']));
    s.new_nodes.forEach(id => classes[1].set(id, ['differs', 'root']));
  }
  const pictures = pairedPictures([old, current], pairs?.matched ?? [], classes, ['o', 'n'], fileNames);
  return { ...pictures, old };
}
