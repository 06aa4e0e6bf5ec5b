/**
 * Do the ids inside a saved run point at something? The run schema (model/validate.ts) checks each field's form;
 * it cannot see that a node's input 999 names no value, and such a run drew an empty graph with uncaught
 * TypeErrors ("Cannot read properties of undefined (reading 'source')"). The rules, in the same order and words,
 * are jupyter_tracejit/core/validate.py's `reference_problems`: labextension/test/fixtures/references.cases.json,
 * written by the Python side, holds damaged runs and the problem it names for each, and both test suites read it.
 *
 * Called only on a run that passed the schema, so the types below hold.
 */
import type { CheckCaseJSON, GraphDiffJSON, GraphJSON, TraceRunJSON } from './protocol';

/** Attribute values (a node's constants) nested deeper than this are refused: the renderers walk them recursively. */
export const MAX_ATTRIBUTE_DEPTH = 64;

/** Where (a JSON pointer) and what is wrong. */
export interface ReferenceProblem {
  at: string;
  detail: string;
}

function pointer(path: string, key: string | number): string {
  return `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/** Why `value` is not an index of a table of `size` (-1 allowed when `optional`), or null. */
function index(value: number, size: number, what: string, optional = false): string | null {
  if ((optional && value === -1) || (value >= 0 && value < size)) {
    return null;
  }
  const has = size ? `${size} ${what}s, 0..${size - 1}` : `no ${what}s`;
  return `${what} ${value} points nowhere (the graph has ${has}${optional ? ', or -1 for none' : ''})`;
}

/** The JSON kind of a value, as the Python side names it. */
function kindOf(x: unknown): string {
  if (x === null) {
    return 'null';
  }
  if (Array.isArray(x)) {
    return 'array';
  }
  if (typeof x === 'number') {
    return Number.isInteger(x) ? 'integer' : 'number';
  }
  return typeof x;
}

/** Why a node's attribute values cannot be shown, or null: nested too deeply, or a tensor constant of another form. */
function attributeProblem(attributes: unknown): string | null {
  const stack: [unknown, number][] = [[attributes, 0]];
  while (stack.length) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') {
      continue;
    }
    if (depth >= MAX_ATTRIBUTE_DEPTH) {
      return `attribute values nest deeper than ${MAX_ATTRIBUTE_DEPTH} levels`;
    }
    if (!Array.isArray(item) && 'tensor' in item) {
      const tensor = (item as { tensor: unknown }).tensor;
      if (tensor === null || typeof tensor !== 'object' || Array.isArray(tensor)) {
        return 'a tensor constant must be an object';
      }
      const fields = tensor as Record<string, unknown>;
      for (const [key, kind] of [
        ['shape', 'array'],
        ['preview', 'array'],
        ['dtype', 'string']
      ]) {
        if (key in fields && kindOf(fields[key]) !== kind) {
          return `a tensor constant's ${key} must be ${kind}, not ${kindOf(fields[key])}`;
        }
      }
    }
    const children = Array.isArray(item) ? item : Object.values(item);
    for (const child of children) {
      stack.push([child, depth + 1]);
    }
  }
  return null;
}

/** A string index's problem, at `where`. */
function* stringIndex(i: number, graph: GraphJSON, where: string): Generator<ReferenceProblem> {
  const why = index(i, graph.strings.length, 'string');
  if (why) {
    yield { at: where, detail: why };
  }
}

/** Value ids at `at/<j>`: each an index of the values, then whatever else `also` asks of it. */
function* valueIds(
  ids: number[],
  graph: GraphJSON,
  at: string,
  also: (v: number) => string | null = () => null
): Generator<ReferenceProblem> {
  for (const [j, v] of ids.entries()) {
    const why = index(v, graph.values.length, 'value') ?? also(v);
    if (why) {
      yield { at: `${at}/${j}`, detail: why };
    }
  }
}

function* graphProblems(graph: GraphJSON, at: string): Generator<ReferenceProblem> {
  yield* frameProblems(graph, at);
  yield* valueProblems(graph, at);
  const blockOwner = new Map<number, number>();
  for (let i = 0; i < graph.nodes.length; i++) {
    yield* nodeProblems(graph, i, `${at}/nodes/${i}`, blockOwner);
  }
  yield* parentCycles(graph, at);
  for (const key of ['inputs', 'outputs'] as const) {
    yield* valueIds(graph[key], graph, `${at}/${key}`);
  }
  for (const [i, [path, type]] of graph.scopes.entries()) {
    yield* stringIndex(path, graph, `${at}/scopes/${i}/0`);
    yield* stringIndex(type, graph, `${at}/scopes/${i}/1`);
  }
}

/** The frames' strings, the stacks' frames and user frame. */
function* frameProblems(graph: GraphJSON, at: string): Generator<ReferenceProblem> {
  const { frames, stacks } = graph;
  for (const [i, frame] of frames.entries()) {
    for (const column of [0, 2, 3]) {
      yield* stringIndex(frame[column], graph, `${at}/frames/${i}/${column}`);
    }
  }
  for (const [i, row] of stacks.entries()) {
    for (let j = 1; j < row.length; j++) {
      const why = index(row[j], frames.length, 'frame');
      if (why) {
        yield { at: `${at}/stacks/${i}/${j}`, detail: why };
      }
    }
    if (!(row[0] >= 0 && row[0] < row.length - 1)) {
      yield {
        at: `${at}/stacks/${i}/0`,
        detail: `the user frame ${row[0]} is not one of the stack's ${row.length - 1} frames`
      };
    }
  }
}

/** The values' strings, and their producers (a node that outputs them). */
function* valueProblems(graph: GraphJSON, at: string): Generator<ReferenceProblem> {
  const { values, nodes } = graph;
  for (const [i, [name, type, , dtype, device, , producer]] of values.entries()) {
    yield* stringIndex(name, graph, `${at}/values/${i}/0`);
    yield* stringIndex(type, graph, `${at}/values/${i}/1`);
    for (const [column, id] of [
      [3, dtype],
      [4, device]
    ]) {
      if (id !== -1) {
        yield* stringIndex(id, graph, `${at}/values/${i}/${column}`);
      }
    }
    const why = index(producer, nodes.length, 'node', true);
    if (why) {
      yield { at: `${at}/values/${i}/6`, detail: why };
    } else if (producer !== -1 && !nodes[producer][2].includes(i)) {
      yield {
        at: `${at}/values/${i}/6`,
        detail: `node ${producer} is named as its producer but does not output value ${i}`
      };
    }
  }
}

/** Node `i` (at `here`): its strings, values, stack, attributes, parent, and its blocks' values and nodes. */
function* nodeProblems(
  graph: GraphJSON,
  i: number,
  here: string,
  blockOwner: Map<number, number>
): Generator<ReferenceProblem> {
  const { values, stacks, nodes } = graph;
  const [kind, inputs, outputs, scope, stack, attributes, blocks, parent, , , title] = nodes[i];
  yield* stringIndex(kind, graph, `${here}/0`);
  yield* stringIndex(scope, graph, `${here}/3`);
  if (title !== undefined) {
    yield* stringIndex(title, graph, `${here}/10`); // absent in a graph saved before titles
  }
  // graph order is data order: a value is read after the node that makes it (no cycles)
  yield* valueIds(inputs, graph, `${here}/1`, v =>
    values[v][6] >= i ? `value ${v} is read by node ${i} before node ${values[v][6]} makes it` : null
  );
  yield* valueIds(outputs, graph, `${here}/2`);
  for (const [column, why] of [
    [4, index(stack, stacks.length, 'stack', true)],
    [5, attributes ? attributeProblem(attributes) : null],
    [7, index(parent, nodes.length, 'node', true)]
  ] as [number, string | null][]) {
    if (why) {
      yield { at: `${here}/${column}`, detail: why };
    }
  }
  for (const [b, block] of (blocks || []).entries()) {
    yield* blockProblems(graph, i, block, `${here}/6/${b}`, blockOwner);
  }
}

/** A block of node `owner`: its values, and its nodes (each in one block only, with `owner` as its parent). */
function* blockProblems(
  graph: GraphJSON,
  owner: number,
  [blockInputs, blockOutputs, blockNodes]: [number[], number[], number[]],
  here: string,
  blockOwner: Map<number, number>
): Generator<ReferenceProblem> {
  const nodes = graph.nodes;
  yield* valueIds(blockInputs, graph, `${here}/0`);
  yield* valueIds(blockOutputs, graph, `${here}/1`);
  for (const [j, child] of blockNodes.entries()) {
    const where = `${here}/2/${j}`;
    const bad = index(child, nodes.length, 'node');
    if (bad) {
      yield { at: where, detail: bad };
    } else if (blockOwner.has(child)) {
      yield { at: where, detail: `node ${child} is already in a block of node ${blockOwner.get(child)}` };
    } else if (nodes[child][7] !== owner) {
      yield { at: where, detail: `node ${child} is in a block of node ${owner} but its parent is ${nodes[child][7]}` };
    } else {
      blockOwner.set(child, owner);
    }
  }
}

/** No node may be its own ancestor; each node is walked up once (0: not seen, 1: on this walk, 2: reaches the top). */
function* parentCycles(graph: GraphJSON, at: string): Generator<ReferenceProblem> {
  const nodes = graph.nodes;
  const state = new Uint8Array(nodes.length);
  for (let i = 0; i < nodes.length; i++) {
    const walk: number[] = [];
    let j = i;
    while (j >= 0 && j < nodes.length && state[j] === 0) {
      state[j] = 1;
      walk.push(j);
      j = nodes[j][7];
    }
    if (j >= 0 && j < nodes.length && state[j] === 1) {
      yield { at: `${at}/nodes/${i}/7`, detail: `node ${i} is inside itself (its parents go round in a circle)` };
      break;
    }
    for (const k of walk) {
      state[k] = 2;
    }
  }
}

function* nodeIds(ids: number[], graph: GraphJSON | undefined, at: string): Generator<ReferenceProblem> {
  const size = graph ? graph.nodes.length : 0;
  for (const [j, node] of ids.entries()) {
    const why = index(node, size, 'node');
    if (why) {
      yield { at: `${at}/${j}`, detail: why };
    }
  }
}

function* diffProblems(
  diff: GraphDiffJSON,
  trace: GraphJSON | undefined,
  check: GraphJSON | undefined | null,
  at: string
): Generator<ReferenceProblem> {
  const traceNodes = trace ? trace.nodes.length : 0;
  const checkNodes = check ? check.nodes.length : 0;
  for (const [i, [a, b]] of diff.divergences.entries()) {
    for (const [column, node, size] of [
      [0, a, traceNodes],
      [1, b, checkNodes]
    ]) {
      const why = index(node, size, 'node', true);
      if (why) {
        yield { at: `${at}/divergences/${i}/${column}`, detail: why };
      }
    }
  }
  for (const [i, c] of diff.constant_diffs.entries()) {
    for (const [key, size] of [
      ['trace_node', traceNodes],
      ['check_node', checkNodes]
    ] as ['trace_node' | 'check_node', number][]) {
      const why = index(c[key], size, 'node');
      if (why) {
        yield { at: `${at}/constant_diffs/${i}/${key}`, detail: why };
      }
    }
  }
  for (const [i, [a, b, length]] of diff.matched_runs.entries()) {
    if (length < 0 || a < 0 || b < 0 || a + length > traceNodes || b + length > checkNodes) {
      yield {
        at: `${at}/matched_runs/${i}`,
        detail: `the run [${a}, ${b}, ${length}] reaches past the graphs' nodes (${traceNodes} and ${checkNodes})`
      };
    }
  }
}

/** Every id of a schema-valid run that points nowhere. */
export function* referenceProblems(run: TraceRunJSON): Generator<ReferenceProblem> {
  const graphs = run.graphs;
  const graphOf = (method: string): GraphJSON | undefined =>
    Object.prototype.hasOwnProperty.call(graphs, method) ? graphs[method] : undefined;
  for (const [method, graph] of Object.entries(graphs)) {
    yield* graphProblems(graph, pointer('/graphs', method));
  }
  for (const key of ['warnings', 'findings'] as const) {
    for (const [i, item] of run[key].entries()) {
      // node ids are of the graph of the item's method; one with no graph (a failed trace) has none
      yield* nodeIds(item.node_ids, graphOf(item.method), `/${key}/${i}/node_ids`);
    }
  }
  const cases: CheckCaseJSON[] = run.check ? run.check.cases : [];
  for (const [i, c] of cases.entries()) {
    const at = `/check/cases/${i}`;
    if (c.graph) {
      yield* graphProblems(c.graph, `${at}/graph`);
    }
    if (c.diff) {
      const trace = graphOf(c.method);
      // the re-trace's graph is stored only when it differs; otherwise it is the trace's
      yield* diffProblems(c.diff, trace, c.graph ?? trace, `${at}/diff`);
    }
  }
}

/** The first id of a schema-valid run that points nowhere, or null. */
export function referenceProblem(run: TraceRunJSON): ReferenceProblem | null {
  const first = referenceProblems(run).next();
  return first.done ? null : first.value;
}
