/**
 * What torch.export adds to the explorer (its registry row is core/export/backend.py): the Guards, Dims (the
 * dynamic_shapes editor) and "Trace vs export" tabs, the symbols' ranges on a shape's tooltip, the note on a
 * draft_export graph, and under the header the draft's offer and the run's dims as the --dynamic flags to paste.
 */

import type { BackendViews } from '../../state/panels';
import { dimsBannerOf } from './DimsBanner';
import { DIMS_PANEL } from './DimsPanel';
import { draftBannerOf } from './DraftBanner';
import { DRAFT_GRAPH_NOTE, exportRecords, shapeTitle, showsDraftGraph } from './exportReport';
import { GUARDS_PANEL } from './GuardsPanel';
import { TRACE_VS_EXPORT_PANEL } from './TraceVsExportPanel';

export const EXPORT_VIEWS: BackendViews = {
  panels: [GUARDS_PANEL, DIMS_PANEL, TRACE_VS_EXPORT_PANEL],
  shapeTitle: (run, shape) => shapeTitle(exportRecords(run.raw), shape),
  draftNote: run => (showsDraftGraph(run.raw) ? DRAFT_GRAPH_NOTE : null),
  banners: [draftBannerOf, dimsBannerOf]
};
