// The batch runner: groups and trial ids, row order whatever order trials finish in, concurrency (trials overlap, and
// the bound is respected), abort, determinism from seeds, and the token arrays beside the table.

import { describe, expect, it } from 'vitest';
import { createEnv } from '../../src/envs/registry.js';
import { hasCode } from '../../src/errors.js';
import { runRollout } from '../../src/rollout/runner.js';
import { scriptedPolicy, scriptedResult } from '../../src/rollout/scripted.js';
import type { GenerateRequest, GenerateResult, PolicyClient } from '../../src/rollout/policy.js';
import { PHASE_REFLECT } from '../../src/rollout/rows.js';
import { SAMPLING, TinyBoard, click } from './helpers.js';

/** A shared client that records how many generate calls are pending at once; answers a mine click after `delay`. */
class CountingPolicy implements PolicyClient {
  pending = 0;
  maxPending = 0;
  calls = 0;
  constructor(private readonly delayMs: (call: number) => number = () => 1) {}
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const call = this.calls++;
    this.pending++;
    this.maxPending = Math.max(this.maxPending, this.pending);
    await new Promise((r) => setTimeout(r, this.delayMs(call)));
    this.pending--;
    const answer = request.prompt.includes('<remark>') ? '<remark>mine at (2, 2)</remark>' : click(2, 2);
    return scriptedResult(request, answer);
  }
}

const lamer = { episodes: 3, reflect: true, sampling: SAMPLING };

describe('runRollout', () => {
  it('K trials per task share the task seed and group; trial ids are unique; rows ordered by (group, trial)', async () => {
    const seeds = [5, 9, 13];
    const policy = new CountingPolicy((call) => (call * 7919) % 5); // trials finish out of order
    const batch = await runRollout({ policy, env: () => new TinyBoard(), tasks: seeds, trialsPerTask: 2, trial: lamer });
    // Each trial: mine (ep0), reflect, mine (ep1), reflect, mine (ep2) = 5 rows; 6 trials.
    expect(batch.table.length).toBe(30);
    expect(batch.trials.map((t) => [t.group, t.trial, t.seed])).toEqual([
      [0, 0, 5],
      [0, 1, 5],
      [1, 2, 9],
      [1, 3, 9],
      [2, 4, 13],
      [2, 5, 13],
    ]);
    expect(Array.from(batch.table.trial)).toEqual([0, 1, 2, 3, 4, 5].flatMap((t) => [t, t, t, t, t]));
    expect(Array.from(batch.table.group)).toEqual([0, 0, 1, 1, 2, 2].flatMap((g) => [g, g, g, g, g]));
    expect(Array.from(batch.table.phase.slice(0, 5))).toEqual([0, 1, 0, 1, 0]);
    expect(Array.from(batch.table.episode.slice(0, 5))).toEqual([0, 1, 1, 2, 2]);
    expect(batch.stats).toMatchObject({ rows: 30, playRows: 18, reflectRows: 12, trials: 6, episodes: 18 });
    // Per-row arrays are aligned with the table.
    for (let i = 0; i < batch.table.length; i++) {
      expect(batch.responses[i]).toBe(batch.table.phase[i] === PHASE_REFLECT ? '<remark>mine at (2, 2)</remark>' : click(2, 2));
      expect(batch.responseIds[i].length).toBe(batch.responses[i].length);
      expect(batch.logprobs[i].length).toBe(batch.responseIds[i].length);
      expect(batch.promptIds[i].length).toBe(batch.prompts[i].length);
    }
    expect(batch.stats.responseTokens).toBe(batch.responses.reduce((s, r) => s + r.length, 0));
  });

  it('runs trials concurrently: more than one generate is pending at once; concurrency 1 serialises them', async () => {
    const wide = new CountingPolicy();
    await runRollout({ policy: wide, env: () => new TinyBoard(), tasks: [1, 2], trialsPerTask: 4, trial: lamer });
    expect(wide.maxPending).toBe(8);
    const narrow = new CountingPolicy();
    await runRollout({ policy: narrow, env: () => new TinyBoard(), tasks: [1, 2], trialsPerTask: 4, trial: lamer, concurrency: 3 });
    expect(narrow.maxPending).toBe(3);
    const one = new CountingPolicy();
    await runRollout({ policy: one, env: () => new TinyBoard(), tasks: [1, 2], trialsPerTask: 2, trial: lamer, concurrency: 1 });
    expect(one.maxPending).toBe(1);
  });

  it('reports progress up to every trial and row', async () => {
    const seen: [number, number][] = [];
    const batch = await runRollout({
      policy: new CountingPolicy(),
      env: () => new TinyBoard(),
      tasks: [1],
      trialsPerTask: 3,
      trial: lamer,
      onProgress: (p) => seen.push([p.trialsDone, p.rows]),
    });
    expect(seen[seen.length - 1]).toEqual([3, batch.table.length]);
    expect(seen.map((s) => s[1])).toEqual([...seen.map((s) => s[1])].sort((a, b) => a - b));
  });

  it('aborts: a signal fired while generate calls hang rejects promptly with AbortError', async () => {
    const hanging: PolicyClient = { generate: () => new Promise<GenerateResult>(() => {}) };
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const t0 = performance.now();
    const err = await runRollout({
      policy: hanging,
      env: () => new TinyBoard(),
      tasks: [1, 2],
      trialsPerTask: 4,
      trial: lamer,
      signal: controller.signal,
    }).catch((e) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('aborts between turns and stops asking the policy', async () => {
    const controller = new AbortController();
    const policy = new CountingPolicy();
    const err = await runRollout({
      policy,
      env: () => new TinyBoard(),
      tasks: [1, 2, 3],
      trialsPerTask: 2,
      trial: lamer,
      onProgress: (p) => {
        if (p.rows === 4) controller.abort(new Error('stop now'));
      },
      signal: controller.signal,
    }).catch((e) => e);
    expect((err as Error).message).toBe('stop now');
    const callsAtAbort = policy.calls;
    await new Promise((r) => setTimeout(r, 30));
    expect(policy.calls).toBe(callsAtAbort);
    expect(policy.calls).toBeLessThan(30);
  });

  it('rejects at once for an already aborted signal, and stops other trials when one fails', async () => {
    const controller = new AbortController();
    controller.abort();
    const policy = new CountingPolicy();
    const err = await runRollout({ policy, env: () => new TinyBoard(), tasks: [1], trialsPerTask: 2, trial: lamer, signal: controller.signal }).catch((e) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(policy.calls).toBe(0);

    let calls = 0;
    const failing: PolicyClient = {
      generate: async (request) => {
        calls++;
        await new Promise((r) => setTimeout(r, 2));
        if (calls === 3) throw new Error('engine failed');
        return scriptedResult(request, click(2, 2));
      },
    };
    const fail = await runRollout({ policy: failing, env: () => new TinyBoard(), tasks: [1], trialsPerTask: 2, trial: lamer }).catch((e) => e);
    expect((fail as Error).message).toBe('engine failed');
    const after = calls;
    await new Promise((r) => setTimeout(r, 30));
    expect(calls).toBeLessThanOrEqual(after + 1);
  });

  it('is reproducible: the same seeds give the same rows and sampling seeds, whatever the interleaving', async () => {
    const seeds: number[][] = [[], []];
    const run = (k: number, delay: (call: number) => number) =>
      runRollout({
        policy: (view) => {
          const inner = scriptedPolicy({ noise: 0.5, seed: 3 })(view);
          return {
            generate: async (req) => {
              seeds[k].push(view.trial * 1000 + ((req.seed ?? -1) % 1000));
              await new Promise((r) => setTimeout(r, delay(seeds[k].length)));
              return inner.generate(req);
            },
          };
        },
        env: () => createEnv('minesweeper'),
        tasks: [21, 22],
        trialsPerTask: 3,
        trial: { ...lamer, maxTurns: 4 },
        seed: 99,
      });
    const a = await run(0, () => 0);
    const b = await run(1, (n) => (n * 31) % 4);
    expect(Array.from(b.table.reward)).toEqual(Array.from(a.table.reward));
    expect(b.table.anchor).toEqual(a.table.anchor);
    expect(b.responses).toEqual(a.responses);
    expect([...seeds[1]].sort()).toEqual([...seeds[0]].sort());
    expect(seeds[0].every((s) => s % 1000 >= 0)).toBe(true);
  });

  it('rejects bad options with E_ARG', async () => {
    const ok = { policy: new CountingPolicy(), env: () => new TinyBoard(), tasks: [1], trialsPerTask: 1, trial: lamer };
    for (const bad of [{ trialsPerTask: 0 }, { tasks: [-1] }, { concurrency: 0 }, { env: 'minesweeper' }, { policy: {} }]) {
      const err = await runRollout({ ...ok, ...(bad as object) } as never).catch((e) => e);
      expect(hasCode(err, 'E_ARG')).toBe(true);
    }
  });
});
