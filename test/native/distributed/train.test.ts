// Data-parallel training end to end with 2 Gloo processes on localhost (test/native/distributed/child-*.ts): the same run
// as one process (rollouts, losses, evaluations), a split evaluation equal to one process's, a 2-rank run resumed by
// one process, and a rank killed mid-run stopping the other with E_DIST within the collective timeout.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EvalEvent, IterationEvent, LogEvent, TrainerEvent } from '../../../src/train/events.js';
import { runSingle, startRanks, type RankResult } from './ranks.js';

const train = 'test/native/distributed/child-train.ts';
const evalScript = 'test/native/distributed/child-eval.ts';

function ok(r: RankResult): void {
  if (r.code !== 0) throw new Error(`rank ${r.rank} exited ${r.code ?? r.signal}: ${r.stderr.slice(-2000)}`);
}

function events(dir: string, name: string, rank = 0): TrainerEvent[] {
  return JSON.parse(readFileSync(join(dir, `events-${name}-${rank}.json`), 'utf8')) as TrainerEvent[];
}

const iterations = (es: TrainerEvent[]) => es.filter((e): e is IterationEvent => e.type === 'iteration');
const evals = (es: TrainerEvent[]) => es.filter((e): e is EvalEvent => e.type === 'eval');

/** Rollout figures equal, losses and gradient norms within 5e-5 relative: float32 sums in another order (the reduced
 * gradients, and micro-batches that pack each rank's rows as their own prefix trees, not the whole mini-batch's). */
function expectSameIteration(a: IterationEvent, b: IterationEvent): void {
  expect(a.iteration).toBe(b.iteration);
  expect(a.rows).toBe(b.rows);
  expect(a.tokens).toBe(b.tokens);
  expect(a.promptTokens).toBe(b.promptTokens);
  expect(a.reward).toBeCloseTo(b.reward, 12);
  expect(a.validRatio).toBeCloseTo(b.validRatio, 12);
  expect(Math.abs(a.loss - b.loss) / Math.max(1e-6, Math.abs(b.loss))).toBeLessThan(5e-5);
  expect(Math.abs(a.gradNorm - b.gradNorm) / b.gradNorm).toBeLessThan(5e-5);
}

describe('data-parallel training (2 Gloo ranks)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-dist-train-'));

  beforeAll(async () => {
    // One process and two ranks of the same run, side by side.
    const two = await startRanks(2, train, () => [dir, 'two', '2']);
    const one = await runSingle(train, [dir, 'one', '2']);
    (await two.done).forEach(ok);
    ok(one);
  }, 240_000);

  it('plays, trains and evaluates as one process does', () => {
    const one = events(dir, 'one');
    const two = events(dir, 'two');
    expect(iterations(one).map((e) => e.worldSize)).toEqual([1, 1]);
    expect(iterations(two).map((e) => e.worldSize)).toEqual([2, 2]);
    iterations(two).forEach((e, i) => expectSameIteration(e, iterations(one)[i]));
    expect(evals(two).map((e) => e.firstWin)).toEqual(evals(one).map((e) => e.firstWin));
    // Rank 1 saw the same (global) events; rank 0 alone wrote the run folder.
    iterations(events(dir, 'two', 1)).forEach((e, i) => expectSameIteration(e, iterations(two)[i]));
    expect(existsSync(join(dir, 'two', 'checkpoints', 'ckpt-000002', 'model.safetensors'))).toBe(true);
    const lines = readFileSync(join(dir, 'two', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(lines.filter((l) => l.includes('"type":"iteration"'))).toHaveLength(2);
  });

  it('continues a 2-rank run in one process from its checkpoint', async () => {
    const first = await startRanks(2, train, () => [dir, 'split', '1']);
    (await first.done).forEach(ok);
    ok(await runSingle(train, [dir, 'split', '2', 'resume']));
    const resumed = events(dir, 'split');
    const log = resumed.find((e): e is LogEvent => e.type === 'log');
    expect(log?.message).toMatch(/resumed from .*ckpt-000001 at iteration 1/);
    const [it2] = iterations(resumed);
    expect(it2.worldSize).toBe(1);
    // From the same checkpoint, one process's second iteration is the 2-rank run's.
    expectSameIteration(it2, iterations(events(dir, 'two'))[1]);
    expect(evals(resumed).at(-1)!.firstWin).toEqual(evals(events(dir, 'two')).at(-1)!.firstWin);
  }, 240_000);

  it('ZeRO stage 2: trains as one process does, checkpoints its shards, resumes at 2 ranks, holds half the state', async () => {
    const first = await startRanks(2, train, () => [dir, 'zero', '1'], { LAMER_TEST_ZERO: '2' });
    (await first.done).forEach(ok);
    const [it1] = iterations(events(dir, 'zero'));
    expectSameIteration(it1, iterations(events(dir, 'one'))[0]);
    const ckpt = join(dir, 'zero', 'checkpoints', 'ckpt-000001');
    expect(existsSync(join(ckpt, 'optimizer.shard-00001-of-00002.safetensors'))).toBe(true);
    const resumed = await startRanks(2, train, () => [dir, 'zero', '2', 'resume'], { LAMER_TEST_ZERO: '2' });
    (await resumed.done).forEach(ok);
    const [it2] = iterations(events(dir, 'zero'));
    expect(it2.iteration).toBe(2);
    expectSameIteration(it2, iterations(events(dir, 'one'))[1]);
    // Rank 0's bytes: half of stage 0's AdamW state and gradients (up to the last shard's padding).
    const z = it2.memory!;
    const full = iterations(events(dir, 'two'))[1].memory!;
    expect(z.optimizerState / full.optimizerState).toBeGreaterThan(0.49);
    expect(z.optimizerState / full.optimizerState).toBeLessThan(0.51);
    expect(z.gradients / full.gradients).toBeGreaterThan(0.49);
    expect(z.gradients / full.gradients).toBeLessThan(0.51);
    expect(z.parameters).toBe(full.parameters);
  }, 240_000);

  it('splits an evaluation over the ranks and gathers what one process gets', async () => {
    const model = join(dir, 'one', 'checkpoints', 'ckpt-000002');
    for (const method of ['reflexion', 'random-memory']) {
      const ranks = await startRanks(2, evalScript, (rank) => [join(dir, `eval-${method}-${rank}.json`), model, method]);
      const single = await runSingle(evalScript, [join(dir, `eval-${method}-single.json`), model, method]);
      (await ranks.done).forEach(ok);
      ok(single);
      const read = (f: string) =>
        JSON.parse(readFileSync(join(dir, f), 'utf8')) as { passAtK: number[]; firstWin: number[]; tasks: number; transcripts: unknown[] };
      const one = read(`eval-${method}-single.json`);
      for (const rank of [0, 1]) {
        const r = read(`eval-${method}-${rank}.json`);
        expect(r.tasks).toBe(24);
        expect(r.passAtK).toEqual(one.passAtK);
        expect(r.firstWin).toEqual(one.firstWin);
        // Every prompt, response and reflection, in task order.
        expect(r.transcripts).toEqual(one.transcripts);
      }
      // A row that wins some tasks, so the gathered pass@k is not trivially zero.
      if (method === 'random-memory') expect(one.passAtK[2]).toBeGreaterThan(0.2);
    }
  }, 240_000);

  it('stops the other rank with E_DIST within the timeout when a rank dies', async () => {
    const ranks = await startRanks(2, train, () => [dir, 'killed', '3'], { LAMER_DIST_TIMEOUT: '20' });
    // Kill rank 1 once the first checkpoint exists: the run is in its second iteration.
    const ckpt = join(dir, 'killed', 'checkpoints', 'ckpt-000001');
    const t0 = Date.now();
    while (!existsSync(ckpt) && Date.now() - t0 < 120_000) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(ckpt)).toBe(true);
    const killedAt = Date.now();
    ranks.children[1].kill('SIGKILL');
    const [r0, r1] = await ranks.done;
    expect(r1.signal).toBe('SIGKILL');
    expect(r0.code).toBe(1);
    expect(r0.stderr).toMatch(/\[E_DIST\] distributed .* failed on rank 0 of 2/);
    // Within the collective timeout (20 s) of the kill: the lost connection is seen at rank 0's next collective.
    expect(r0.endedAt - killedAt).toBeLessThan(20_000);
  }, 240_000);
});
