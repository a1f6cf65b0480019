// Rollout throughput and the cost of LaMer's sequential episodes.
//
// - rows/s of the runner with the scripted expert policy (prompt assembly, env steps, row table): the CPU cost of the
//   rollout side alone, with no model.
// - LaMer (K = 8 trials x N = 3 episodes) vs single-episode RL (K = 24 x N = 1), the same episode budget per task,
//   through a simulated continuous-batching engine: pending requests are decoded together, one decode step costs a
//   fixed latency whatever the batch, and a request occupies one step per 8 response characters. With every trial in
//   flight at once, LaMer's trials in different phases share decode steps, so its wall time is set by its longest
//   chain of requests rather than by 3x the single-episode time. Also run with the engine's batch capped (KV-cache
//   slots), where the engine is saturated and wall time follows the total work instead, and with static batching
//   (a batch starts only when the previous one has finished, as in synchronous rollouts) for comparison.
// The step ratio is the engine's share alone (deterministic); the wall ratio adds the real CPU cost of the rollout
// (prompts, environments), which on a shared CPU makes it noisier.
// bench/run.ts collects `benches`; `npx tsx bench/rollout.bench.ts` prints the figures alone.

import { pathToFileURL } from 'node:url';
import { createEnv } from '../src/envs/registry.js';
import { TRAIN_SAMPLING } from '../src/rollout/policy.js';
import { runRollout, type RolloutBatch } from '../src/rollout/runner.js';
import { scriptedPolicy, simulateBatchedEngine, type BatchedEngineStats } from '../src/rollout/scripted.js';
import { trainRolloutShape } from '../src/eval/methods.js';
import type { Bench, BenchResult } from './run.js';

/** SPEC §6: 16 tasks per iteration, N = 3, LaMer group size 8. */
const TASKS = Array.from({ length: 16 }, (_, i) => 1000 + i);
const EPISODES = 3;
const GROUP = 8;
/** Noise of the scripted player: wins some tasks in episode 0, fails others, so LaMer plays its later episodes. */
const NOISE = 0.5;
/** Latency of one decode step in the simulated engine (ms). */
const STEP_MS = 5;

function rowsPerSecond(env: 'minesweeper' | 'sokoban'): () => Promise<number> {
  return async () => {
    const run = () =>
      runRollout({
        policy: scriptedPolicy({ noise: NOISE, seed: 1 }),
        env: () => createEnv(env),
        tasks: TASKS,
        trialsPerTask: GROUP,
        trial: { episodes: EPISODES, reflect: true, sampling: TRAIN_SAMPLING },
      });
    await run(); // warm-up (JIT, Sokoban solver tables)
    let rows = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < 1000) rows += (await run()).table.length;
    return rows / ((performance.now() - t0) / 1000);
  };
}

interface EngineShape {
  maxBatch: number;
  staticBatching: boolean;
}

async function timedRollout(method: 'lamer' | 'gigpo', shapeOfEngine: EngineShape): Promise<{ ms: number; engine: BatchedEngineStats; batch: RolloutBatch }> {
  const shape = trainRolloutShape(method, EPISODES, GROUP);
  const engine = simulateBatchedEngine(scriptedPolicy({ noise: NOISE, seed: 7 }), {
    stepMs: () => STEP_MS,
    stepsPerRequest: (r) => r.responseIds.length / 8,
    ...shapeOfEngine,
  });
  const t0 = performance.now();
  const batch = await runRollout({
    policy: engine.policy,
    env: () => createEnv('minesweeper'),
    tasks: TASKS,
    trialsPerTask: shape.trialsPerTask,
    trial: { episodes: shape.episodes, reflect: shape.reflect, sampling: TRAIN_SAMPLING },
  });
  return { ms: performance.now() - t0, engine: engine.stats, batch };
}

function lamerVsSingle(engine: EngineShape, label: string): () => Promise<BenchResult[]> {
  return async () => {
    await timedRollout('gigpo', engine); // warm-up (JIT)
    const lamer = await timedRollout('lamer', engine);
    const single = await timedRollout('gigpo', engine);
    const name = `rollout.lamer_vs_single.${label}`;
    return [
      { name: `${name}.wall_ratio`, value: lamer.ms / single.ms, unit: 'x (LaMer / single-episode)' },
      { name: `${name}.step_ratio`, value: lamer.engine.steps / single.engine.steps, unit: 'x decode steps' },
      { name: `${name}.lamer_ms`, value: lamer.ms, unit: `ms, ${lamer.batch.stats.episodes} episodes` },
      { name: `${name}.single_ms`, value: single.ms, unit: `ms, ${single.batch.stats.episodes} episodes` },
      { name: `${name}.lamer_steps`, value: lamer.engine.steps, unit: 'decode steps' },
      { name: `${name}.single_steps`, value: single.engine.steps, unit: 'decode steps' },
      { name: `${name}.lamer_mean_batch`, value: lamer.engine.meanBatch, unit: 'sequences/step' },
      { name: `${name}.single_mean_batch`, value: single.engine.meanBatch, unit: 'sequences/step' },
    ];
  };
}

export const benches: Bench[] = [
  { name: 'rollout.scripted.minesweeper', unit: 'rows/s', run: rowsPerSecond('minesweeper') },
  { name: 'rollout.scripted.sokoban', unit: 'rows/s', run: rowsPerSecond('sokoban') },
  {
    name: 'rollout.lamer_vs_single.unbounded',
    unit: 'x',
    run: lamerVsSingle({ maxBatch: Infinity, staticBatching: false }, 'unbounded'),
  },
  { name: 'rollout.lamer_vs_single.slots64', unit: 'x', run: lamerVsSingle({ maxBatch: 64, staticBatching: false }, 'slots64') },
  {
    name: 'rollout.lamer_vs_single.static',
    unit: 'x',
    run: lamerVsSingle({ maxBatch: Infinity, staticBatching: true }, 'static'),
  },
];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const b of benches) {
    const r = await b.run();
    const rows = typeof r === 'number' ? [{ name: b.name, value: r, unit: b.unit }] : r;
    for (const row of rows) console.log(`${row.name.padEnd(48)} ${row.value.toFixed(2).padStart(12)}  ${row.unit}`);
  }
}
