/**
 * The explorer's tabs, in order: the views every run has, then each back end's own (backends/index.ts), then the
 * Diff of a displayed tj.diff. Each tab says itself when it applies and what its title counts (state/panels.ts).
 */

import { BACKEND_VIEWS } from '../backends';
import { CHECK_PANEL } from '../check/CheckPanel';
import { DIFF_PANEL } from '../diff/DiffPanel';
import { INSPECTOR_PANEL } from '../inspector/Inspector';
import type { PanelSpec } from '../state/panels';
import { WARNINGS_PANEL } from '../warnings/WarningsPanel';

export const PANELS: readonly PanelSpec[] = [
  INSPECTOR_PANEL,
  WARNINGS_PANEL,
  CHECK_PANEL,
  ...BACKEND_VIEWS.flatMap(backend => backend.panels),
  DIFF_PANEL
];
