/**
 * Saved runs mutated many ways (deletions, values of another kind, ids moved out of range, deep nesting): each is
 * either refused by savedRunProblem with its one message, or decoded, and then everything the views derive from it
 * (summary, verdict, divergences and their causes, each graph's text, groups, visible DOT, search, the inspector's
 * arguments, the opening focus) works without throwing. tests/core/test_validate.py does the same on the Python side.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { describe, expect, it } from 'vitest';

import { divergencePlace, groupByCause } from '../src/model/causes';
import { visibleDot } from '../src/model/dot';
import { GroupTree } from '../src/model/groups';
import { openingFocus } from '../src/model/opening';
import { argumentsOf, decodeRun, TraceRunModel } from '../src/model/run';
import { searchNodes } from '../src/model/search';
import { savedRunProblem } from '../src/model/validate';
import { dir } from './runFixtures';

const MUTATIONS = Number(process.env.TRACEJIT_FUZZ ?? 300);
const ODD_VALUES: unknown[] = [null, true, false, 0, -1, -7, 1, 2, 1e9, 0.5, -2.5, '', 'x', [], [0], {}, { a: 1 }];

/** A small seeded generator (mulberry32): the same mutations on every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Json = Record<string, unknown> | unknown[];

function nest(levels: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < levels; i++) {
    value = [value];
  }
  return value;
}

/** Every [parent, key] in `data`, not inside a nest a mutation made. */
function places(data: Json): [Json, string | number][] {
  const out: [Json, string | number][] = [];
  const stack: [Json, number][] = [[data, 0]];
  while (stack.length) {
    const [item, depth] = stack.pop()!;
    const keys: (string | number)[] = Array.isArray(item) ? item.map((_, i) => i) : Object.keys(item);
    for (const key of keys) {
      out.push([item, key]);
      const child = (item as Record<string | number, unknown>)[key];
      if (child !== null && typeof child === 'object' && depth < 12) {
        stack.push([child as Json, depth + 1]);
      }
    }
  }
  return out;
}

function mutate(data: Json, next: () => number): string {
  const all = places(data);
  const [parent, key] = all[Math.floor(next() * all.length)];
  const slot = parent as Record<string | number, unknown>;
  const old = slot[key];
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)];
  const how = pick(['delete', 'swap', 'swap', 'shift', 'shift', 'nest', 'duplicate', 'empty']);
  if (how === 'delete') {
    if (Array.isArray(parent)) {
      parent.splice(key as number, 1);
    } else {
      delete slot[key];
    }
  } else if (how === 'shift' && typeof old === 'number' && Number.isInteger(old)) {
    slot[key] = old + pick([-2, -1, 1, 2, 50, 1e6]);
  } else if (how === 'nest') {
    slot[key] = nest(pick([5, 80, 2000]));
  } else if (how === 'duplicate' && Array.isArray(old) && old.length) {
    old.push(pick(old));
  } else if (how === 'empty' && (Array.isArray(old) || typeof old === 'string')) {
    slot[key] = Array.isArray(old) ? [] : '';
  } else {
    slot[key] = structuredClone(pick(ODD_VALUES));
  }
  return `${how} at ${String(key)}`;
}

function useEverything(run: TraceRunModel): void {
  void [run.summary, run.verdict, run.problems, run.defaultMethod, run.userWarnings, run.ok];
  for (const d of run.divergences) {
    run.caseOf(d);
    divergencePlace(run, d);
  }
  groupByCause(run);
  for (const [method, graph] of run.graphs) {
    graph.text();
    const groups = new GroupTree(graph);
    visibleDot(graph, groups, { expanded: groups.autoExpanded() });
    searchNodes(graph, 'a');
    for (const node of graph.nodes) {
      argumentsOf(run, graph, node);
    }
    openingFocus(run, method, run.divergences[0] ?? null);
  }
}

describe('mutated saved runs', () => {
  it.each(['net', 'loop', 'error', 'causes', 'hostile'])(
    '%s: each is refused with one message, or decoded and usable',
    name => {
      const text = readFileSync(join(dir, `${name}.run.json`), 'utf8');
      const next = random([...name].reduce((h, c) => h * 31 + c.charCodeAt(0), 7) | 0);
      const crashes: string[] = [];
      let refused = 0;
      for (let i = 0; i < MUTATIONS; i++) {
        const data = JSON.parse(text) as Json;
        const rounds = [1, 1, 1, 2, 3][Math.floor(next() * 5)];
        const what = Array.from({ length: rounds }, () => mutate(data, next)).join('; ');
        let problem: string | null;
        try {
          problem = savedRunProblem(data);
        } catch (e) {
          crashes.push(`${what}: the check threw ${String(e)}`);
          continue;
        }
        if (problem) {
          refused++;
          expect(problem).toMatch(
            /^(not a valid jupyter-tracejit run \(|not a jupyter-tracejit run|this run was saved)/
          );
          continue;
        }
        try {
          useEverything(decodeRun(data, savedRunProblem));
        } catch (e) {
          crashes.push(`${what}: decoded, then ${String(e)}`);
        }
      }
      expect(crashes.slice(0, 10)).toEqual([]);
      expect(refused).toBeGreaterThan(0);
      expect(refused).toBeLessThan(MUTATIONS);
    },
    60_000
  );
});
