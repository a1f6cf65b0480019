import { defineConfig } from 'vitest/config';

// The GPU test files (each test names the missing GPU in its title where there is none): what scripts/device-check.sh
// runs on a GPU machine. No globalSetup: none of them uses the Python reference environment, and the device machine
// cannot install it.
export default defineConfig({
  test: {
    pool: 'forks',
    include: [
      'test/native/engine/cuda-graphs.test.ts',
      'test/native/model/fused-ops.test.ts',
      'test/native/algo/native.test.ts',
      'test/native/train/share-prefix.test.ts',
      'test/native/train/observability.test.ts',
    ],
    testTimeout: 120_000,
    hookTimeout: 600_000,
  },
});
