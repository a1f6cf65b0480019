// Held-out evaluation: evaluation-split seeds only, the methods' trial modes (reflection only for LaMer and Reflexion),
// pass@k from the trials, and per-type figures for an environment with task types.

import { describe, expect, it } from 'vitest';
import { createEnv } from '../../src/envs/registry.js';
import { EVAL_SEEDS, taskSeed } from '../../src/envs/common/seeds.js';
import { hasCode } from '../../src/errors.js';
import { evaluate, evalTaskSeeds } from '../../src/eval/evaluate.js';
import { evalTrialMode, trainRolloutShape } from '../../src/eval/methods.js';
import { scriptedPolicy } from '../../src/rollout/scripted.js';
import type { GenerateRequest, PolicyClient } from '../../src/rollout/policy.js';
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
      const r = await evaluate({ policy, env: () => new TinyBoard(), tasks: 4, method, episodes: 3 });
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
