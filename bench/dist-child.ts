// A process of the distributed bench (bench/distributed.bench.ts). `train OUT RUNS NAME`: a LaMer run of the small
// preset model without a warm start (argv config below), writing its iteration events to OUT. `allreduce OUT MIB`:
// times all-reduces of MIB MiB (float64) and writes the seconds of each to OUT. Joins the process group when
// torchrun's variables are set.
import { writeFileSync } from 'node:fs';
import { DistContext } from '../src/train/distributed.js';
import type { IterationEvent } from '../src/train/events.js';
import { Trainer } from '../src/train/trainer.js';

const [mode, out, ...rest] = process.argv.slice(2);
const dist = DistContext.fromEnv() ?? undefined;
if (mode === 'train') {
  const [runsDir, name] = rest;
  const trainer = new Trainer(
    {
      name,
      runsDir,
      method: 'lamer',
      model: { init: { preset: 'small', tokenizer: 'compact', seed: 0 }, promptStyle: 'compact' },
      env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2, maxTurns: 4 } },
      trial: { episodes: 3 },
      rollout: { tasksPerIteration: 8, groupSize: 4, maxResponseTokens: 24, slots: 96 },
      optim: { lr: 1e-4, miniBatchRows: 64 },
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
}
await dist?.close();
