import { defineConfig } from 'vitest/config';

// Every tier (`npm test`): the fast tier (vitest.unit.config.ts: test files outside test/native/ and test/parity/),
// test/native/ (the native addon) and test/parity/ (the addon and the Python reference environment). One tier alone:
// `npm run test:unit`, `npm run test:native`, `npm run test:parity`.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    // Creates the project-local Python environment (transformers) used as the reference in parity tests, once; under
    // CI a missing one fails the run (test/parity/python.ts, parityPython).
    globalSetup: ['test/parity/setup-python.ts'],
  },
});
