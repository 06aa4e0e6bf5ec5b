// ESLint for the frontend (`npm run eslint:check`; `npm run lint` also fixes what it can).
// Formatting is prettier's job (`npm run prettier:check`): the configs below hold no style rules.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
    // assembles them (explorer/): the shell depends on the views, not the other way round
    files: ['labextension/src/{graph,inspector,warnings,check,controls}/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)explorer(/|$)',
              message: 'views import shared state from ../state/, never the explorer shell (../explorer/)'
            }
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
              regex: '^\\.\\./(explorer|graph|inspector|warnings|check|controls|report)(/|$)',
              message: 'state/ imports only model/: never a view or the explorer shell'
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
