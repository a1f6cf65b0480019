// Re-scoring a finished job (`lamer eval --run JOB --out DIR`): on the job's own tasks it reproduces the job's final
// evaluation, every response of every trial and every record byte for byte (so it scores the same models the same
// way); on other tasks it records those tasks, and a comparison refuses to pair it with the job.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { command as trainCommand } from '../../src/cli/commands/train.js';
import { command as evalCommand } from '../../src/cli/commands/eval.js';
import { compareRuns } from '../../src/eval/across-runs.js';
import { readRunEvaluation } from '../../src/cli/commands/compare.js';
import { hasCode } from '../../src/errors.js';

async function quiet(fn: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  const [log, error] = [console.log, console.error];
  const out: string[] = [];
  const err: string[] = [];
  console.log = (...a: unknown[]) => void out.push(a.join(' '));
  console.error = (...a: unknown[]) => void err.push(a.join(' '));
  try {
    return { code: await fn(), out: out.join('\n'), err: err.join('\n') };
  } finally {
    [console.log, console.error] = [log, error];
  }
}

describe('lamer eval --run', () => {
  it("reproduces a job's evaluation on its own tasks, and records other tasks as other", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-rescore-'));
    const config = join(dir, 'tiny.yaml');
    writeFileSync(
      config,
      stringify({
        name: 'tiny',
        runsDir: dir,
        compare: ['lamer', 'gigpo', 'reflexion'],
        model: { init: { preset: 'tiny', tokenizer: 'compact' }, promptStyle: 'compact' },
        env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2, maxTurns: 3 } },
        trial: { episodes: 2 },
        rollout: { tasksPerIteration: 2, groupSize: 2, maxResponseTokens: 12 },
        optim: { lr: 1e-3, miniBatchRows: 8 },
        train: { iterations: 2, evalEvery: 0, checkpointEvery: 1 },
        eval: { tasks: 6 },
        sft: { trials: 8, steps: 3, reflectSteps: 1, batchRows: 4 },
      }),
    );
    const train = await quiet(() => trainCommand.run(['--config', config, '--quiet']));
    expect(train.code, train.err).toBe(0);
    const job = join(dir, 'tiny');
    const same = join(dir, 'same');
    const r = await quiet(() => evalCommand.run(['--run', job, '--out', same, '--quiet']));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('pass@k on held-out tasks 0-5 (development set)');
    for (const file of ['eval.json', 'compare.json', ...['lamer', 'gigpo', 'reflexion', 'random', 'random-memory'].map((m) => join(m, 'transcripts.jsonl'))]) {
      expect(readFileSync(join(same, file), 'utf8'), file).toBe(readFileSync(join(job, file), 'utf8'));
    }
    // Results are never written over without --force.
    await expect(quiet(() => evalCommand.run(['--run', job, '--out', same, '--quiet']))).rejects.toMatchObject({ code: 'E_EXISTS' });
    const other = join(dir, 'other');
    const o = await quiet(() => evalCommand.run(['--run', job, '--out', other, '--offset', '6', '--tasks', '4', '--quiet']));
    expect(o.code, o.err).toBe(0);
    const records = JSON.parse(readFileSync(join(other, 'eval.json'), 'utf8')) as Array<{ tasks: number; taskSet: { offset: number; hash: string } }>;
    expect(records.map((x) => [x.tasks, x.taskSet.offset])).toEqual(records.map(() => [4, 6]));
    expect(JSON.parse(readFileSync(join(other, 'config.json'), 'utf8')).eval).toMatchObject({ offset: 6, tasks: 4 });
    // The seed read back from the re-scored folder is the job's, and the two folders do not pair.
    expect(readRunEvaluation(other).seed).toBe(0);
    try {
      compareRuns([readRunEvaluation(job), readRunEvaluation(other)]);
      expect.unreachable();
    } catch (e) {
      expect(hasCode(e, 'E_TASKS')).toBe(true);
    }
    // --run with the flags of a plain evaluation is a usage error.
    expect((await quiet(() => evalCommand.run(['--run', job, '--out', join(dir, 'x'), '--method', 'lamer']))).code).toBe(2);
    expect((await quiet(() => evalCommand.run(['--run', job]))).code).toBe(2);
  }, 300_000);
});
