import { configDefaults, defineConfig } from 'vitest/config';

/** The folders of the slower tiers: test/native/ needs the native addon, test/parity/ the Python reference. */
export const SLOW_TIERS = ['test/native/**', 'test/parity/**'];

// The fast tier (`npm run test:unit`): every test file outside test/native/ and test/parity/, so a new test file joins
// it by where it is put, and test/build/tiers.test.ts checks that this tier's files are exactly those. These tests
// need neither the native addon nor the Python reference environment and run on a fresh checkout after `npm install`
// alone. The addon path points nowhere here, so a test in this tier that starts using the addon fails instead of
// quietly leaving the tier. `npm test` runs every tier: these, test/native/ (addon) and test/parity/ (addon and Python
// with transformers).
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...SLOW_TIERS],
    testTimeout: 120_000,
    env: { LAMER_ADDON: '/nonexistent/lamer.node' },
  },
});
