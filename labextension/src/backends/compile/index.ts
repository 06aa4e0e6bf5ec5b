/**
 * What torch.compile adds to the explorer (its registry row is core/compile/backend.py): the "Graph breaks" tab
 * (the first call's graphs in order with the breaks between them, a stepper through the breaks) and the
 * "Recompilations" tab (per call, the guards that failed). Its graphs are the run's graphs, one per compiled region,
 * listed in the graph view's graph menu in the order dynamo compiled them.
 */

import type { BackendViews } from '../../state/panels';
import { GRAPH_BREAKS_PANEL } from './GraphBreaksPanel';
import { RECOMPILATIONS_PANEL } from './RecompilationsPanel';

export const COMPILE_VIEWS: BackendViews = {
  panels: [GRAPH_BREAKS_PANEL, RECOMPILATIONS_PANEL]
};
