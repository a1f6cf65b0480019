// Seeds replicate what a replication varies (SPEC §11): under the default job, seed S derives the model's initial
// weights, the demonstration tasks and the training tasks, so two seeds share none of them, while a field the config
// pins stays the same; demonstrations are distinct boards; the evaluation tasks are the same for every seed. The tasks
// are read off the environments the trials actually play (their reset seeds and mine layouts), not from the code that
// picks them.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MineSweeperEnv } from '../../../src/envs/minesweeper/env.js';
import { hasCode } from '../../../src/errors.js';
import { scriptedPolicy } from '../../../src/rollout/scripted.js';
import { loadConfig, type TrainerConfig } from '../../../src/train/config.js';
import { collectDemonstrations } from '../../../src/train/demonstrations.js';
import { createNativeRuntime } from '../../../src/train/native-runtime.js';
import type { PolicyRuntime } from '../../../src/train/runtime.js';
import { Trainer } from '../../../src/train/trainer.js';

/** The board a played environment holds: its mine cells and first reveal, read from the board itself. */
function board(env: MineSweeperEnv): string {
  const mines: number[] = [];
  env.board.mines.forEach((m, i) => m && mines.push(i));
  return `${env.board.rows}x${env.board.cols} mines ${mines.join(' ')} first ${env.firstReveal}`;
}

/** Records the seed and board of every environment that a trial plays (one that takes a step). */
function recordPlayed(): { seeds: () => number[]; boards: () => string[] } {
  const lastSeed = new WeakMap<MineSweeperEnv, number>();
  const played = new Map<MineSweeperEnv, { seed: number; board: string }>();
  const reset = MineSweeperEnv.prototype.reset;
  const step = MineSweeperEnv.prototype.step;
  vi.spyOn(MineSweeperEnv.prototype, 'reset').mockImplementation(function (this: MineSweeperEnv, seed: number) {
    lastSeed.set(this, seed);
    return reset.call(this, seed);
  });
  vi.spyOn(MineSweeperEnv.prototype, 'step').mockImplementation(function (this: MineSweeperEnv, response: string) {
    if (!played.has(this)) played.set(this, { seed: lastSeed.get(this)!, board: board(this) });
    return step.call(this, response);
  });
  return { seeds: () => [...played.values()].map((p) => p.seed), boards: () => [...played.values()].map((p) => p.board) };
}

/** A stand-in for the model: the scripted player acts, nothing is trained. */
const scripted = async (): Promise<PolicyRuntime> => ({
  client: () => scriptedPolicy({ noise: 0.3, seed: 1 }),
  update: async () => ({ loss: 0, clipFraction: 0, approxKl: 0, entropy: 0, gradNorm: 0, steps: 1, skipped: 0, tokens: 1 }),
  supervised: async () => ({ loss: 0, tokens: 1 }),
  save: async () => {},
  restore: async () => {},
  dispose: async () => {},
});

const runsDir = () => mkdtempSync(join(tmpdir(), 'lamer-replication-'));
const defaults = (...set: string[]): TrainerConfig => loadConfig('default', [`runsDir=${runsDir()}`, ...set]);
const overlap = (a: number[], b: number[]) => a.filter((x) => new Set(b).has(x));

afterEach(() => vi.restoreAllMocks());

describe('what a seed varies', () => {
  it('two seeds of the default job start from different weights; a pinned model.init.seed gives the same ones', async () => {
    const weights = async (config: TrainerConfig): Promise<Buffer> => {
      const dir = mkdtempSync(join(tmpdir(), 'lamer-init-'));
      const runtime = await createNativeRuntime(config, dir);
      try {
        await runtime.save(dir);
      } finally {
        await runtime.dispose();
      }
      return readFileSync(join(dir, 'model.safetensors'));
    };
    const [zero, one, pinned] = await Promise.all([weights(defaults('seed=0')), weights(defaults('seed=1')), weights(defaults('seed=1', 'model.init.seed=0'))]);
    expect(zero.equals(one)).toBe(false);
    expect(pinned.equals(zero)).toBe(true);
  }, 120_000);

  it('two seeds play their demonstrations on different tasks, each on distinct boards; a pinned sft.taskSeed plays the same', async () => {
    const demos = async (...set: string[]) => {
      const played = recordPlayed();
      const d = await collectDemonstrations(defaults('sft.trials=1024', ...set));
      vi.restoreAllMocks();
      return { seeds: played.seeds(), boards: played.boards(), trials: d.trials };
    };
    const [zero, one, pinned] = [await demos('seed=0'), await demos('seed=1'), await demos('seed=1', 'sft.taskSeed=0')];
    for (const d of [zero, one]) {
      expect(d.trials).toBe(1024);
      expect(new Set(d.seeds).size).toBe(1024);
      // Distinct by content: as many different boards as trials (one trial per board in the default job).
      expect(new Set(d.boards).size).toBe(1024);
    }
    expect(overlap(zero.seeds, one.seeds)).toEqual([]);
    expect(new Set(pinned.seeds)).toEqual(new Set(zero.seeds));
  }, 300_000);

  it('two seeds train on different tasks; a pinned rollout.taskSeed trains on the same; the evaluation tasks are the same for every seed', async () => {
    const iterations = async (...set: string[]) => {
      const played = recordPlayed();
      const trainer = new Trainer(defaults(...set), { runtime: scripted, progress: false, log: () => {} });
      const runtime = await scripted();
      for (let it = 1; it <= 3; it++) await trainer.iterate(runtime, it);
      vi.restoreAllMocks();
      return played.seeds();
    };
    const [zero, one, pinned] = [await iterations('seed=0'), await iterations('seed=1'), await iterations('seed=1', 'rollout.taskSeed=0')];
    const config = defaults();
    expect(new Set(zero).size).toBe(3 * config.rollout.tasksPerIteration);
    expect(overlap(zero, one)).toEqual([]);
    expect(new Set(pinned)).toEqual(new Set(zero));
    // Evaluation: the same tasks (the same recorded hash) whatever the seed, so seeds pair.
    const scored = async (seed: number) => {
      const trainer = new Trainer(defaults(`seed=${seed}`, 'method=random', 'compare=null', 'eval.tasks=32'), { progress: false });
      return (await trainer.evaluate(null, 0)).taskSet!;
    };
    const [a, b] = [await scored(0), await scored(3)];
    expect(a.hash).toBe(b.hash);
    expect(a).toMatchObject({ split: 'eval', offset: 0, count: 32, by: 'content' });
  }, 300_000);

  it('refuses at load a seed that has no block of tasks of its own, unless the blocks are pinned, and a run longer than its block', () => {
    const refused = (...set: string[]) => {
      try {
        defaults(...set);
        return '';
      } catch (e) {
        expect(hasCode(e, 'E_CONFIG')).toBe(true);
        return (e as Error).message;
      }
    };
    expect(refused('seed=255')).toBe('');
    expect(refused('seed=256')).toMatch(/rollout\.taskSeed.*sft\.taskSeed|sft\.taskSeed/);
    expect(refused('seed=256')).toMatch(/seed below 256/);
    expect(refused('seed=1000', 'rollout.taskSeed=3', 'sft.taskSeed=4')).toBe('');
    expect(refused('rollout.taskSeed=256')).toMatch(/field 'rollout\.taskSeed': expected a block in \[0, 256\)/);
    expect(refused('train.iterations=70000', 'rollout.tasksPerIteration=16')).toMatch(/more than a block of training tasks holds/);
    // An evaluation of a chance row uses no block: any seed.
    expect(refused('seed=5000', 'method=random', 'compare=null', 'sft.trials=0')).toBe('');
  });
});
