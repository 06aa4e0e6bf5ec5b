/**
 * Reading runs saved by earlier versions (mirrors jupyter_tracejit/core/legacy.py): each upgrade turns one
 * version's JSON into the next, so the readers and the schema check only ever see the current layout. A notebook
 * saved with version 1 keeps rendering after the package is updated.
 *
 * - run `schema_version` 1 -> 2: every run was a `torch.jit.trace` (`backend: "trace"`); its graphs as below.
 * - run `schema_version` 2 -> 3 (the back-end registry): `source` says where a run came from, apart from its
 *   `backend`: a TorchScript archive read back (`backend: "torchscript-archive"`) is `trace` from a `file`, an
 *   exported program read back (options `path` and `map_location` only) `export` from a `file`; an export's `export`
 *   records are the run's `records`.
 * - `graph_schema` 1 -> 2: nodes gain their role (version 1 decided it from the TorchScript kind:
 *   `TORCHSCRIPT_ROLES`, generated from the schema); sizes were all numbers, as version 2 still allows.
 */

import { schema2Backend } from './backends';
import { TORCHSCRIPT_ROLES } from './protocol';

type Json = Record<string, unknown>;

function isObject(x: unknown): x is Json {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** A version-1 graph as version 2 (a new object; the input is not changed); anything else as it is. */
export function upgradeGraph(data: unknown): unknown {
  if (!isObject(data) || data.graph_schema !== 1 || !Array.isArray(data.strings) || !Array.isArray(data.nodes)) {
    return data; // a malformed one: the schema check says where
  }
  const strings = data.strings as unknown[];
  const nodes = (data.nodes as unknown[]).map(row => {
    if (!Array.isArray(row) || typeof row[0] !== 'number' || !(row[0] >= 0 && row[0] < strings.length)) {
      return row;
    }
    return [...row, TORCHSCRIPT_ROLES[String(strings[row[0]])] ?? 'op'];
  });
  return { ...data, graph_schema: 2, nodes };
}

/** A run of an earlier version as the current one (a new object sharing the unchanged parts); anything else as
 * it is. */
export function upgradeRun(data: unknown): unknown {
  return upgrade2(upgrade1(data));
}

/** A version-2 run as version 3. */
function upgrade2(data: unknown): unknown {
  if (!isObject(data) || data.schema_version !== 2) {
    return data;
  }
  const { export: records, ...run } = data;
  const options = run.options;
  const { backend, file } = schema2Backend(run.backend);
  const readBack =
    isObject(options) && Object.keys(options).length === 2 && 'path' in options && 'map_location' in options;
  return {
    ...run,
    schema_version: 3,
    backend,
    source: file || readBack ? 'file' : 'capture',
    ...(records !== undefined && records !== null ? { records } : {})
  };
}

/** A version-1 run as version 2. */
function upgrade1(data: unknown): unknown {
  if (!isObject(data) || data.schema_version !== 1) {
    return data;
  }
  const run: Json = { ...data, schema_version: 2, backend: 'trace' };
  if (isObject(run.graphs)) {
    run.graphs = Object.fromEntries(Object.entries(run.graphs).map(([name, g]) => [name, upgradeGraph(g)]));
  }
  if (isObject(run.check) && Array.isArray(run.check.cases)) {
    run.check = {
      ...run.check,
      cases: run.check.cases.map(c => (isObject(c) && 'graph' in c ? { ...c, graph: upgradeGraph(c.graph) } : c))
    };
  }
  return run;
}
