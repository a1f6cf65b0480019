import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    // Creates the project-local Python environment (transformers) used as the reference in parity tests, once.
    globalSetup: ['test/parity/setup-python.ts'],
  },
});
