// Held out by content (SPEC §11): the default job's evaluation boards never occur, by mine layout and first reveal, in
// its demonstrations, its training rollouts or anywhere in the training split; the model-selection boards (where
// defaults are chosen) are neither evaluation boards nor boards the demonstrations or training rollouts show. The
// content is read off every environment the job resets (its mines and first reveal), not from the code that splits it.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MineSweeperEnv } from '../../../src/envs/minesweeper/env.js';
import { contentSplit, seedSplitOf, taskSeed } from '../../../src/envs/common/seeds.js';
import { SELECT_SEED_INDEX, evalTaskSeeds } from '../../../src/eval/evaluate.js';
import { hasCode } from '../../../src/errors.js';
import { scriptedPolicy } from '../../../src/rollout/scripted.js';
import { loadConfig } from '../../../src/train/config.js';
import { runJob } from '../../../src/train/job.js';
import type { PolicyRuntime } from '../../../src/train/runtime.js';

/** What a board is: its size, its mine cells and the cell opened before the first turn. */
function content(env: MineSweeperEnv): { task: string; layout: string } {
  const mines: number[] = [];
  env.board.mines.forEach((m, i) => m && mines.push(i));
  const layout = `${env.board.rows}x${env.board.cols} mines ${mines.join(' ')}`;
  return { layout, task: `${layout} first ${env.firstReveal}` };
}

type BoardSize = { rows: number; cols: number; mines: number };
const FOUR_BY_FOUR: BoardSize = { rows: 4, cols: 4, mines: 2 };

function boardAt(seed: number, size: BoardSize = FOUR_BY_FOUR): { task: string; layout: string } {
  const env = new MineSweeperEnv(size);
  env.reset(seed);
  return content(env);
}

afterEach(() => vi.restoreAllMocks());

describe('held out by content', () => {
  it("the default job's evaluation tasks occur in none of its demonstrations or training rollouts", async () => {
    // Every reset of the job, in order; a phase ends when the runtime is next asked for something.
    const resets: Array<{ task: string; layout: string; phase?: string }> = [];
    const reset = MineSweeperEnv.prototype.reset;
    vi.spyOn(MineSweeperEnv.prototype, 'reset').mockImplementation(function (this: MineSweeperEnv, seed: number) {
      const observation = reset.call(this, seed);
      resets.push(content(this));
      return observation;
    });
    const tag = (phase: string) => {
      for (const r of resets) r.phase ??= phase;
    };
    // A stand-in for the model: the scripted player (with some random moves) plays, and nothing is trained.
    const runtime = async (): Promise<PolicyRuntime> => ({
      client: () => scriptedPolicy({ noise: 0.3, seed: 1 }),
      update: async () => {
        tag('train');
        return { loss: 0, clipFraction: 0, approxKl: 0, entropy: 0, gradNorm: 0, steps: 1, skipped: 0, tokens: 1 };
      },
      supervised: async () => {
        tag('demonstration');
        return { loss: 0, tokens: 1 };
      },
      // A saved model is a folder with a file (the warm start's becomes the training's model.path, whose files a
      // checkpoint hashes).
      save: async (dir: string) => {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'stand-in.json'), '{}\n');
      },
      restore: async () => {},
      dispose: async () => {},
    });
    const config = loadConfig('default', [`runsDir=${mkdtempSync(join(tmpdir(), 'lamer-held-out-'))}`]);
    const { results } = await runJob(config, {
      runtime,
      progress: false,
      log: () => {},
      onEvent: (event) => {
        if (event.type === 'eval') tag('eval');
      },
    });
    expect(results.map((r) => r.tasks)).toEqual(results.map(() => config.eval.tasks));
    const of = (phase: string, what: 'task' | 'layout') => new Set(resets.filter((r) => r.phase === phase).map((r) => r[what]));
    const evalTasks = of('eval', 'task');
    // The evaluation's tasks are distinct boards, as many as it scores.
    expect(evalTasks.size).toBeGreaterThanOrEqual(config.eval.tasks);
    // The default job's board size, read from its config.
    const size = config.env.options as BoardSize;
    const selectLayouts = new Set(evalTaskSeeds(128, () => new MineSweeperEnv(size), 'select').map((s) => boardAt(s, size).layout));
    expect([...selectLayouts][0]).toMatch(new RegExp(`^${size.rows}x${size.cols} `));
    for (const phase of ['demonstration', 'train']) {
      const seen = of(phase, 'task');
      expect(seen.size, phase).toBeGreaterThan(20);
      expect(
        [...evalTasks].filter((t) => seen.has(t)),
        `evaluation tasks in the ${phase} phase`,
      ).toEqual([]);
      // Stronger: no evaluation board's mine layout is seen in training under any first reveal.
      const layouts = of(phase, 'layout');
      expect(
        [...of('eval', 'layout')].filter((l) => layouts.has(l)),
        `evaluation layouts in the ${phase} phase`,
      ).toEqual([]);
      // Choices made on the model-selection boards are made on boards the model was never shown.
      expect(
        [...selectLayouts].filter((l) => layouts.has(l)),
        `model-selection layouts in the ${phase} phase`,
      ).toEqual([]);
    }
  }, 300_000);

  it('no seed of the training split gives an evaluation or model-selection task, and the splits share out the layouts', () => {
    const evalTasks = new Set(evalTaskSeeds(256, () => new MineSweeperEnv({ rows: 4, cols: 4, mines: 2 })).map((s) => boardAt(s).task));
    expect(evalTasks.size).toBe(256);
    // Training seeds 0-60,000 cover nearly every training task.
    const trainTasks = new Set<string>();
    const trainLayouts = new Set<string>();
    for (let i = 0; i < 60_000; i++) {
      const b = boardAt(taskSeed('train', i));
      trainTasks.add(b.task);
      trainLayouts.add(b.layout);
    }
    expect([...evalTasks].filter((t) => trainTasks.has(t))).toEqual([]);
    const evalLayouts = new Set<string>();
    for (let i = 0; i < 20_000; i++) evalLayouts.add(boardAt(taskSeed('eval', i)).layout);
    expect([...evalLayouts].filter((l) => trainLayouts.has(l))).toEqual([]);
    const selectLayouts = new Set<string>();
    for (let i = 0; i < 20_000; i++) selectLayouts.add(boardAt(taskSeed('train', SELECT_SEED_INDEX + i)).layout);
    expect([...selectLayouts].filter((l) => trainLayouts.has(l) || evalLayouts.has(l))).toEqual([]);
    expect(selectLayouts.size).toBeGreaterThan(5);
    // 4x4 with 2 mines has C(16, 2) = 120 layouts; split by content: some 60 evaluation layouts, some 15 for model
    // selection and the rest for training (65, 10 and 45 with this hash).
    expect(trainLayouts.size + evalLayouts.size + selectLayouts.size).toBe(120);
    expect(evalLayouts.size).toBeGreaterThan(40);
    expect(trainLayouts.size).toBeGreaterThan(30);
  }, 120_000);

  it('model-selection tasks (eval.split select) are distinct training-split boards, none an evaluation board or layout', () => {
    const make = () => new MineSweeperEnv({ rows: 4, cols: 4, mines: 2 });
    const select = evalTaskSeeds(128, make, 'select');
    expect(select.every((s) => seedSplitOf(s) === 'train' && s >= taskSeed('train', SELECT_SEED_INDEX))).toBe(true);
    const selectBoards = select.map((s) => boardAt(s));
    expect(new Set(selectBoards.map((b) => b.task)).size).toBe(128);
    const evalBoards = evalTaskSeeds(256, make).map((s) => boardAt(s));
    const evalLayouts = new Set(evalBoards.map((b) => b.layout));
    expect(selectBoards.filter((b) => evalLayouts.has(b.layout))).toEqual([]);
    expect(() => evalTaskSeeds([taskSeed('train', 0)], make, 'select')).toThrow(/task count/);
  });

  it('the content split is a fixed function of the content, about half each way', () => {
    const sides = Array.from({ length: 4000 }, (_, i) => contentSplit(`layout ${i}`));
    expect(contentSplit('layout 7')).toBe(sides[7]);
    const evalShare = sides.filter((s) => s === 'eval').length / sides.length;
    expect(evalShare).toBeGreaterThan(0.46);
    expect(evalShare).toBeLessThan(0.54);
  });

  it('refuses more distinct evaluation tasks than the task space holds', () => {
    // 3x3 boards with 7 mines: C(9, 7) = 36 layouts, and two safe cells each: at most 72 tasks, about half of them held out.
    try {
      evalTaskSeeds(60, () => new MineSweeperEnv({ rows: 3, cols: 3, mines: 7 }));
      expect.unreachable();
    } catch (e) {
      expect(hasCode(e, 'E_ARG')).toBe(true);
      expect((e as Error).message).toMatch(/held-out tasks: 60 distinct tasks wanted from task 0 on/);
    }
  });
});
