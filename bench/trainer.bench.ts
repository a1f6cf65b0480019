// Wall time of one training iteration, LaMer (K trials x N episodes) vs single-episode GiGPO (K*N trials x 1) at an
// equal episode budget, on the same freshly created model, measured in the same run (rollout and update apart).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Trainer } from '../src/train/trainer.js';
import { createNativeRuntime } from '../src/train/native-runtime.js';
import type { IterationEvent } from '../src/train/events.js';
import type { Bench, BenchResult } from './run.js';

async function iterationTimes(method: 'lamer' | 'gigpo', runsDir: string, iterations: number): Promise<IterationEvent[]> {
  const trainer = new Trainer(
    {
      name: method,
      runsDir,
      method,
      model: { init: { preset: 'small', tokenizer: 'compact', seed: 0 }, promptStyle: 'compact' },
      env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2 } },
      trial: { episodes: 3 },
      rollout: { tasksPerIteration: 4, groupSize: 4, maxResponseTokens: 24, slots: 96 },
      optim: { lr: 1e-5 },
      train: { iterations, evalEvery: 0, checkpointEvery: 0 },
    },
    { progress: false, log: () => {} },
  );
  const runtime = await createNativeRuntime(trainer.config, trainer.runDir);
  try {
    const out: IterationEvent[] = [];
    for (let it = 1; it <= iterations; it++) out.push(await trainer.iterate(runtime, it));
    return out;
  } finally {
    await runtime.dispose();
  }
}

async function lamerVsGigpo(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-iter-'));
  try {
    // Interleaved, two iterations each; the second of each is reported (the first warms allocators and caches).
    const lamer = await iterationTimes('lamer', dir, 2);
    const gigpo = await iterationTimes('gigpo', dir, 2);
    const l = lamer[1];
    const g = gigpo[1];
    return [
      { name: 'trainer.iteration.lamer', value: l.seconds, unit: 's' },
      { name: 'trainer.iteration.gigpo', value: g.seconds, unit: 's' },
      { name: 'trainer.iteration.lamer/gigpo', value: l.seconds / g.seconds, unit: 'x' },
      { name: 'trainer.rollout.lamer/gigpo', value: l.rolloutSeconds / g.rolloutSeconds, unit: 'x' },
      { name: 'trainer.update.lamer/gigpo', value: l.updateSeconds / g.updateSeconds, unit: 'x' },
      { name: 'trainer.rows.lamer/gigpo', value: l.rows / g.rows, unit: 'x' },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benches: Bench[] = [{ name: 'trainer.iteration', unit: 's', run: lamerVsGigpo }];
