// ESLint for the frontend (`npm run eslint:check`; `npm run lint` also fixes what it can).
// Formatting is prettier's job (`npm run prettier:check`): the configs below hold no style rules.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['lib/', 'node_modules/', 'jupyter_tracejit/', '.venv/']),
  {
    files: ['labextension/src/**/*.ts', 'labextension/test/**/*.ts', 'labextension/src/report/build.mjs'],
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
    // the report bundler runs in node
    files: ['labextension/src/report/build.mjs'],
    languageOptions: { globals: globals.node }
  }
);
