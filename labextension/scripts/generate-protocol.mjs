/**
 * Generates labextension/src/model/protocol.generated.ts from the JSON Schemas of the wire contract:
 * jupyter_tracejit/core/run.schema.json (the run) and jupyter_tracejit/widgets/explorer.schema.json (the widget
 * state). Types come from json-schema-to-typescript; constants (schema versions, the options bar's options and
 * the widget traits' defaults) are read from the same schemas, so the Python side stays their one definition.
 * It also compiles the run schema into a standalone validator (Ajv's standalone code) for saved runs.
 *
 *   node labextension/scripts/generate-protocol.mjs           write the file
 *   node labextension/scripts/generate-protocol.mjs --check   exit 1 when the committed file is stale
 */
import { readFileSync, writeFileSync } from 'fs';
import { dirname, join } from 'path';
import { fileURLToPath } from 'url';

import Ajv from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { compile } from 'json-schema-to-typescript';
import prettier from 'prettier';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = join(root, 'labextension', 'src', 'model', 'protocol.generated.ts');
// the run schema compiled to a validator, for saved runs in the browser (model/validate.ts): compiled here, not in
// the page, where Ajv's compile took 0.2 s on the first saved explorer of each page
const VALIDATOR_OUT = join(root, 'labextension', 'src', 'model', 'run.validate.generated.js');
const VALIDATOR_TYPES_OUT = join(root, 'labextension', 'src', 'model', 'run.validate.generated.d.ts');
const read = path => JSON.parse(readFileSync(join(root, path), 'utf8'));

const run = read('jupyter_tracejit/core/run.schema.json');
// the package's one version (jupyter_tracejit/_version.py); npm's package.json must say the same
const VERSION = /__version__ = "([^"]+)"/.exec(readFileSync(join(root, 'jupyter_tracejit/_version.py'), 'utf8'))[1];
const packageVersion = read('package.json').version;
if (packageVersion !== VERSION) {
  console.error(
    `package.json's version is ${packageVersion}, jupyter_tracejit/_version.py's ${VERSION}: set package.json's ` +
      'version to the one in _version.py (the package has one version)'
  );
  process.exit(1);
}
const state = read('jupyter_tracejit/widgets/explorer.schema.json');

/** One schema: the explorer state with the run's definitions beside its own, references made local. */
function merged() {
  // the run's root becomes one definition among its own; ids and dialects are the merged schema's
  const { definitions: runDefs, ...runRoot } = run;
  delete runRoot.$id;
  delete runRoot.$schema;
  const localize = node => {
    if (Array.isArray(node)) {
      return node.map(localize);
    }
    if (node && typeof node === 'object') {
      const out = {};
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('run.schema.json')) {
          const fragment = v.slice('run.schema.json'.length);
          out[k] = fragment ? fragment : '#/definitions/TraceRun';
        } else {
          out[k] = localize(v);
        }
      }
      return out;
    }
    return node;
  };
  const stateRoot = { ...state };
  delete stateRoot.$id;
  return {
    ...localize(stateRoot),
    definitions: { ...runDefs, TraceRun: runRoot, ...localize(state.definitions) }
  };
}

function constants() {
  const specsOf = options =>
    Object.entries(options).map(([key, p]) => ({
      key,
      label: p['x-label'],
      description: p.description,
      default: p.default,
      ...(p.enum ? { choices: p.enum } : {})
    }));
  const specs = specsOf(state.definitions.ExplorerOptions.properties);
  const exportOptions = state.definitions.ExportExplorerOptions;
  const exportSpecs = specsOf(exportOptions.properties);
  const defaults = Object.fromEntries(Object.entries(state.properties).map(([k, p]) => [k, p.default]));
  return [
    `/** The package's version (jupyter_tracejit/_version.py): the widget module's version. */`,
    `export const PACKAGE_VERSION = ${JSON.stringify(VERSION)};`,
    `/** \`kind\` of a run (run.schema.json). */`,
    `export const RUN_KIND = ${JSON.stringify(run.properties.kind.const)};`,
    `/** The run layout this front end reads (run.schema.json \`schema_version\`). */`,
    `export const SCHEMA_VERSION = ${JSON.stringify(run.properties.schema_version.const)};`,
    `export const GRAPH_SCHEMA_VERSION = ${JSON.stringify(run.definitions.Graph.properties.graph_schema.const)};`,
    `/** What a node does (run.schema.json NodeRole, from core/graph.py NODE_ROLES): readers decide by role. */`,
    `export const NODE_ROLES = ${JSON.stringify(run.definitions.NodeRole.enum)} as const;`,
    `/** The roles version-1 graphs had, by TorchScript kind (NodeRole x-torchscript-roles): model/legacy.ts. */`,
    `export const TORCHSCRIPT_ROLES: Record<string, NodeRole> = ${JSON.stringify(
      run.definitions.NodeRole['x-torchscript-roles']
    )};`,
    `/** The capture back ends, each with the words the explorer uses for it, the tabs it adds and the files it reads`,
    ` * back (run.schema.json backend x-backends, written from core/registry.py and each back end's backend.py). */`,
    `export const BACKENDS = ${JSON.stringify(run.properties.backend['x-backends'])} as const;`,
    `/** Warning categories in the order they are listed, each with what the explorer says and decides about it`,
    ` * (run.schema.json TraceWarning category x-categories, written from core/categories.py). */`,
    `export const WARNING_CATEGORIES = ${JSON.stringify(
      run.definitions.TraceWarning.properties.category['x-categories']
    )} as const;`,
    `/** The options bar's options, in order (explorer.schema.json ExplorerOptions, from core/options.py). */`,
    `export const OPTION_SPECS = ${JSON.stringify(specs)} as const;`,
    `/** The options bar's options for an export run, in order (explorer.schema.json ExportExplorerOptions, from`,
    ` * core/export/options.py EXPORT_SPECS). */`,
    `export const EXPORT_OPTION_SPECS = ${JSON.stringify(exportSpecs)} as const;`,
    `/** The export options the bar shows read-only (explorer.schema.json ExportExplorerOptions x-read-only). */`,
    `export const EXPORT_READ_ONLY_OPTIONS = ${JSON.stringify(exportOptions['x-read-only'])} as const;`,
    `/** Each widget trait's default (explorer.schema.json). */`,
    `export const TRAIT_DEFAULTS: ExplorerState = ${JSON.stringify(defaults)};`
  ].join('\n');
}

/** The members of a union type's text split at its top level (`|` outside brackets, braces and parentheses). */
function unionMembers(text) {
  const members = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if ('([{'.includes(c)) {
      depth += 1;
    } else if (')]}'.includes(c)) {
      depth -= 1;
    } else if (c === '|' && depth === 0) {
      members.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  members.push(text.slice(start).trim());
  return members;
}

/**
 * A tuple with optional trailing items (minItems below its items' count, as NodeRow's title) comes out of
 * json-schema-to-typescript as a union of whole tuples, one a length, each spelling the items before again. Each
 * such type is written instead over a type of its own for the items it always has (`<Name>Head`), the longer
 * tuples spreading it: the same union, as exact (no member takes an `undefined` where an item is left out, as an
 * optional element `number?` would), with the shared items written once.
 */
function headsNamed(types) {
  return types.replace(/^export type (\w+) = (\[[^]*?\])$(?=\n(?:\/\*\*|export |$))/gm, (whole, name, union) => {
    const members = unionMembers(union);
    const head = members[0];
    const open = head.slice(0, -1);
    const prefixed = members.every(m => m.startsWith('[') && m.endsWith(']'));
    const spreads = members.length > 1 && prefixed && members.slice(1).every(m => m.startsWith(`${open}, `));
    if (!spreads || union.includes('\nexport ')) {
      return whole;
    }
    const longer = members.slice(1).map(m => `[...${name}Head${m.slice(open.length)}`);
    return (
      `export type ${name} = ${[`${name}Head`, ...longer].join('|')}\n` +
      `/** The items every ${name} has: ${name} is these, or these followed by its optional trailing items. */\n` +
      `export type ${name}Head = ${head}`
    );
  });
}

async function generate() {
  const banner =
    '/* Generated by labextension/scripts/generate-protocol.mjs from jupyter_tracejit/core/run.schema.json,\n' +
    ' * jupyter_tracejit/widgets/explorer.schema.json and jupyter_tracejit/_version.py. Do not edit: change those and\n' +
    ' * run `npm run build:protocol`. */';
  const types = await compile(merged(), 'ExplorerState', {
    bannerComment: banner,
    unreachableDefinitions: true,
    additionalProperties: false,
    strictIndexSignatures: false,
    format: false
  });
  const text = `${headsNamed(types)}\n${constants()}\n`;
  const config = (await prettier.resolveConfig(OUT)) ?? {};
  return prettier.format(text, { ...config, parser: 'typescript' });
}

/** The standalone validator: an ES module whose default export is Ajv's validate function for the run schema. */
function validator() {
  // strict off: the schema carries descriptions and draft-07 keywords Ajv's strict mode would question
  const ajv = new Ajv({ allErrors: false, strict: false, code: { source: true, esm: true } });
  const code = standaloneCode(ajv, ajv.compile(run));
  return (
    '/* Generated by labextension/scripts/generate-protocol.mjs (Ajv standalone code) from\n' +
    ' * jupyter_tracejit/core/run.schema.json. Do not edit: change the schema and run `npm run build:protocol`. */\n' +
    `${code}\n`
  );
}

const VALIDATOR_TYPES =
  '/* Generated by labextension/scripts/generate-protocol.mjs: the types of run.validate.generated.js. */\n' +
  "import type { ErrorObject } from 'ajv';\n\n" +
  '/** Ajv validate function of the run schema: true when `data` is a valid run, else false with `errors` set. */\n' +
  'declare const validate: ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };\n' +
  'export default validate;\n';

const outputs = [
  [OUT, await generate()],
  [VALIDATOR_OUT, validator()],
  [VALIDATOR_TYPES_OUT, VALIDATOR_TYPES]
];
for (const [path, text] of outputs) {
  const name = path.slice(root.length + 1);
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      // missing counts as stale
    }
    if (current !== text) {
      console.error(`${name} is stale: run \`npm run build:protocol\` and commit the result`);
      process.exit(1);
    }
    console.log(`${name} is current`);
  } else {
    writeFileSync(path, text);
    console.log(`wrote ${name}`);
  }
}
