// ESLint for the frontend (`npm run eslint:check`; `npm run lint` also fixes what it can).
// Formatting is prettier's job (`npm run prettier:check`): the configs below hold no style rules.
import { readdirSync } from 'fs';
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** The folders of one view each (and panes/, the comparison panes they share): each imports state/ and model/. */
const VIEW_FOLDERS = ['graph', 'inspector', 'warnings', 'check', 'controls', 'diff', 'panes', 'archive'];
/** The back ends' own folders (labextension/src/backends/<name>/): a new back end's is covered by being there. */
const BACKEND_FOLDERS = readdirSync(new URL('./labextension/src/backends/', import.meta.url), { withFileTypes: true })
  .filter(entry => entry.isDirectory())
  .map(entry => entry.name);

export default defineConfig(
  // protocol.generated.ts is written by labextension/scripts/generate-protocol.mjs (checked by protocol:check)
  globalIgnores([
    'lib/',
    'node_modules/',
    'jupyter_tracejit/',
    '.venv/',
    'labextension/src/model/protocol.generated.ts'
  ]),
  {
    files: [
      'labextension/src/**/*.ts',
      'labextension/test/**/*.ts',
      'labextension/src/report/build.mjs',
      'labextension/scripts/*.mjs'
    ],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    rules: {
      eqeqeq: 'error',
      curly: ['error', 'all'],
      'prefer-const': 'error',
      'prefer-arrow-callback': 'error',
      // tsc reports unused locals and parameters too (tsconfig noUnused*); this also covers the tests, which tsc
      // does not build. A leading underscore marks a parameter an interface requires but the body ignores.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // an error, not a warning: the run JSON is typed in model/protocol.ts, and data of unknown shape is
      // `unknown` narrowed by checks, so `any` would only hide a mismatch with the Python side
      '@typescript-eslint/no-explicit-any': 'error'
    }
  },
  {
    // the views read and change the explorer through the shared state (state/), never through the shell that
    // assembles them (explorer/): the shell depends on the views, not the other way round. Nor does a view know a
    // back end: what a back end adds reaches the views through the shared state (state/panels.ts BackendViews).
    files: [`labextension/src/{${VIEW_FOLDERS.join(',')}}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)explorer(/|$)',
              message: 'views import shared state from ../state/, never the explorer shell (../explorer/)'
            },
            {
              regex: '(^|\\.\\./)backends(/|$)',
              message: "views never import a back end's folder: what it adds reaches them through state/panels.ts"
            }
          ]
        }
      ]
    }
  },
  {
    // the back ends' list (backends/index.ts) is below the shell too; in a back end's folder (next block) its views
    // never import the shell either, and never another back end's folder: each comes and goes with its folder
    files: ['labextension/src/backends/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)explorer(/|$)',
              message: "the back ends' list is imported by the explorer shell, never the other way round"
            }
          ]
        }
      ]
    }
  },
  ...BACKEND_FOLDERS.map(name => ({
    files: [`labextension/src/backends/${name}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)explorer(/|$)',
              message: "a back end's views import shared state from state/, never the explorer shell (explorer/)"
            },
            {
              // its own files are ./x; another back end's are ../<other> (or ../../backends/<other>)
              regex: `^\\.\\./(?!\\.\\./)|(^|\\.\\./)backends(/(?!${name}(/|$))|$)`,
              message: `backends/${name}/ never imports another back end's folder`
            }
          ]
        }
      ]
    }
  })),
  {
    // the report page is an entry (like mime.ts): it mounts the explorer through explorer/mount.ts, nothing else of
    // the shell, and no back end's folder
    files: ['labextension/src/report/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)explorer/(?!mount$)',
              message: 'the report page mounts the explorer through ../explorer/mount, nothing else of the shell'
            },
            { regex: '(^|\\.\\./)backends(/|$)', message: "the report page never imports a back end's folder" }
          ]
        }
      ]
    }
  },
  {
    // the shared state sits between the model and the views: it imports the model, never a view or the shell
    files: ['labextension/src/state/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(?!model/)',
              message: 'state/ imports only model/: never a view, a back end or the explorer shell'
            }
          ]
        }
      ]
    }
  },
  {
    // the model derives facts from the run JSON with no DOM and no state: the views, the shell and the tests
    // build on it, so it imports only its own files (and packages)
    files: ['labextension/src/model/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./',
              message: 'model/ imports only model/ files: never state/, the explorer shell or a view'
            }
          ]
        }
      ]
    }
  },
  {
    // the report bundler and the protocol generator run in node
    files: ['labextension/src/report/build.mjs', 'labextension/scripts/*.mjs'],
    languageOptions: { globals: globals.node }
  }
);
