/**
 * What torch.export adds to the explorer (its registry row is core/export/backend.py): the Guards and "Trace vs
 * export" tabs, the symbols' ranges on a shape's tooltip, the note on a draft_export graph, and the draft's offer
 * under the header.
 */

import type { BackendViews } from '../../state/panels';
import { draftBannerOf } from './DraftBanner';
import { DRAFT_GRAPH_NOTE, exportRecords, shapeTitle, showsDraftGraph } from './exportReport';
import { GUARDS_PANEL } from './GuardsPanel';
import { TRACE_VS_EXPORT_PANEL } from './TraceVsExportPanel';

export const EXPORT_VIEWS: BackendViews = {
  panels: [GUARDS_PANEL, TRACE_VS_EXPORT_PANEL],
  shapeTitle: (run, shape) => shapeTitle(exportRecords(run.raw), shape),
  draftNote: run => (showsDraftGraph(run.raw) ? DRAFT_GRAPH_NOTE : null),
  banners: [draftBannerOf]
};
