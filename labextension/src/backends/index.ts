/**
 * The back ends' own views, one folder each (backends/<name>/index.ts): a back end with views of its own adds its
 * folder and one line here. The explorer puts their tabs after the Check tab, in this order.
 */

import type { BackendViews } from '../state/panels';
import { COMPILE_VIEWS } from './compile';
import { EXPORT_VIEWS } from './export';

export const BACKEND_VIEWS: readonly BackendViews[] = [EXPORT_VIEWS, COMPILE_VIEWS];
