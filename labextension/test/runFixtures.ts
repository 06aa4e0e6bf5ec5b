/**
 * The runs tests/frontend_fixtures.py writes with the Python model (committed in labextension/test/fixtures), and
 * the facts it derives from each: what the TypeScript tests read (`TRACEJIT_FIXTURES` names another folder).
 */
import { readFileSync } from 'fs';
import { join } from 'path';

import { TraceRunJSON } from '../src/model/protocol';
import { decodeRun, TraceRunModel } from '../src/model/run';

export const dir = process.env.TRACEJIT_FIXTURES ?? join(__dirname, 'fixtures');

/** What `facts()` in tests/frontend_fixtures.py derives from a run with the Python model. */
export interface GraphFacts {
  nodes: number;
  ops: number;
  kinds: Record<string, number>;
  scopes: Record<string, string>;
  scope_children: Record<string, string[]>;
  fold_targets: Record<string, number | null>;
  users_of_inputs: number[][];
  text_first_line: string;
  node_text: Record<string, string>;
  source_lines: [string, number, number[]][];
}

export interface RunFacts {
  ok: boolean;
  summary: string;
  /** Verdict.problems_text: the counts named apart (`1 warning, 2 findings`) */
  problems_text: string;
  graphs: Record<string, GraphFacts>;
  /** `[case, method, trace node, check node, kind, reason]`; only for runs with a check */
  divergences?: [number, string, number | null, number | null, string, string][];
  /** `[case, method, matched node count]`; only for runs with a check */
  matched?: [number, string, number][];
  /** `[category, count, line, node ids]` */
  warnings: [string, number, number, number[]][];
  /** `[kind, portability, is_problem]` */
  findings: [string, boolean, boolean][];
  /** Verdict.problems */
  problems: number;
}

/** The fixture run `name` as saved. */
export function rawRun(name: string): TraceRunJSON {
  return JSON.parse(readFileSync(join(dir, `${name}.run.json`), 'utf8'));
}

/** The fixture run `name`, decoded. */
export function decodedRun(name: string): TraceRunModel {
  return decodeRun(rawRun(name));
}

/** The fixture run `name` decoded and as saved, with the facts the Python model derived from it. */
export function load(name: string): { run: TraceRunModel; facts: RunFacts; raw: TraceRunJSON } {
  const raw = rawRun(name);
  const facts = JSON.parse(readFileSync(join(dir, `${name}.facts.json`), 'utf8'));
  return { run: decodeRun(raw), facts, raw };
}

export const NAMES = ['net', 'loop', 'error', 'mlp', 'hostile'];
