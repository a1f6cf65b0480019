// Wall time of one training iteration, LaMer (K trials x N episodes) vs single-episode GiGPO (K*N trials x 1) at an
// equal episode budget, measured in the same run (rollout and update apart): the median over the rounds of the
// per-round ratio, the two runs taking turns. Two settings:
//
// - `trainer.untrained`: a freshly created small model. Its responses are noise cut at 24 tokens, so every row costs
//   about the same and the figure isolates the scheduling (sequential episodes, reflection rows) from what the
//   policy writes.
// - `trainer.job`: the default job (configs/default.yaml) from its warm start, i.e. what `npm run train` spends per
//   iteration. A policy that writes reflections carries them in memory, so LaMer's prompts grow; the token ratio is
//   printed beside the time ratio. The warm start (the default's supervised steps, 900 + 2,100: most of the job's
//   time) is made here unless LAMER_BENCH_WARM_START names one already made (e.g. runs/default/warm-start after
//   `npm run train`).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Trainer } from '../src/train/trainer.js';
import { createNativeRuntime } from '../src/train/native-runtime.js';
import { loadConfig, type TrainerConfig, type TrainerConfigInput } from '../src/train/config.js';
import type { IterationEvent } from '../src/train/events.js';
import type { PolicyRuntime } from '../src/train/runtime.js';
import type { EngineClient, EngineStats } from '../src/engine/index.js';
import type { Bench, BenchResult } from './run.js';

type Method = 'lamer' | 'gigpo';

interface Run {
  trainer: Trainer;
  runtime: PolicyRuntime;
}

async function open(config: TrainerConfigInput): Promise<Run> {
  const trainer = new Trainer(config, { progress: false, log: () => {} });
  return { trainer, runtime: await createNativeRuntime(trainer.config, trainer.runDir) };
}

/** The engine's counters of a run's sampling client (the rollout's prefill work). */
function engineStats(run: Run): EngineStats {
  return (run.runtime.client() as EngineClient).engine.stats();
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * Both runs stay open and take turns (ABBA order), so a machine that speeds up or slows down during the bench affects
 * both alike; the first iteration of each warms allocators and caches and is not counted. Each round's LaMer/GiGPO
 * ratio is taken, and the median over the rounds reported.
 */
async function lamerVsGigpo(prefix: string, rounds: number, config: (method: Method, runsDir: string) => TrainerConfigInput): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-iter-'));
  const lamer = await open(config('lamer', dir));
  const gigpo = await open(config('gigpo', dir));
  try {
    const l: IterationEvent[] = [];
    const g: IterationEvent[] = [];
    let warm = new Map<Run, EngineStats>();
    for (let it = 1; it <= rounds + 1; it++) {
      const order = it % 2 ? [lamer, gigpo] : [gigpo, lamer];
      for (const run of order) {
        const e = await run.trainer.iterate(run.runtime, it);
        if (it > 1) (run === lamer ? l : g).push(e);
      }
      if (it === 1) warm = new Map([lamer, gigpo].map((run) => [run, engineStats(run)]));
    }
    // Prefill padding over the counted rounds: the engine's counters since the warm-up round.
    const overhead = (run: Run): number => {
      const now = engineStats(run);
      const before = warm.get(run)!;
      return (now.paddedPromptTokens - before.paddedPromptTokens) / Math.max(1, now.prefilledPromptTokens - before.prefilledPromptTokens);
    };
    const ratio = (f: (e: IterationEvent) => number): number => median(l.map((e, i) => f(e) / f(g[i])));
    const tokens = (e: IterationEvent): number => Math.max(1, e.promptTokens + e.tokens);
    return [
      { name: `${prefix}.iteration.lamer (median)`, value: median(l.map((e) => e.seconds)), unit: 's' },
      { name: `${prefix}.iteration.gigpo (median)`, value: median(g.map((e) => e.seconds)), unit: 's' },
      { name: `${prefix}.iteration.lamer/gigpo`, value: ratio((e) => e.seconds), unit: 'x' },
      { name: `${prefix}.rollout.lamer/gigpo`, value: ratio((e) => e.rolloutSeconds), unit: 'x' },
      { name: `${prefix}.update.lamer/gigpo`, value: ratio((e) => e.updateSeconds), unit: 'x' },
      { name: `${prefix}.rows.lamer/gigpo`, value: ratio((e) => e.rows), unit: 'x' },
      { name: `${prefix}.tokens.lamer/gigpo`, value: ratio(tokens), unit: 'x' },
      // Time per token (prompt + response) of each method: how much of the time ratio is more work (memory in the
      // prompts, reflection rows) and how much is the same work done less efficiently (smaller batches, padding).
      { name: `${prefix}.iteration_per_token.lamer/gigpo`, value: ratio((e) => e.seconds / tokens(e)), unit: 'x' },
      { name: `${prefix}.update_per_token.lamer/gigpo`, value: ratio((e) => e.updateSeconds / tokens(e)), unit: 'x' },
      { name: `${prefix}.prefill_padding.lamer`, value: overhead(lamer), unit: 'x (padded / computed prompt tokens)' },
      { name: `${prefix}.prefill_padding.gigpo`, value: overhead(gigpo), unit: 'x (padded / computed prompt tokens)' },
    ];
  } finally {
    await lamer.runtime.dispose();
    await gigpo.runtime.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function untrained(): Promise<BenchResult[]> {
  return lamerVsGigpo('trainer.untrained', 4, (method, runsDir) => ({
    name: method,
    runsDir,
    method,
    model: { init: { preset: 'small', tokenizer: 'compact', seed: 0 }, promptStyle: 'compact' },
    env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2 } },
    trial: { episodes: 3 },
    rollout: { tasksPerIteration: 4, groupSize: 4, maxResponseTokens: 24, slots: 96 },
    optim: { lr: 1e-5 },
    train: { iterations: 5, evalEvery: 0, checkpointEvery: 0 },
  }));
}

/** The default job's warm start: the folder LAMER_BENCH_WARM_START names, or one made now (as `npm run train` does). */
async function jobWarmStart(base: TrainerConfig, dir: string): Promise<string> {
  const given = process.env.LAMER_BENCH_WARM_START;
  if (given) {
    const path = resolve(given);
    if (!existsSync(join(path, 'config.json'))) throw new Error(`LAMER_BENCH_WARM_START=${given}: no checkpoint there (config.json missing)`);
    return path;
  }
  process.stderr.write(
    `  warm start as npm run train makes it: up to ${base.sft.reflectSteps + base.sft.steps} supervised steps (set LAMER_BENCH_WARM_START to reuse one)\n`,
  );
  const trainer = new Trainer({ ...base, compare: undefined, method: 'lamer', runsDir: dir, name: 'warm' }, { progress: false, log: () => {} });
  const runtime = await createNativeRuntime(trainer.config, trainer.runDir);
  try {
    await trainer.warmStart(runtime);
    const out = join(dir, 'warm-start');
    await runtime.save(out);
    return out;
  } finally {
    await runtime.dispose();
  }
}

async function job(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-job-'));
  try {
    const base = loadConfig('default');
    const warm = await jobWarmStart(base, dir);
    return await lamerVsGigpo('trainer.job', 5, (method, runsDir) => ({
      ...base,
      compare: undefined,
      name: method,
      runsDir,
      method,
      model: { ...base.model, init: undefined, path: warm },
      sft: { ...base.sft, trials: 0 },
      train: { ...base.train, iterations: 6, evalEvery: 0, checkpointEvery: 0 },
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benches: Bench[] = [
  { name: 'trainer.untrained', unit: 's', run: untrained },
  { name: 'trainer.job', unit: 's', run: job },
];
