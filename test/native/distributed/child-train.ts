// One rank (or the single process) of the data-parallel training tests (test/native/distributed/train.test.ts): the tiny
// native LaMer run of test/native/train/helpers.ts with a short warm start, up to iteration argv[4], resumed when argv[5] is
// 'resume'; writes the run's events to argv[2]/events-<name>-<rank>.json. Joins the process group when torchrun's
// variables are set. LAMER_TEST_ZERO: the run's optim.zero.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DistContext } from '../../../src/train/distributed.js';
import type { TrainerEvent } from '../../../src/train/events.js';
import { Trainer } from '../../../src/train/trainer.js';
import { tinyNativeConfig } from '../train/helpers.js';

const [runsDir, name, until, mode] = process.argv.slice(2);
const dist = DistContext.fromEnv() ?? undefined;
const trainer = new Trainer(
  {
    ...tinyNativeConfig(name, runsDir),
    rollout: { tasksPerIteration: 3, groupSize: 2, maxResponseTokens: 12 },
    train: { iterations: 3, evalEvery: 1, checkpointEvery: 1 },
    eval: { tasks: 12 },
    sft: { trials: 12, steps: 3, reflectSteps: 2, batchRows: 8 },
    optim: { ...tinyNativeConfig(name, runsDir).optim, zero: Number(process.env.LAMER_TEST_ZERO ?? 0) as 0 | 1 | 2 },
  },
  { progress: false, log: () => {}, dist },
);
const events: TrainerEvent[] = [];
try {
  for await (const e of trainer.run({ untilIteration: Number(until), resume: mode === 'resume' })) events.push(e);
} catch (e) {
  const err = e as Error & { code?: string };
  process.stderr.write(`[${err.code ?? 'no code'}] ${err.message}\n`);
  process.exit(1);
}
writeFileSync(join(runsDir, `events-${name}-${dist?.rank ?? 0}.json`), JSON.stringify(events));
await dist?.close();
