// A process of the distributed bench (bench/distributed.bench.ts). `train OUT RUNS NAME [ZERO]`: a LaMer run of the
// small preset model without a warm start (argv config below) at ZeRO stage ZERO (default 0), writing its iteration
// events to OUT. `allreduce OUT MIB`: times all-reduces of MIB MiB (float64) and writes the seconds of each to OUT.
// `shards OUT MIB`: the same for ZeRO's reduce-scatter (MIB in, MIB / ranks out) and all-gather (MIB / ranks in, MIB
// out), as {reduceScatter: [...], allGather: [...]}. `bytes OUT SHAPE STAGE`: one supervised step of the `small` preset
// or the Qwen3-0.6B shape (SHAPE small | qwen3-0.6b) at ZeRO stage STAGE, and the bytes the optimizer holds
// (Optimizer.memory) to OUT. Joins the process group when torchrun's variables are set.
import { writeFileSync } from 'node:fs';
import { DistContext } from '../src/train/distributed.js';
import type { IterationEvent } from '../src/train/events.js';
import { Trainer } from '../src/train/trainer.js';
import { Optimizer } from '../src/train/optimizer.js';
import { Policy } from '../src/model/policy.js';
import { presetCheckpoint } from '../src/model/presets.js';
import { qwen3_0_6bConfig } from './decode-ops.js';

const [mode, out, ...rest] = process.argv.slice(2);
const dist = DistContext.fromEnv() ?? undefined;
if (mode === 'train') {
  const [runsDir, name, zero] = rest;
  const trainer = new Trainer(
    {
      name,
      runsDir,
      method: 'lamer',
      model: { init: { preset: 'small', tokenizer: 'compact', seed: 0 }, promptStyle: 'compact' },
      env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2, maxTurns: 4 } },
      trial: { episodes: 3 },
      rollout: { tasksPerIteration: 8, groupSize: 4, maxResponseTokens: 24, slots: 96 },
      optim: { lr: 1e-4, miniBatchRows: 64, zero: Number(zero ?? 0) as 0 | 1 | 2 },
      train: { iterations: 4, evalEvery: 0, checkpointEvery: 0 },
      eval: { tasks: 2 },
    },
    { progress: false, log: () => {}, dist },
  );
  const iterations: IterationEvent[] = [];
  for await (const e of trainer.run()) if (e.type === 'iteration') iterations.push(e);
  writeFileSync(out, JSON.stringify(iterations));
} else if (mode === 'allreduce') {
  if (!dist) throw new Error('allreduce needs a process group');
  const values = new Float64Array((Number(rest[0]) * 2 ** 20) / 8).fill(1);
  await dist.native.allReduce(values); // warm-up (connections, buffers)
  const seconds: number[] = [];
  for (let i = 0; i < 5; i++) {
    await dist.barrier();
    const t0 = performance.now();
    await dist.native.allReduce(values);
    seconds.push((performance.now() - t0) / 1000);
  }
  writeFileSync(out, JSON.stringify(seconds));
} else if (mode === 'bytes') {
  const [shape, stage] = rest;
  const config = shape === 'small' ? (await presetCheckpoint('small')).config : qwen3_0_6bConfig();
  const policy = await Policy.init(config, { seed: 1 });
  const opt = Optimizer.create(policy, { lr: 1e-5, zero: Number(stage) as 0 | 1 | 2 });
  const ids = (n: number, k: number) => Array.from({ length: n }, (_, i) => 5 + ((i * 7919 + k * 104729) % (config.vocabSize - 5)));
  const rows = Array.from({ length: 4 }, (_, i) => ({ prompt: ids(24, 2 * i), response: ids(8, 2 * i + 1) }));
  const mine = dist ? rows.filter((_, i) => i % dist.size === dist.rank) : rows;
  await opt.sftStep(mine, { group: dist?.native });
  writeFileSync(out, JSON.stringify(await opt.memory()));
  opt.dispose();
  policy.dispose();
} else if (mode === 'shards') {
  if (!dist) throw new Error('shards needs a process group');
  const full = new Float64Array((Number(rest[0]) * 2 ** 20) / 8).fill(1);
  const shard = full.subarray(0, full.length / dist.size);
  const time = async (run: () => Promise<unknown>): Promise<number[]> => {
    await run(); // warm-up
    const seconds: number[] = [];
    for (let i = 0; i < 5; i++) {
      await dist.barrier();
      const t0 = performance.now();
      await run();
      seconds.push((performance.now() - t0) / 1000);
    }
    return seconds;
  };
  const reduceScatter = await time(() => dist.native.reduceScatter(full));
  const allGather = await time(() => dist.native.allGatherFlat(shard));
  writeFileSync(out, JSON.stringify({ reduceScatter, allGather }));
}
await dist?.close();
