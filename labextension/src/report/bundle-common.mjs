// What the bundles built with esbuild share: the build itself (options, the layout swap, its checks), the
// explorer's stylesheet, the package's version and the writing of the two files into jupyter_tracejit/static/.
//
// The esbuild plugin is shared by the bundles built outside JupyterLab's rspack (the standalone report, build.mjs;
// the anywidget module, build-anywidget.mjs): `labextension/src/graph/layout` starts a Worker from a file beside
// the bundle, which neither has, so it is swapped for `labextension/src/report/layout-inline.ts` (same API; a
// Blob-URL worker of a given source, else Graphviz on the main thread).
import { build, transform } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const graphLayout = path.join(root, 'labextension', 'src', 'graph', 'layout');
const inlineLayout = path.join(root, 'labextension', 'src', 'report', 'layout-inline.ts');

/** The package's version (package.json's, the same as _version.py's), for the bundles' banners. */
export const VERSION = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version;

/** The plugin, and `swapped()`: how many imports it redirected (0 means the bundle has no layout at all). */
export function inlineLayoutPlugin(bundleName) {
  let swapped = 0;
  const plugin = {
    name: 'tracejit-inline-layout',
    setup(b) {
      b.onResolve({ filter: /(^|\/)layout(\.js|\.ts)?$/ }, args => {
        const target = path.resolve(args.resolveDir, args.path).replace(/\.(js|ts)$/, '');
        if (target !== graphLayout) {
          return undefined;
        }
        swapped += 1;
        return { path: inlineLayout };
      });
      // the worker module must never end up in the bundle: it needs a Worker from a file URL
      b.onLoad({ filter: /layout\.worker\.(ts|js)$/ }, args => ({
        errors: [{ text: `${args.path} reached the ${bundleName} bundle: the layout swap did not apply` }]
      }));
    }
  };
  return { plugin, swapped: () => swapped };
}

/** The explorer's stylesheets, concatenated in the order labextension/style/index.css imports them. */
export function explorerCss() {
  const styleDir = path.join(root, 'labextension', 'style');
  return [...readFileSync(path.join(styleDir, 'index.css'), 'utf8').matchAll(/@import url\('\.\/([\w-]+\.css)'\)/g)]
    .map(m => readFileSync(path.join(styleDir, m[1]), 'utf8'))
    .join('\n');
}

/**
 * Bundle `entry` as one minified file for the browser (Graphviz's WASM inlined, the layout swapped as above) and
 * return its text; any esbuild warning, or no layout swapped, ends the build with `name`'s message.
 */
export async function bundleExplorer(name, entry, format, banner) {
  const inlineLayout = inlineLayoutPlugin(name);
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format,
    platform: 'browser',
    target: ['es2020'],
    minify: true,
    legalComments: 'none',
    charset: 'ascii',
    write: false,
    logLevel: 'silent',
    banner: { js: banner },
    plugins: [inlineLayout.plugin]
  });
  if (result.warnings.length) {
    // e.g. `import.meta` in an IIFE: the bundle would silently misbehave
    for (const w of result.warnings) {
      console.error(`build:${name}: ${w.text}${w.location ? ` (${w.location.file}:${w.location.line})` : ''}`);
    }
    process.exit(1);
  }
  if (inlineLayout.swapped() === 0) {
    console.error(`build:${name}: nothing imported ../graph/layout: the ${name} would have no graph layout`);
    process.exit(1);
  }
  return result.outputFiles[0].text;
}

/**
 * Write a bundle's script and its stylesheet (minified here) into jupyter_tracejit/static/ as `files.js` and
 * `files.css`, and say their sizes and how long the `name` build took since `started`.
 */
export async function writeBundle(name, started, files, js, cssText) {
  const css = await transform(cssText, { loader: 'css', minify: true, charset: 'ascii' });
  const outDir = path.join(root, 'jupyter_tracejit', 'static');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, files.js), js);
  writeFileSync(path.join(outDir, files.css), css.code);
  const kb = n => `${(n / 1024).toFixed(0)} KiB`;
  console.log(
    `build:${name}: jupyter_tracejit/static/${files.js} ${kb(js.length)}, ${files.css} ${kb(css.code.length)} ` +
      `in ${Date.now() - started} ms`
  );
}
