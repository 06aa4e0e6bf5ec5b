/**
 * The wire contract: the JSON that `TraceRun.to_json()` writes and the explorer widget's synced state.
 *
 * The types and constants are generated (`protocol.generated.ts`) from the JSON Schemas the Python package ships
 * (jupyter_tracejit/core/run.schema.json, jupyter_tracejit/widgets/explorer.schema.json); this file names them
 * as the front end uses them and adds the few helpers every reader needs. `run.ts` and `graph.ts` decode a run
 * into the navigable model the views use.
 */

import type { JsonFloat, TraceRun } from './protocol.generated';
import { RUN_KIND, SCHEMA_VERSION } from './protocol.generated';

export type {
  BlockRow,
  DivergenceRow,
  ExplorerOptions,
  ExplorerRequest,
  ExportExplorerOptions,
  ExplorerState,
  ExplorerStatus,
  FrameRow,
  HistoryEntry,
  JsonFloat,
  NodeRole,
  NodeRow,
  NonFinite,
  RecordedOptions,
  StackRow,
  TraceProgress,
  ValueRow,
  Verdict
} from './protocol.generated';
export {
  EXPORT_OPTION_SPECS,
  EXPORT_READ_ONLY_OPTIONS,
  GRAPH_SCHEMA_VERSION,
  NODE_ROLES,
  OPTION_SPECS,
  RUN_KIND,
  SCHEMA_VERSION,
  TORCHSCRIPT_ROLES,
  TRAIT_DEFAULTS,
  WARNING_CATEGORIES
} from './protocol.generated';

// the run's parts under the names the front end gives them (a run's JSON, as against the model run.ts decodes)
export type {
  CheckCase as CheckCaseJSON,
  Comparison as ComparisonJSON,
  ConstantDiff as ConstantDiffJSON,
  Finding as FindingJSON,
  Graph as GraphJSON,
  GraphDiff as GraphDiffJSON,
  OutputComparison as OutputComparisonJSON,
  ProbeReport as ProbeReportJSON,
  Target as TargetJSON,
  TraceError as TraceErrorJSON,
  TraceRun as TraceRunJSON,
  TraceWarning as TraceWarningJSON
} from './protocol.generated';

export function floatValue(x: JsonFloat | null | undefined): number | null {
  if (x === null || x === undefined) {
    return null;
  }
  if (typeof x === 'number') {
    return x;
  }
  switch (x.float) {
    case 'inf':
      return Infinity;
    case '-inf':
      return -Infinity;
    default:
      return NaN;
  }
}

/** Why a value is not a run this version can show, or null when it is one. */
export function runProblem(data: unknown): string | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return 'not a jupyter-tracejit run: expected an object';
  }
  const run = data as Partial<TraceRun>;
  if (run.kind !== RUN_KIND) {
    return `not a jupyter-tracejit run: kind is ${JSON.stringify(run.kind)}`;
  }
  if (run.schema_version !== SCHEMA_VERSION) {
    return (
      `this run was saved with schema_version ${String(run.schema_version)}; ` +
      `this extension reads version ${SCHEMA_VERSION}. Re-run the trace or update jupyter-tracejit.`
    );
  }
  return null;
}
