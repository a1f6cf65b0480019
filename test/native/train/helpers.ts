// Shared by the training-loop tests: collecting a run's events, and the tiny native LaMer setup the end-to-end
// tests train (a 2-layer preset model on 4x4 MineSweeper, 2 tasks x 2 trials x 2 episodes per iteration).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { mergeConfig } from '../../../src/train/config.js';
import type { Trainer } from '../../../src/train/trainer.js';
import type { TrainerConfigInput } from '../../../src/train/config.js';
import type { TrainerEvent } from '../../../src/train/events.js';

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

/**
 * A tiny comparison job (LaMer and GiGPO from a short warm start of the tiny preset, on 4x4 MineSweeper) whose runs go
 * to `dir`; `over` is merged into it field by field (e.g. { eval: { tasks: 6 } }).
 */
export function tinyJob(dir: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const base = {
    name: 'tiny',
    runsDir: dir,
    compare: ['lamer', 'gigpo'],
    model: { init: { preset: 'tiny', tokenizer: 'compact' }, promptStyle: 'compact' },
    env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2, maxTurns: 2 } },
    trial: { episodes: 2 },
    rollout: { tasksPerIteration: 2, groupSize: 2, maxResponseTokens: 8 },
    optim: { lr: 1e-3, miniBatchRows: 8 },
    train: { iterations: 1, evalEvery: 0, checkpointEvery: 1 },
    eval: { tasks: 3 },
    sft: { trials: 4, steps: 1, reflectSteps: 0, batchRows: 4 },
  };
  return mergeConfig(base, over);
}

/** tinyJob written as a YAML config file in `dir`; returns its path. */
export function tinyJobFile(dir: string, over: Record<string, unknown> = {}): string {
  const path = join(dir, 'tiny.yaml');
  writeFileSync(path, stringify(tinyJob(dir, over)));
  return path;
}
