import { defineConfig } from 'vitest/config';

// The fast tier (`npm run test:unit`): tests that need neither the native addon nor the Python reference environment,
// so they run on a fresh checkout after `npm install` alone, in about two minutes. The addon path points nowhere here, so
// a test in this list that starts using the addon fails instead of quietly leaving the tier. `npm test` runs every
// tier: these, the native ones (addon) and the parity ones (Python with transformers).
export default defineConfig({
  test: {
    pool: 'forks',
    include: [
      'test/bench/python.test.ts',
      'test/build/layers.test.ts',
      'test/docs/*.test.ts',
      'test/envs/**/*.test.ts',
      'test/eval/{across-runs,chance,compare,evaluate,passk,readable-json,transcripts}.test.ts',
      'test/model/tokenizer.test.ts',
      'test/rollout/{memory,runner,scripted,trial}.test.ts',
      'test/train/{checkpoint,config,demonstrations,report}.test.ts',
      'test/util/fs.test.ts',
    ],
    testTimeout: 120_000,
    env: { LAMER_ADDON: '/nonexistent/lamer.node' },
  },
});
