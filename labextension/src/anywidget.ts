/**
 * The live trace explorer as an anywidget front-end module (`jupyter_tracejit/static/explorer.mjs`, built by
 * `npm run build:anywidget`; `jupyter_tracejit.widgets.AnyTraceExplorer` sends it to the page as its `_esm`).
 *
 * It mounts the same `Explorer` on the same `WidgetHost` as the JupyterLab extension's ipywidgets view
 * (widget.ts); `AnyModelAdapter` is the only difference. Graphviz (WASM inlined) lays out in a Web Worker that is
 * this very module: the build swaps `graph/layout` (a Worker from a file beside the bundle, which a module sent
 * over a comm does not have) for the report's `layout-inline`, told to start `import.meta.url` as a module worker;
 * started there (no `document`), the module serves layouts instead of rendering. Where no such worker can start
 * (a CSP forbidding it), layouts fall back to the page's main thread.
 */
import { Explorer } from './explorer/Explorer';
import { mountLive } from './explorer/mount';
import { AnyModel, AnyModelAdapter } from './state/anymodel';
import { ILayoutScope, layoutMode, LayoutMode, serveLayouts, setWorkerModule } from './report/layout-inline';

/** Classes and attributes that say "dark" on the hosts we know; else the browser's colour scheme. */
const DARK_MARKERS = ['.dark', '.dark-theme', '[data-theme="dark"]', '.vscode-dark', '[theme="dark"]'];
const LIGHT_MARKERS = ['.light', '.light-theme', '[data-theme="light"]', '.vscode-light', '[theme="light"]'];

/** `el` and its ancestors, crossing shadow roots (marimo renders widgets in one). */
function ancestors(el: Element): Element[] {
  const out: Element[] = [];
  let node: Node | null = el;
  while (node) {
    if (node instanceof Element) {
      out.push(node);
    }
    node = node.parentNode ?? (node instanceof ShadowRoot ? node.host : null);
  }
  return out;
}

/** Whether the host page is dark: the nearest theme marker, else JupyterLab's attribute, else the browser's. */
export function hostIsDark(el: Element): boolean {
  for (const node of ancestors(el)) {
    const jp = node.getAttribute('data-jp-theme-light');
    if (jp !== null) {
      return jp === 'false';
    }
    if (DARK_MARKERS.some(s => node.matches(s))) {
      return true;
    }
    if (LIGHT_MARKERS.some(s => node.matches(s))) {
      return false;
    }
  }
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ?? false;
}

/**
 * Whether the host defines JupyterLab's theme variables itself (JupyterLab, Notebook 7, VS Code's Jupyter). An
 * element not yet in the page inherits nothing (anywidget may render before the output is attached): then the
 * page's own body says, where those hosts define them.
 */
function hostHasJupyterTheme(el: Element): boolean {
  const probe = el.isConnected ? el : document.body;
  return getComputedStyle(probe).getPropertyValue('--jp-layout-color1').trim() !== '';
}

/**
 * Outside Jupyter the explorer brings its own `--jp-*` palette (`.jp-TraceExplorer-anyTheme` in explorer.css,
 * from the report's theme) and follows the host's light / dark switch; in Jupyter it leaves theming to it.
 */
function followHostTheme(el: HTMLElement): () => void {
  if (hostHasJupyterTheme(el)) {
    return () => undefined;
  }
  el.classList.add('jp-TraceExplorer-anyTheme');
  const apply = (): void => {
    const light = String(!hostIsDark(el));
    if (el.dataset.jpThemeLight !== light) {
      el.dataset.jpThemeLight = light;
    }
  };
  apply();
  const observer = new MutationObserver(apply);
  const watched = ancestors(el).slice(1);
  for (const node of watched) {
    observer.observe(node, {
      attributes: true,
      attributeFilter: ['class', 'data-theme', 'theme', 'data-jp-theme-light']
    });
  }
  const media = window.matchMedia?.('(prefers-color-scheme: dark)');
  media?.addEventListener('change', apply);
  return () => {
    observer.disconnect();
    media?.removeEventListener('change', apply);
  };
}

/** What a test or the curious can reach: `el.tracejitExplorer.rendered` settles when the graph is laid out. */
interface IExplorerElement extends HTMLElement {
  tracejitExplorer?: Explorer;
  /** Where Graphviz runs: `worker`, `main-thread`, or `pending` before the first layout. */
  tracejitLayoutMode?: () => LayoutMode;
}

function render({ model, el }: { model: AnyModel; el: HTMLElement }): () => void {
  el.classList.add('jp-TraceExplorer');
  const stopTheme = followHostTheme(el);
  const adapter = new AnyModelAdapter(model);
  const explorer = mountLive(el, adapter);
  (el as IExplorerElement).tracejitExplorer = explorer;
  (el as IExplorerElement).tracejitLayoutMode = layoutMode;
  el.dataset.tracejit = 'mounted';
  return () => {
    stopTheme();
    explorer.dispose(); // disposes the WidgetHost, which lets go of the adapter
    adapter.dispose(); // and the adapter of the anywidget model
    delete (el as IExplorerElement).tracejitExplorer;
    delete (el as IExplorerElement).tracejitLayoutMode;
  };
}

if (typeof document === 'undefined') {
  // started by setWorkerModule below, in a worker: lay out graphs for the page
  serveLayouts(self as unknown as ILayoutScope);
} else {
  // a Blob URL (anywidget in JupyterLab imports the module from one and revokes it right after): start now
  setWorkerModule(import.meta.url, import.meta.url.startsWith('blob:'));
}

export default { render };
