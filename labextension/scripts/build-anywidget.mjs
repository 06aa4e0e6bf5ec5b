// `npm run build:anywidget`: the live explorer as an anywidget front-end module, from the same sources as the
// JupyterLab extension (labextension/src/anywidget.ts mounts the same Explorer on the same WidgetHost).
//
//   jupyter_tracejit/static/explorer.mjs  one ES module (`export default { render }`), Graphviz's WASM inlined;
//                                         `graph/layout` swapped for the report's `layout-inline`, whose
//                                         worker is this module itself (anywidget.ts, setWorkerModule)
//   jupyter_tracejit/static/explorer.css  labextension/style/*.css + the report's --jp-* palette scoped to
//                                         `.jp-TraceExplorer-anyTheme` (set only where the host has no Jupyter
//                                         theme), dark values under `[data-jp-theme-light='false']`
//
// `jupyter_tracejit/widgets/anyexplorer.py` sends both over the widget's comm (`_esm`, `_css`): nothing is
// fetched from anywhere. Both files are generated (git-ignored) and shipped in the wheel as hatch artifacts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { bundleExplorer, explorerCss, VERSION, writeBundle } from '../src/report/bundle-common.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const THEME_CLASS = '.jp-TraceExplorer-anyTheme';

const started = Date.now();
const js = await bundleExplorer(
  'anywidget',
  path.join(root, 'labextension', 'src', 'anywidget.ts'),
  'esm',
  `/* jupyter-tracejit ${VERSION}: trace explorer anywidget module (npm run build:anywidget) */`
);
// the palette of the standalone report (JupyterLab Light / Dark values), scoped to the widget's element
const reportCss = readFileSync(path.join(root, 'labextension', 'src', 'report', 'report.css'), 'utf8');
const light = /^:root\s*\{([^}]*)\}/m.exec(reportCss);
const dark = /@media \(prefers-color-scheme: dark\)\s*\{\s*:root\s*\{([^}]*)\}\s*\}/m.exec(reportCss);
if (!light || !dark) {
  console.error('build:anywidget: report.css no longer has the :root palette and its dark @media block');
  process.exit(1);
}
const themeCss = `
${THEME_CLASS} {${light[1].replace(/color-scheme:[^;]*;/, '')}
  color-scheme: light;
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
  font-family: var(--jp-ui-font-family);
  font-size: var(--jp-ui-font-size1);
}
${THEME_CLASS}[data-jp-theme-light='false'] {${dark[1]}
  color-scheme: dark;
}
`;
await writeBundle(
  'anywidget',
  started,
  { js: 'explorer.mjs', css: 'explorer.css' },
  js,
  `${themeCss}\n${explorerCss()}`
);
