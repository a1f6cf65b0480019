// Scripted policies: the expert wins, noise and invalid answers show up at the rates asked for, results are complete,
// and the simulated batching engine serves concurrent requests in shared decode steps.

import { describe, expect, it } from 'vitest';
import { createEnv } from '../../src/envs/registry.js';
import { hasCode } from '../../src/errors.js';
import { runRollout } from '../../src/rollout/runner.js';
import { scriptedPolicy, scriptedResult, simulateBatchedEngine } from '../../src/rollout/scripted.js';
import { SAMPLING, TinyBoard, click } from './helpers.js';

describe('scriptedPolicy', () => {
  it('with no noise, the expert wins every MineSweeper and Sokoban task in episode 0', async () => {
    // MineSweeper task 5 needs 8 clicks, so the turn limit is lifted there: this checks the expert, not the board.
    for (const make of [() => createEnv('minesweeper', { maxTurns: 36 }), () => createEnv('sokoban')]) {
      const batch = await runRollout({
        policy: scriptedPolicy(),
        env: make,
        tasks: [0, 1, 2, 3, 4, 5],
        trialsPerTask: 1,
        trial: { episodes: 3, reflect: true, sampling: SAMPLING },
      });
      expect(batch.trials.map((t) => t.wonEpisode)).toEqual([0, 0, 0, 0, 0, 0]);
      expect(batch.stats.reflectRows).toBe(0);
    }
  });

  it('invalid = 1 answers without tags: every play and reflect row is invalid', async () => {
    const batch = await runRollout({
      policy: scriptedPolicy({ invalid: 1 }),
      env: () => createEnv('minesweeper', { maxTurns: 2 }),
      tasks: [3],
      trialsPerTask: 2,
      trial: { episodes: 2, reflect: true, sampling: SAMPLING },
    });
    // Per trial: 2 invalid turns (episode 0), one reflection, 2 invalid turns (episode 1).
    expect(batch.table.length).toBe(10);
    expect(Array.from(batch.table.valid)).toEqual(new Array(10).fill(0));
    expect(Array.from(batch.table.reward).filter((_, i) => batch.table.phase[i] === 0)).toEqual(new Array(8).fill(-1));
  });

  it('noise picks random admissible actions at about the rate asked for', async () => {
    const batch = await runRollout({
      policy: scriptedPolicy({ noise: 0.5, seed: 1 }),
      env: () => createEnv('sokoban'),
      tasks: Array.from({ length: 20 }, (_, i) => i),
      trialsPerTask: 2,
      trial: { episodes: 1, reflect: false, sampling: SAMPLING },
    });
    const plays = batch.responses.filter((_, i) => batch.table.phase[i] === 0);
    const random = plays.filter((r) => r.startsWith('I try something at random.')).length;
    expect(plays.length).toBeGreaterThan(40);
    expect(random / plays.length).toBeGreaterThan(0.3);
    expect(random / plays.length).toBeLessThan(0.7);
  });

  it('cuts a response at maxNewTokens with finish reason length', () => {
    const r = scriptedResult({ ...SAMPLING, maxNewTokens: 5, prompt: 'ab' }, 'hello world');
    expect(r.text).toBe('hello');
    expect(r.finishReason).toBe('length');
    expect(Array.from(r.promptIds)).toEqual([97, 98]);
    expect(r.logprobs.length).toBe(5);
  });

  it('rejects probabilities outside [0, 1]', () => {
    try {
      scriptedPolicy({ noise: 1.5 });
      expect.unreachable();
    } catch (e) {
      expect(hasCode(e, 'E_ARG')).toBe(true);
    }
  });
});

describe('SimulatedBatchEngine', () => {
  const answer = (view: { phase: string }) => ({
    generate: async (req: { prompt: string } & typeof SAMPLING) => scriptedResult({ ...req }, view.phase === 'reflect' ? '<remark>r</remark>' : click(2, 2)),
  });

  it('decodes concurrent trials together: 8 trials x 5 rows take 5 steps of batch 8', async () => {
    const engine = simulateBatchedEngine(answer, { stepMs: () => 1 });
    const batch = await runRollout({
      policy: engine.policy,
      env: () => new TinyBoard(),
      tasks: [1, 2],
      trialsPerTask: 4,
      trial: { episodes: 3, reflect: true, sampling: SAMPLING },
    });
    expect(batch.table.length).toBe(40);
    expect(engine.stats).toEqual({ steps: 5, requests: 40, maxBatch: 8, meanBatch: 8 });
  });

  it('a full engine makes the rest wait for free slots; multi-step requests hold their slot', async () => {
    const engine = simulateBatchedEngine(answer, { stepMs: () => 1, maxBatch: 3, stepsPerRequest: () => 2 });
    await runRollout({
      policy: engine.policy,
      env: () => new TinyBoard(),
      tasks: [1],
      trialsPerTask: 3,
      trial: { episodes: 1, reflect: false, sampling: SAMPLING },
    });
    // 3 requests, each 2 steps, all in one batch of 3.
    expect(engine.stats).toEqual({ steps: 2, requests: 3, maxBatch: 3, meanBatch: 3 });
    const tight = simulateBatchedEngine(answer, { stepMs: () => 1, maxBatch: 2, stepsPerRequest: () => 2 });
    await runRollout({
      policy: tight.policy,
      env: () => new TinyBoard(),
      tasks: [1],
      trialsPerTask: 3,
      trial: { episodes: 1, reflect: false, sampling: SAMPLING },
    });
    // Two requests for steps 1-2, the third for steps 3-4.
    expect(tight.stats).toEqual({ steps: 4, requests: 3, maxBatch: 2, meanBatch: 1.5 });
  });

  it('static batching makes short requests wait for the longest; continuous batching lets them rejoin', async () => {
    // Three trials of two attempts. The first request takes 3 steps, the others 1.
    //   continuous: step 1 {A, B, C}; step 2 {A} (B2, C2 arrive during it); step 3 {A, B2, C2}; step 4 {A2} -> 4 steps.
    //   static:     step 1 {A, B, C}; steps 2-3 {A}; step 4 {B2, C2}; step 5 {A2} -> 5 steps.
    const run = async (staticBatching: boolean) => {
      let calls = 0;
      const engine = simulateBatchedEngine(answer, { stepMs: () => 1, stepsPerRequest: () => (calls++ === 0 ? 3 : 1), staticBatching });
      await runRollout({
        policy: engine.policy,
        env: () => new TinyBoard(),
        tasks: [1],
        trialsPerTask: 3,
        trial: { episodes: 2, reflect: false, sampling: SAMPLING },
      });
      return engine.stats.steps;
    };
    expect(await run(false)).toBe(4);
    expect(await run(true)).toBe(5);
  });
});
