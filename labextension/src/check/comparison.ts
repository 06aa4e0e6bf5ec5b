/** What the comparison panes show, whoever asks: the check (trace vs re-trace) or two runs of the history. */

import { TraceGraph } from '../model/graph';
import { Divergence, GraphDiff } from '../model/run';

/** What the comparison panes show: a divergence of two graphs, with the sides named by what they are. */
export interface Comparison {
  /** the same key: the same comparison (the panes on screen stay) */
  key: string;
  title: string;
  labels: [string, string];
  a: TraceGraph;
  b: TraceGraph;
  diff: GraphDiff;
  divergence: Divergence;
}
