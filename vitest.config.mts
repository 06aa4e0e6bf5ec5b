import { defineConfig } from 'vitest/config';

// Unit tests of the TypeScript model/logic layer (labextension/test); browser tests live in tests/browser (pytest)
export default defineConfig({
  test: {
    include: ['labextension/test/**/*.test.ts'],
    environment: 'node',
    passWithNoTests: true
  }
});
