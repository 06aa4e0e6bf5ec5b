/**
 * Is this saved run something we can show? A run read from a notebook or a report file may have been edited,
 * truncated or written by another version; checked against the run's JSON Schema (the same file the Python tests
 * validate real runs against), a malformed one gets one clear message instead of a renderer that throws later,
 * on a click. Live runs come from our own kernel and are not checked (a 70k-node run would cost a frame).
 * The validator is Ajv's, compiled from the schema at build time (run.validate.generated.js); a run that matches
 * the schema is then checked for ids that point nowhere (references.ts), and gets the same one message.
 */
import type { ErrorObject } from 'ajv';

import { upgradeRun } from './legacy';
import { runProblem, TraceRunJSON } from './protocol';
import { referenceProblem } from './references';
import validate from './run.validate.generated';

/** A JSON pointer in words: "/graphs/forward/nodes/3" -> "graphs › forward › nodes › 3". */
function placeOf(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map(part => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join(' › ');
}

/** Where in the run and what is wrong, in words ("at graphs › forward › nodes › 3: must be array"). */
function describe(error: ErrorObject): string {
  const path = placeOf(error.instancePath);
  const detail =
    error.keyword === 'additionalProperties'
      ? `unexpected field ${JSON.stringify((error.params as { additionalProperty: string }).additionalProperty)}`
      : error.keyword === 'required'
        ? `missing field ${JSON.stringify((error.params as { missingProperty: string }).missingProperty)}`
        : (error.message ?? 'is invalid');
  return path ? `at ${path}: ${detail}` : detail;
}

/**
 * Null when `data` is a run this front end can show; else why not, and what to do about it. The kind and the
 * schema version are checked first: "saved by another version" says more than the first field that differs.
 */
export function savedRunProblem(data: unknown): string | null {
  if (typeof data === 'string') {
    // the renderer parses the saved text first (mime.ts `savedRun`): text left over is not JSON
    return 'the saved run is not valid JSON. The output was probably edited or cut short: re-run the cell to trace again.';
  }
  data = upgradeRun(data); // a run saved by version 1 is read as the current layout (legacy.ts)
  const basic = runProblem(data);
  if (basic) {
    return basic;
  }
  let why: string;
  if (validate(data)) {
    // the schema holds; do its ids point at something? (a node's input 999 drew an empty graph, then threw)
    const dangling = referenceProblem(data as TraceRunJSON);
    if (!dangling) {
      return null;
    }
    why = `at ${placeOf(dangling.at)}: ${dangling.detail}`;
  } else {
    const first = validate.errors?.[0];
    why = first ? describe(first) : 'it does not match the run schema';
  }
  return (
    `not a valid jupyter-tracejit run (${why}). ` +
    'The output was probably edited or cut short: re-run the cell to trace again.'
  );
}
