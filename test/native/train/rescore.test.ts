// Re-scoring a finished job (`lamer eval --run JOB --out DIR`): on the job's own tasks it reproduces the job's final
// evaluation, every response of every trial and every record byte for byte (so it scores the same models the same
// way); on other tasks it records those tasks, and a comparison refuses to pair it with the job.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command as trainCommand } from '../../../src/cli/commands/train.js';
import { command as evalCommand } from '../../../src/cli/commands/eval.js';
import { compareRuns } from '../../../src/eval/across-runs.js';
import { readRunEvaluation } from '../../../src/cli/commands/compare.js';
import { hasCode } from '../../../src/errors.js';
import { tinyJobFile } from './helpers.js';
import { captured } from '../../helpers/index.js';

describe('lamer eval --run', () => {
  it("reproduces a job's evaluation on its own tasks, and records other tasks as other", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-rescore-'));
    const config = tinyJobFile(dir, {
      compare: ['lamer', 'gigpo', 'reflexion'],
      env: { options: { maxTurns: 3 } },
      rollout: { maxResponseTokens: 12 },
      train: { iterations: 2 },
      eval: { tasks: 6 },
      sft: { trials: 8, steps: 3, reflectSteps: 1 },
    });
    const train = await captured(() => trainCommand.run(['--config', config, '--quiet']));
    expect(train.code, train.err).toBe(0);
    const job = join(dir, 'tiny');
    const same = join(dir, 'same');
    const r = await captured(() => evalCommand.run(['--run', job, '--out', same, '--quiet']));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('pass@k on held-out tasks 0-5 (development set)');
    for (const file of ['eval.json', 'compare.json', ...['lamer', 'gigpo', 'reflexion', 'random', 'random-memory'].map((m) => join(m, 'transcripts.jsonl'))]) {
      expect(readFileSync(join(same, file), 'utf8'), file).toBe(readFileSync(join(job, file), 'utf8'));
    }
    // Results are never written over without --force.
    await expect(captured(() => evalCommand.run(['--run', job, '--out', same, '--quiet']))).rejects.toMatchObject({ code: 'E_EXISTS' });
    const other = join(dir, 'other');
    const o = await captured(() => evalCommand.run(['--run', job, '--out', other, '--offset', '6', '--tasks', '4', '--quiet']));
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
    expect((await captured(() => evalCommand.run(['--run', job, '--out', join(dir, 'x'), '--method', 'lamer']))).code).toBe(2);
    expect((await captured(() => evalCommand.run(['--run', job]))).code).toBe(2);
  }, 300_000);
});
