// Records say what they scored (SPEC §11): an evaluation records its split, its first task, its count and a content
// hash of its task list; eval.offset draws tasks further along the split's sequence of distinct tasks, disjoint by
// content from the first ones; a model-selection evaluation is never labelled held-out. The sequence and the hash
// are rebuilt here from the boards themselves (mine cells and first reveal), not from the code that draws them.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { MineSweeperEnv } from '../../../src/envs/minesweeper/env.js';
import { taskSeed } from '../../../src/envs/common/seeds.js';
import { describeTaskSet, evalTaskSeeds, evaluate } from '../../../src/eval/evaluate.js';
import { hasCode } from '../../../src/errors.js';
import { command as evalCommand } from '../../../src/cli/commands/eval.js';
import { command as trainCommand } from '../../../src/cli/commands/train.js';
import { command as compareCommand } from '../../../src/cli/commands/compare.js';
import { captured } from '../../helpers/index.js';

const SIZE = { rows: 5, cols: 5, mines: 3 };
const make = () => new MineSweeperEnv(SIZE);

function boardOf(seed: number): string {
  const env = make();
  env.reset(seed);
  const mines: number[] = [];
  env.board.mines.forEach((m, i) => m && mines.push(i));
  return `mines ${mines.join(' ')} first ${env.firstReveal}`;
}

/** The first `n` distinct boards of the evaluation seeds, in order, by hand. */
function distinctEvalSeeds(n: number): number[] {
  const seen = new Set<string>();
  const out: number[] = [];
  for (let i = 0; out.length < n; i++) {
    const s = taskSeed('eval', i);
    const b = boardOf(s);
    if (seen.has(b)) continue;
    seen.add(b);
    out.push(s);
  }
  return out;
}

describe('evaluation task sets', () => {
  it('an offset takes the next tasks of the same sequence of distinct boards, none of them a board of the first ones', () => {
    const byHand = distinctEvalSeeds(300);
    expect(evalTaskSeeds(40, make, 'eval', 260)).toEqual(byHand.slice(260, 300));
    expect(evalTaskSeeds(256, make)).toEqual(byHand.slice(0, 256));
    // A set far along: distinct boards, none among the first 256.
    const far = evalTaskSeeds(512, make, 'eval', 4096);
    const farBoards = new Set(far.map(boardOf));
    expect(farBoards.size).toBe(512);
    expect(
      byHand
        .slice(0, 256)
        .map(boardOf)
        .filter((b) => farBoards.has(b)),
    ).toEqual([]);
    for (const bad of [-1, 1.5]) {
      try {
        evalTaskSeeds(4, make, 'eval', bad);
        expect.unreachable();
      } catch (e) {
        expect(hasCode(e, 'E_ARG')).toBe(true);
      }
    }
    // Beyond the distinct tasks there are: refused, not wrapped around.
    expect(() => evalTaskSeeds(4, () => new MineSweeperEnv({ rows: 3, cols: 3, mines: 7 }), 'eval', 500)).toThrow(/distinct tasks wanted from task 500/);
  });

  it('a record carries split, first task, count and the SHA-256 of the tasks in order; another list hashes otherwise', async () => {
    const r = await evaluate({ env: make, tasks: 24, offset: 100, method: 'random', seed: 1 });
    expect(r.taskSet).toMatchObject({ split: 'eval', offset: 100, count: 24, by: 'content' });
    const seeds = distinctEvalSeeds(124).slice(100);
    const keys = seeds.map((s) => {
      const env = make();
      env.reset(s);
      return `${env.taskKey()}\n`;
    });
    expect(r.taskSet.hash).toBe(createHash('sha256').update(keys.join('')).digest('hex'));
    const shifted = await evaluate({ env: make, tasks: 24, offset: 101, method: 'random', seed: 1 });
    expect(shifted.taskSet.hash).not.toBe(r.taskSet.hash);
    // The same tasks scored by another method (or sampled otherwise): the same hash.
    expect((await evaluate({ env: make, tasks: 24, offset: 100, method: 'random-memory', seed: 9 })).taskSet.hash).toBe(r.taskSet.hash);
    expect(describeTaskSet(r.taskSet)).toBe('held-out tasks 100-123');
    expect(describeTaskSet({ split: 'eval', offset: 0, count: 256 })).toBe('held-out tasks 0-255 (development set)');
    expect(describeTaskSet({ split: 'select', offset: 0, count: 128 })).toBe('model-selection tasks 0-127');
  });

  it('a --split select evaluation and job are never labelled held-out; the job records its tasks in eval.json and compare.json', async () => {
    const ev = await captured(() => evalCommand.run(['--method', 'random', '--method', 'random-memory', '--split', 'select', '--tasks', '8', '--quiet']));
    expect(ev.code, ev.err).toBe(0);
    expect(ev.out).toContain('pass@k on model-selection tasks 0-7');
    expect(ev.out).toContain('paired bootstrap over the model-selection tasks 0-7');
    expect(ev.out).not.toMatch(/held-out/);
    const dir = mkdtempSync(join(tmpdir(), 'lamer-select-'));
    const config = join(dir, 'chance.yaml');
    writeFileSync(
      config,
      stringify({
        name: 'chance',
        runsDir: dir,
        compare: ['random', 'random-memory'],
        env: { name: 'minesweeper', options: SIZE },
        eval: { tasks: 8, split: 'select' },
      }),
    );
    const job = await captured(() => trainCommand.run(['--config', config, '--quiet']));
    expect(job.code, job.err).toBe(0);
    expect(job.out).toContain('pass@k on model-selection tasks 0-7');
    expect(job.out).not.toMatch(/held-out/);
    const evalJson = JSON.parse(readFileSync(join(dir, 'chance', 'eval.json'), 'utf8'));
    const compareJson = JSON.parse(readFileSync(join(dir, 'chance', 'compare.json'), 'utf8'));
    const metrics = readFileSync(join(dir, 'chance', 'random', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const record of [evalJson[0], evalJson[1], compareJson[0], metrics.find((e) => e.type === 'eval')]) {
      expect(record.taskSet).toMatchObject({ split: 'select', offset: 0, count: 8, by: 'content' });
      expect(record.taskSet.hash).toBe(evalJson[0].taskSet.hash);
    }
    expect(JSON.parse(readFileSync(join(dir, 'chance', 'config.json'), 'utf8')).eval.split).toBe('select');
  });

  it('lamer compare stops with E_TASKS naming the runs when their records name different tasks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-mismatch-'));
    const config = join(dir, 'chance.yaml');
    writeFileSync(
      config,
      stringify({ name: 'chance', runsDir: dir, compare: ['random', 'random-memory'], env: { name: 'minesweeper', options: SIZE }, eval: { tasks: 8 } }),
    );
    for (const [name, offset] of [
      ['a', 0],
      ['b', 0],
      ['c', 8],
    ] as const) {
      const r = await captured(() => trainCommand.run(['--config', config, '--name', name, '--set', `eval.offset=${offset}`, '--quiet']));
      expect(r.code, r.err).toBe(0);
    }
    const same = await captured(() => compareCommand.run([join(dir, 'a'), join(dir, 'b')]));
    expect(same.code).toBe(0);
    expect(same.out).toContain('each on the same held-out tasks 0-7 (development set)');
    try {
      await captured(() => compareCommand.run([join(dir, 'a'), join(dir, 'c')]));
      expect.unreachable();
    } catch (e) {
      expect(hasCode(e, 'E_TASKS')).toBe(true);
      expect((e as Error).message).toMatch(/run c scored random on held-out tasks 8-15 .*run a scored random on held-out tasks 0-7/);
    }
  });
});
