// Held-out evaluation: evaluation-split seeds only, the methods' trial modes (reflection only for LaMer and Reflexion),
// pass@k from the trials, and per-type figures for an environment with task types.

import { describe, expect, it } from 'vitest';
import { createEnv } from '../../src/envs/registry.js';
import { EVAL_SEEDS, taskSeed } from '../../src/envs/common/seeds.js';
import { hasCode } from '../../src/errors.js';
import { countTurns, evaluate, evalTaskSeeds, formatInvalidTurns } from '../../src/eval/evaluate.js';
import { evalTrialMode, trainRolloutShape } from '../../src/eval/methods.js';
import { scriptedPolicy } from '../../src/rollout/scripted.js';
import type { Environment } from '../../src/envs/types.js';
import type { GenerateRequest, PolicyClient, TrialView } from '../../src/rollout/policy.js';
import { Rng } from '../../src/util/rng.js';
import { scriptedResult } from '../../src/rollout/scripted.js';
import { TinyBoard, click } from '../rollout/helpers.js';

/** Records every request; always opens the mine of the tiny board (never wins) and writes valid reflections. */
class Recorder implements PolicyClient {
  readonly requests: GenerateRequest[] = [];
  async generate(request: GenerateRequest) {
    this.requests.push(request);
    return scriptedResult(request, request.prompt.includes('<remark>') ? '<remark>avoid (2, 2)</remark>' : click(2, 2));
  }
}

describe('evaluate', () => {
  it('uses the first n seeds of the evaluation split, and refuses training seeds', () => {
    expect(evalTaskSeeds(3)).toEqual([EVAL_SEEDS.start, EVAL_SEEDS.start + 1, EVAL_SEEDS.start + 2]);
    expect(evalTaskSeeds([taskSeed('eval', 7)])).toEqual([EVAL_SEEDS.start + 7]);
    for (const bad of [[5], 0, []] as const) {
      try {
        evalTaskSeeds(bad as never);
        expect.unreachable();
      } catch (e) {
        expect(hasCode(e, 'E_ARG')).toBe(true);
      }
    }
  });

  it('baselines get N attempts without reflection and with empty memory; LaMer and Reflexion reflect', async () => {
    for (const method of ['react', 'zero-shot', 'gigpo', 'lamer', 'reflexion'] as const) {
      const policy = new Recorder();
      // The tiny board is one task whatever the seed, so the seeds are given: a count would want distinct tasks.
      const r = await evaluate({ policy, env: () => new TinyBoard(), tasks: evalTaskSeeds(4), method, episodes: 3 });
      const reflects = policy.requests.filter((q) => q.prompt.includes('<remark>')).length;
      const withMemory = policy.requests.filter((q) => q.prompt.includes('Memory of your earlier trials')).length;
      const reflecting = method === 'lamer' || method === 'reflexion';
      expect(r.stats.reflectRows).toBe(reflecting ? 8 : 0);
      expect(reflects).toBe(reflecting ? 8 : 0);
      expect(withMemory).toBe(reflecting ? 8 : 0);
      expect(policy.requests.length).toBe(reflecting ? 20 : 12);
      expect(policy.requests.some((q) => q.prompt.includes('First reason'))).toBe(method !== 'zero-shot');
      // Evaluation sampling (SPEC §6).
      expect(policy.requests.every((q) => q.temperature === 0.7 && q.topP === 0.8 && q.topK === 20)).toBe(true);
      expect(r).toMatchObject({ method, env: 'minesweeper', tasks: 4, passAtK: [0, 0, 0] });
    }
  });

  it('counts the actions answered and the invalid ones, the pipeline check of a warm start', async () => {
    // Every other answer has no <action> tag: invalid, a no-op turn of the environment.
    let n = 0;
    const policy: PolicyClient = {
      async generate(request: GenerateRequest) {
        return scriptedResult(request, n++ % 2 === 0 ? 'I am not sure.' : click(1, 1));
      },
    };
    const r = await evaluate({ policy, env: () => new TinyBoard(), tasks: evalTaskSeeds(2), method: 'gigpo', episodes: 2 });
    const turns = r.transcripts.flatMap((t) => t.episodes.flatMap((e) => e.turns));
    expect(r.turns.played).toBe(turns.length);
    expect(r.turns.invalid).toBe(turns.filter((t) => !t.valid).length);
    expect(r.turns.invalid).toBeGreaterThan(0);
    expect(r.turns.invalid).toBeLessThan(r.turns.played);
    expect(formatInvalidTurns('gigpo', { played: 8, invalid: 2 })).toBe('gigpo: 2 of 8 actions invalid (25.0%)');
    expect(countTurns([])).toEqual({ played: 0, invalid: 0 });
  });

  it("WebShop: score@k from each attempt's purchase score, recomputed from the transcripts; none for MineSweeper", async () => {
    // The browser buys the first affordable product: some attempts score 1, many score below 1 but above 0.
    const r = await evaluate({
      policy: scriptedPolicy({ noise: 0.3, seed: 5 }),
      env: () => createEnv('webshop', { maxTurns: 12 }),
      tasks: 24,
      method: 'gigpo',
    });
    expect(r.scoreAtK).toHaveLength(3);
    // Independent: each attempt replayed on a fresh environment, its score read from the last step's info.
    const replay = createEnv('webshop', { maxTurns: 12 });
    const best = r.transcripts.map((t, i) => {
      let b = 0;
      return [0, 1, 2].map((k) => {
        const e = t.episodes[k];
        if (e !== undefined) {
          replay.reset(r.trials[i].seed);
          let last: Record<string, unknown> = {};
          for (const turn of e.turns) last = replay.step(turn.response).info;
          b = Math.max(b, last.score as number);
        }
        return b;
      });
    });
    for (let k = 0; k < 3; k++) expect(r.scoreAtK![k]).toBeCloseTo(best.reduce((s, x) => s + x[k], 0) / best.length, 12);
    // A win scores 1, so score@k is at least pass@k; a wrong purchase still scores.
    for (let k = 0; k < 3; k++) expect(r.scoreAtK![k]).toBeGreaterThanOrEqual(r.passAtK[k]);
    expect(r.trials.flatMap((t) => t.episodeScores).some((s) => s !== null && s > 0 && s < 1)).toBe(true);
    const mine = await evaluate({ policy: scriptedPolicy(), env: () => createEnv('minesweeper', { maxTurns: 36 }), tasks: 2, method: 'lamer' });
    expect(mine.scoreAtK).toBeUndefined();
  });

  it('an expert policy passes every MineSweeper task at pass@1', async () => {
    const r = await evaluate({
      policy: scriptedPolicy(),
      env: () => createEnv('minesweeper', { maxTurns: 36 }),
      tasks: 8,
      method: 'lamer',
    });
    expect(r.passAtK).toEqual([1, 1, 1]);
    expect(r.trials.map((t) => t.seed)).toEqual(evalTaskSeeds(8));
  });

  it('reports pass@k per ALFWorld task type, matching the types of the tasks', async () => {
    const r = await evaluate({ policy: scriptedPolicy(), env: () => createEnv('alfworld'), tasks: 6, method: 'react', episodes: 2 });
    const types = evalTaskSeeds(6).map((seed) => {
      const env = createEnv('alfworld');
      env.reset(seed);
      return env.taskType() as string;
    });
    const count: Record<string, number> = {};
    for (const t of types) count[t] = (count[t] ?? 0) + 1;
    expect(r.tasksByType).toEqual(count);
    expect(Object.keys(r.byType).sort()).toEqual(Object.keys(count).sort());
    for (const values of Object.values(r.byType)) expect(values.length).toBe(2);
    // Training plays types 1-4: those are in distribution, cool and pick-two out of it; pass@k per group by hand.
    for (const [type, split] of Object.entries(r.typeSplits!))
      expect(split).toBe(['pick_cool_then_place_in_recep', 'pick_two_obj_and_place'].includes(type) ? 'OOD' : 'ID');
    for (const split of ['ID', 'OOD'] as const) {
      const mine = r.trials.filter((t) => r.typeSplits![t.taskType!] === split);
      if (mine.length === 0) continue;
      expect(r.bySplit![split]).toEqual([0, 1].map((k) => mine.filter((t) => t.wonEpisode >= 0 && t.wonEpisode <= k).length / mine.length));
    }
  });

  it('method modes and training shapes: single-episode baselines get K x N trials of one episode', () => {
    expect(evalTrialMode('lamer')).toEqual({ reflect: true, promptVariant: 'react' });
    expect(evalTrialMode('zero-shot')).toEqual({ reflect: false, promptVariant: 'zero-shot' });
    expect(trainRolloutShape('lamer', 3, 8)).toMatchObject({ episodes: 3, trialsPerTask: 8, reflect: true });
    expect(trainRolloutShape('gigpo', 3, 8)).toMatchObject({ episodes: 1, trialsPerTask: 24, reflect: false });
    try {
      trainRolloutShape('react', 3, 8);
      expect.unreachable();
    } catch (e) {
      expect(hasCode(e, 'E_CONFIG')).toBe(true);
    }
  });
});

describe('reflection checks (MineSweeper names the mine hit)', () => {
  it('the scripted reflections are all right; a policy naming another cell is always wrong; no check without reflections', async () => {
    const env = () => createEnv('minesweeper', { rows: 4, cols: 4, mines: 2, maxTurns: 7 });
    // Random admissible moves hit mines often, and the expert's scripted reflection names the mine each time.
    const right = await evaluate({
      policy: scriptedPolicy({ noise: 1, seed: 3, expert: { style: 'compact' } }),
      env,
      tasks: 24,
      method: 'lamer',
      style: 'compact',
    });
    expect(right.reflectionChecks.checked).toBeGreaterThan(5);
    expect(right.reflectionChecks.correct).toBe(right.reflectionChecks.checked);
    // The same play, but every reflection blames cell (1, 1) or names no mine at all.
    const wrongPolicy = scriptedPolicy({ noise: 1, seed: 3, expert: { style: 'compact' } });
    const liar = (view: Parameters<typeof wrongPolicy>[0]): PolicyClient => {
      const inner = wrongPolicy(view);
      return {
        generate: async (request) => {
          if (view.phase !== 'reflect') return inner.generate(request);
          const hitCell = /\((\d), (\d)\) was a mine/.exec(request.prompt);
          if (!hitCell) return scriptedResult(request, '<remark>out of turns</remark>');
          const other = hitCell[1] === '1' && hitCell[2] === '1' ? '(1, 2)' : '(1, 1)';
          return scriptedResult(request, view.episode % 2 === 0 ? `<remark>mine ${other}; safe none</remark>` : '<remark>out of turns</remark>');
        },
      };
    };
    const wrong = await evaluate({ policy: liar, env, tasks: 24, method: 'lamer', style: 'compact' });
    expect(wrong.reflectionChecks.checked).toBeGreaterThan(5);
    expect(wrong.reflectionChecks.correct).toBe(0);
    // Independent attempts write no reflections.
    const none = await evaluate({ policy: scriptedPolicy({ noise: 1, seed: 3 }), env, tasks: 8, method: 'gigpo', style: 'compact' });
    expect(none.reflectionChecks).toEqual({ checked: 0, correct: 0 });
  });

  it('checkReflection: the first cell called a mine decides; none when the episode hit no mine', () => {
    const env = createEnv('minesweeper', { rows: 4, cols: 4, mines: 2, maxTurns: 7 });
    env.reset(taskSeed('eval', 0));
    const board = (env as unknown as { board: { mines: Uint8Array } }).board;
    const mine = board.mines.indexOf(1);
    const label = `(${Math.floor(mine / 4) + 1}, ${(mine % 4) + 1})`;
    const steps = [{ action: label, observation: '' }];
    expect(env.checkReflection!(steps, `mine ${label}; safe none`)).toBe(true);
    expect(env.checkReflection!(steps, `I hit the mine at ${label}.`)).toBe(true);
    expect(env.checkReflection!(steps, `safe (9, 9); mine (4, 5)`)).toBe(false);
    expect(env.checkReflection!(steps, 'out of turns')).toBe(false);
    expect(env.checkReflection!([], 'mine (1, 1)')).toBeUndefined();
  });
});

describe('expert reflections (the policy plays, the environment expert reflects)', () => {
  const env = () => createEnv('minesweeper', { rows: 4, cols: 4, mines: 2, maxTurns: 7 });

  it('play turns go to the policy, reflections come from the expert and reach the memory', async () => {
    // The policy plays random admissible moves and writes reflections that blame the wrong cell.
    const inner = scriptedPolicy({ noise: 1, seed: 3, expert: { style: 'compact' } });
    const asked: string[] = [];
    const liar = (view: Parameters<typeof inner>[0]): PolicyClient => {
      const play = inner(view);
      return {
        generate: async (request) => {
          asked.push(view.phase);
          return view.phase === 'reflect' ? scriptedResult(request, '<remark>mine (9, 9); safe none</remark>') : play.generate(request);
        },
      };
    };
    const own = await evaluate({ policy: liar, env, tasks: 24, method: 'lamer', style: 'compact' });
    expect(own.reflections).toBe('model');
    expect(own.reflectionChecks.correct).toBe(0);
    const reflectCalls = asked.filter((p) => p === 'reflect').length;
    expect(reflectCalls).toBe(own.stats.reflectRows);
    asked.length = 0;
    const expert = await evaluate({ policy: liar, env, tasks: 24, method: 'lamer', style: 'compact', reflections: 'expert' });
    expect(expert.reflections).toBe('expert');
    // The same moves (random play, seeded per trial) and so the same trials, but no reflection was asked of the policy
    // and every checkable one now names the mine that was hit.
    expect(asked.filter((p) => p === 'reflect')).toHaveLength(0);
    expect(asked.length).toBeGreaterThan(0);
    expect(expert.stats.reflectRows).toBe(own.stats.reflectRows);
    expect(expert.reflectionChecks.checked).toBe(own.reflectionChecks.checked);
    expect(expert.reflectionChecks.checked).toBeGreaterThan(5);
    expect(expert.reflectionChecks.correct).toBe(expert.reflectionChecks.checked);
  });

  it('the expert reflection is what the next episode remembers, kept whole', async () => {
    // Random admissible clicks as bare answers, which fit the 24-token limit (scripted answers count one token per
    // character); the expert's reflections do not fit it and must not be cut.
    const prompts: string[] = [];
    const clicker = (view: TrialView): PolicyClient => {
      const rng = new Rng(view.seed);
      return {
        generate: async (request) => {
          prompts.push(request.prompt);
          return scriptedResult(request, `<action>${rng.pick(view.env.admissibleActions())}</action>`);
        },
      };
    };
    const r = await evaluate({ policy: clicker, env, tasks: 24, method: 'lamer', style: 'compact', reflections: 'expert', sampling: { maxNewTokens: 24 } });
    expect(r.stats.reflectRows).toBeGreaterThan(5);
    expect(r.reflectionChecks.correct).toBe(r.reflectionChecks.checked);
    // Later-episode prompts remember the expert's whole "mine (r, c); safe ..." notes.
    const notes = prompts.flatMap((p) => [...p.matchAll(/fail note: (mine \(\d, \d\); safe [^|]*?)(?= ; T\d| \|)/g)].map((m) => m[1]));
    expect(notes.length).toBeGreaterThan(5);
    expect(notes.every((n) => `<remark>${n}</remark>`.length > 24)).toBe(true);
  });

  it('refuses expert reflections for a method without reflections, and an environment without an expert', async () => {
    await expect(evaluate({ policy: new Recorder(), env, tasks: 2, method: 'gigpo', reflections: 'expert' })).rejects.toSatisfy((e) => hasCode(e, 'E_ARG'));
    await expect(evaluate({ policy: new Recorder(), env, tasks: 2, method: 'lamer', reflections: 'bogus' as never })).rejects.toSatisfy((e) =>
      hasCode(e, 'E_ARG'),
    );
    // A custom environment (the Environment interface, here delegating to a board) has no scripted expert.
    const custom = (): Environment => {
      const board = new TinyBoard();
      return {
        name: 'my-board',
        maxTurns: board.maxTurns,
        reset: (seed) => board.reset(seed),
        restart: () => board.restart(),
        step: (response) => board.step(response),
        admissibleActions: () => board.admissibleActions(),
        taskType: () => undefined,
        playPrompt: (input) => board.playPrompt(input),
        reflectPrompt: (input) => board.reflectPrompt(input),
        parseReflection: (response) => board.parseReflection(response),
      };
    };
    await expect(evaluate({ policy: new Recorder(), env: custom, tasks: 2, method: 'lamer' })).resolves.toMatchObject({ env: 'my-board' });
    await expect(evaluate({ policy: new Recorder(), env: custom, tasks: 2, method: 'lamer', reflections: 'expert' })).rejects.toSatisfy(
      (e) => hasCode(e, 'E_ENV') && /no expert for environment "my-board"/.test(String(e)),
    );
  });
});
