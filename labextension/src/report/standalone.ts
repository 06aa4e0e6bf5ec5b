/**
 * The standalone HTML report (`run.save_html(path)`, `tracejit trace ... -o report.html`): one self-contained
 * file with the read-only trace explorer, for opening from disk with no kernel, no server and no network.
 *
 * `jupyter_tracejit/report.py` writes the page: the run JSON in `<script type="application/json"
 * id="tracejit-run">`, an empty `<div id="tracejit-root">`, a text fallback in `<div id="tracejit-fallback">`
 * (what shows when scripts are off), the stylesheet, and this bundle (`jupyter_tracejit/static/report.js`,
 * built by `npm run build:report`) inline. The same script is also the Graphviz layout worker (see
 * `layout-inline.ts`): started in a worker, it serves layouts instead of mounting anything.
 */
import { mountStatic } from '../explorer/mount';
import { RUN_KIND, TraceRunJSON } from '../model/protocol';
import { ILayoutScope, layoutMode, LayoutMode, serveLayouts, setWorkerSource } from './layout-inline';

export const RUN_ELEMENT_ID = 'tracejit-run';
export const ROOT_ELEMENT_ID = 'tracejit-root';
export const FALLBACK_ELEMENT_ID = 'tracejit-fallback';

/** What the page exposes as `window.tracejitReport` (for tests and the curious). */
export interface IReportPage {
  /** Where Graphviz runs: `worker` (the normal case), `main-thread` (no worker could be started) or `pending`. */
  layoutMode(): LayoutMode;
}

function readRun(): TraceRunJSON {
  const el = document.getElementById(RUN_ELEMENT_ID);
  if (el === null) {
    throw new Error(`no <script id="${RUN_ELEMENT_ID}"> with the run on this page`);
  }
  const run = JSON.parse(el.textContent ?? '') as TraceRunJSON;
  if (!run || typeof run !== 'object' || run.kind !== RUN_KIND) {
    throw new Error(`the embedded data is not a jupyter-tracejit run (kind ${RUN_KIND})`);
  }
  return run;
}

/** Mark the theme on <body> as JupyterLab does: the explorer's stylesheet has rules for the dark theme. */
function followColorScheme(): void {
  const dark = window.matchMedia('(prefers-color-scheme: dark)');
  const apply = (): void => {
    document.body.dataset.jpThemeLight = String(!dark.matches);
  };
  apply();
  dark.addEventListener('change', apply);
}

function start(): void {
  const root = document.getElementById(ROOT_ELEMENT_ID);
  if (root === null) {
    console.error(`tracejit report: no element #${ROOT_ELEMENT_ID} on this page`);
    return;
  }
  followColorScheme();
  try {
    mountStatic(root, readRun());
    document.getElementById(FALLBACK_ELEMENT_ID)?.setAttribute('hidden', '');
    document.documentElement.dataset.tracejit = 'mounted';
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    root.textContent = `Could not show the trace explorer: ${message}. The text report below still applies.`;
    root.classList.add('tracejit-report-failed');
    document.documentElement.dataset.tracejit = 'failed';
    console.error(`tracejit report: ${message}`);
  }
}

if (typeof document === 'undefined') {
  // started as the layout worker from a Blob URL of this script's own text
  serveLayouts(self as unknown as ILayoutScope);
} else {
  (window as unknown as { tracejitReport: IReportPage }).tracejitReport = { layoutMode };
  const script = document.currentScript;
  setWorkerSource(script instanceof HTMLScriptElement && !script.src ? script.textContent : null);
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
}
