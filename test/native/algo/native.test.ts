// Property tests: the native kernel against the TS reference on thousands of random tables and option sets.

import { describe, expect, it } from 'vitest';
import { computeAdvantages, resolveAdvantageOptions } from '../../../src/algo/index.js';
import { cudaKernelCompiled, nativeAdvantagesCuda } from '../../../src/algo/native.js';
import { rowTableFromColumns } from '../../../src/rollout/rows.js';
import { Rng } from '../../../src/util/rng.js';
import { gpu } from '../gpu.js';
import { maxRelativeGap } from '../../algo/helpers.js';
import { randomOptions, randomTable } from './random-tables.js';

const TOLERANCE = 1e-5;
const TABLES = 4000;

describe('native kernel == TS reference', () => {
  it(`agrees within ${TOLERANCE} on ${TABLES} random tables`, () => {
    const rng = new Rng(20251216);
    let rows = 0;
    let exact = 0;
    for (let k = 0; k < TABLES; k++) {
      const table = randomTable(rng);
      const options = randomOptions(rng);
      const expected = computeAdvantages(table, { ...options, backend: 'reference' });
      const actual = computeAdvantages(table, { ...options, backend: 'native' });
      for (const key of ['episodeReward', 'stepReturn', 'advantage'] as const) {
        const gap = maxRelativeGap(actual[key], expected[key]);
        if (!(gap <= TOLERANCE)) {
          throw new Error(`table ${k} (${table.length} rows, ${JSON.stringify(options)}): ${key} differs by ${gap}`);
        }
        if (gap === 0) exact++;
      }
      rows += table.length;
    }
    expect(rows).toBeGreaterThan(TABLES * 10);
    // The kernel repeats the reference's arithmetic order, so on the CPU the results are identical, not just close.
    expect(exact).toBe(TABLES * 3);
  });

  it('a table with one huge group and many clusters (hash growth) agrees too', () => {
    const rng = new Rng(7);
    const n = 50_000;
    const t = rowTableFromColumns({
      group: new Int32Array(n), // one group of 10,000 trials
      trial: Int32Array.from({ length: n }, (_, i) => Math.floor(i / 5)),
      episode: new Int32Array(n),
      turn: Int32Array.from({ length: n }, (_, i) => i % 5),
      phase: new Uint8Array(n),
      reward: Float32Array.from({ length: n }, () => rng.next() * 2 - 1),
      valid: new Uint8Array(n).fill(1),
      won: new Uint8Array(n),
      anchor: Array.from({ length: n }, () => `s${rng.int(20_000)}`),
    });
    for (const mode of ['mean_norm', 'mean_std_norm'] as const) {
      const expected = computeAdvantages(t, { mode, backend: 'reference' });
      const actual = computeAdvantages(t, { mode, backend: 'native' });
      expect(maxRelativeGap(actual.advantage, expected.advantage)).toBe(0);
    }
  });

  // Runs only where the addon has the CUDA kernel and a GPU is present.
  const cudaHere = gpu.ok && cudaKernelCompiled();
  const why = gpu.ok ? 'skipped: the addon was built without nvcc, so without the kernel' : gpu.reason;
  it.runIf(cudaHere)(`CUDA kernel == CPU kernel${cudaHere ? '' : ` (${why})`}`, () => {
    const rng = new Rng(99);
    for (let k = 0; k < 500; k++) {
      const table = randomTable(rng);
      const options = resolveAdvantageOptions({ ...randomOptions(rng), stepGrouping: 'exact' });
      const cpu = computeAdvantages(table, options);
      const gpu = nativeAdvantagesCuda({ ...table, stepKey: table.anchorId }, options);
      for (const key of ['episodeReward', 'stepReturn', 'advantage'] as const) {
        expect(maxRelativeGap(gpu[key], cpu[key])).toBeLessThanOrEqual(TOLERANCE);
      }
    }
  });
});
