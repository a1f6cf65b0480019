// Shared by the training-loop tests: collecting a run's events, and the tiny native LaMer setup the end-to-end
// tests train (a 2-layer preset model on 4x4 MineSweeper, 2 tasks x 2 trials x 2 episodes per iteration).
import type { Trainer } from '../../src/train/trainer.js';
import type { TrainerConfigInput } from '../../src/train/config.js';
import type { TrainerEvent } from '../../src/train/events.js';

/** Every event of `trainer.run(opts)`, in order. */
export async function collect(trainer: Trainer, opts: Parameters<Trainer['run']>[0] = {}): Promise<TrainerEvent[]> {
  const out: TrainerEvent[] = [];
  for await (const e of trainer.run(opts)) out.push(e);
  return out;
}

/** A LaMer run of the tiny preset model that trains in seconds on a CPU; `train` and `eval` are the caller's. */
export function tinyNativeConfig(name: string, runsDir: string): TrainerConfigInput {
  return {
    name,
    runsDir,
    method: 'lamer',
    model: { init: { preset: 'tiny', tokenizer: 'compact', seed: 4 }, promptStyle: 'compact' },
    env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2, maxTurns: 3 } },
    trial: { episodes: 2 },
    rollout: { tasksPerIteration: 2, groupSize: 2, maxResponseTokens: 12 },
    optim: { lr: 3e-3, miniBatchRows: 8 },
  };
}
