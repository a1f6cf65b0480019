// Wall time of one training iteration, LaMer (K trials x N episodes) vs single-episode GiGPO (K*N trials x 1) at an
// equal episode budget, on the same freshly created model, measured in the same run (rollout and update apart):
// the median over 4 rounds of the per-round ratio, the two runs taking turns.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Trainer } from '../src/train/trainer.js';
import { createNativeRuntime } from '../src/train/native-runtime.js';
import type { IterationEvent } from '../src/train/events.js';
import type { PolicyRuntime } from '../src/train/runtime.js';
import type { Bench, BenchResult } from './run.js';

interface Run {
  trainer: Trainer;
  runtime: PolicyRuntime;
}

async function open(method: 'lamer' | 'gigpo', runsDir: string): Promise<Run> {
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
      train: { iterations: ROUNDS + 1, evalEvery: 0, checkpointEvery: 0 },
    },
    { progress: false, log: () => {} },
  );
  return { trainer, runtime: await createNativeRuntime(trainer.config, trainer.runDir) };
}

const ROUNDS = 4;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function lamerVsGigpo(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-iter-'));
  const lamer = await open('lamer', dir);
  const gigpo = await open('gigpo', dir);
  try {
    // Both runs stay open and take turns (ABBA order), so a machine that speeds up or slows down during the bench
    // affects both alike; the first iteration of each warms allocators and caches and is not counted. Each round's
    // LaMer/GiGPO ratio is taken, and the median over the rounds reported.
    const l: IterationEvent[] = [];
    const g: IterationEvent[] = [];
    for (let it = 1; it <= ROUNDS + 1; it++) {
      const order = it % 2 ? [lamer, gigpo] : [gigpo, lamer];
      for (const run of order) {
        const e = await run.trainer.iterate(run.runtime, it);
        if (it > 1) (run === lamer ? l : g).push(e);
      }
    }
    const ratio = (f: (e: IterationEvent) => number): number => median(l.map((e, i) => f(e) / f(g[i])));
    return [
      { name: 'trainer.iteration.lamer (median)', value: median(l.map((e) => e.seconds)), unit: 's' },
      { name: 'trainer.iteration.gigpo (median)', value: median(g.map((e) => e.seconds)), unit: 's' },
      { name: 'trainer.iteration.lamer/gigpo', value: ratio((e) => e.seconds), unit: 'x' },
      { name: 'trainer.rollout.lamer/gigpo', value: ratio((e) => e.rolloutSeconds), unit: 'x' },
      { name: 'trainer.update.lamer/gigpo', value: ratio((e) => e.updateSeconds), unit: 'x' },
      { name: 'trainer.rows.lamer/gigpo', value: ratio((e) => e.rows), unit: 'x' },
    ];
  } finally {
    await lamer.runtime.dispose();
    await gigpo.runtime.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benches: Bench[] = [{ name: 'trainer.iteration', unit: 's', run: lamerVsGigpo }];
