// The engine's prefix cache: prompts that start like earlier ones (the growing prompt of a multi-turn agent, trials
// of one task) reuse kept keys/values. Checked against decoding by repeated full forwards (no cache of any kind),
// against the same engine with the prefix cache off, and against the model's own log-prob computation; the cache
// must be dropped when the parameters change and stay within its budget.
import { describe, expect, it } from 'vitest';
import { Engine, type EngineRequest } from '../../../src/engine/index.js';
import { Optimizer } from '../../../src/train/optimizer.js';
import { Policy } from '../../../src/model/policy.js';
import { tinyConfig, tinyPolicy } from '../train/step-helpers.js';
import { addon } from '../../../src/native/addon.js';
import { greedyByFullForwards } from './full-forwards.js';
import { randomIds, rng, tempDir } from '../../helpers/index.js';

const V = 50;

/**
 * Three "agents" of two tasks: each turn's prompt is the previous prompt plus the previous response plus a new
 * observation; trials of one task share their opening (two of them identical, sent in the same call).
 */
function turns(r: () => number): { first: number[][]; next: (prev: number[], response: number[]) => number[] } {
  const taskA = randomIds(r, 20, V);
  const taskB = randomIds(r, 13, V);
  return {
    first: [taskA, [...taskA], [...taskB, ...randomIds(r, 5, V)]],
    next: (prev, response) => [...prev, ...response, ...randomIds(r, 3 + Math.floor(r() * 5), V)],
  };
}

const greedy = (promptIds: number[]): EngineRequest => ({ promptIds, maxNewTokens: 6, temperature: 0, stopIds: [] });

describe('prefix cache', () => {
  it('multi-turn greedy decoding equals full forwards and the engine without the cache; prompt tokens are reused', async () => {
    await using policy = await tinyPolicy(21, { vocab: V, layers: 3 });
    await using cached = new Engine(policy, { slots: 4 });
    await using plain = new Engine(policy, { slots: 4, prefixCacheBytes: 0 });
    const t = turns(rng(5));
    let prompts = t.first;
    let promptTokens = 0;
    for (let turn = 0; turn < 4; turn++) {
      const a = await Promise.all(prompts.map((p) => cached.generate(greedy(p))));
      const b = await Promise.all(prompts.map((p) => plain.generate(greedy(p))));
      const full = await Promise.all(prompts.map((p) => greedyByFullForwards(policy, p, 6)));
      expect(a.map((x) => Array.from(x.tokens))).toEqual(full);
      expect(b.map((x) => Array.from(x.tokens))).toEqual(full);
      promptTokens += prompts.reduce((s, p) => s + p.length, 0);
      prompts = prompts.map((p, i) => t.next(p, Array.from(a[i].tokens)));
    }
    const s = cached.stats();
    expect(s.reusedPromptTokens + s.prefilledPromptTokens).toBe(promptTokens);
    // Turn 1: the duplicate opening is computed once; later turns compute only the new tail.
    expect(s.reusedPromptTokens).toBeGreaterThan(0.6 * promptTokens);
    expect(plain.stats().reusedPromptTokens).toBe(0);
    expect(plain.stats().cachedPrefixTokens).toBe(0);
  });

  it('sampled log-probs with reused keys/values equal the model log-prob computation within 1e-4', async () => {
    await using policy = await tinyPolicy(22, { vocab: V, layers: 2 });
    await using engine = new Engine(policy, { slots: 8 });
    const r = rng(9);
    const opening = randomIds(r, 24, V);
    // Prompts of different lengths sharing the opening to different depths, in one call after the opening is kept.
    await engine.generate({ promptIds: opening, maxNewTokens: 2, temperature: 1, seed: 1, stopIds: [] });
    const prompts = [opening.slice(0, 10), [...opening, ...randomIds(r, 7, V)], [...opening.slice(0, 17), ...randomIds(r, 2, V)], opening, randomIds(r, 9, V)];
    for (const s of [
      { temperature: 1, topP: 1, topK: 0 },
      { temperature: 0.7, topP: 0.8, topK: 20 },
    ]) {
      const before = engine.stats().reusedPromptTokens;
      const out = await Promise.all(prompts.map((p, i) => engine.generate({ promptIds: p, maxNewTokens: 12, seed: 30 + i, stopIds: [], ...s })));
      expect(engine.stats().reusedPromptTokens - before).toBeGreaterThanOrEqual(9 + 23 + 17 + 23);
      const ref = await policy.logprobs({ prompts, completions: out.map((x) => x.tokens) }, { temperature: s.temperature });
      let worst = 0;
      out.forEach((x, i) => x.logprobs.forEach((v, j) => (worst = Math.max(worst, Math.abs(v - ref[i][j])))));
      expect(worst).toBeLessThan(1e-4);
    }
  });

  it('prefills a prompt computed whole apart from prompts taken mostly from the cache, so neither pads to the other', async () => {
    await using policy = await tinyPolicy(24, { vocab: V, layers: 2 });
    await using engine = new Engine(policy, { slots: 8 });
    const r = rng(11);
    const opening = randomIds(r, 60, V);
    await engine.generate(greedy(opening));
    const before = engine.stats();
    // Four turns that extend the kept opening by 3 tokens, and a new 60-token prompt, joining in one call.
    const prompts = [...Array.from({ length: 4 }, () => [...opening, ...randomIds(r, 3, V)]), randomIds(r, 60, V)];
    const out = await Promise.all(prompts.map((p) => engine.generate(greedy(p))));
    const full = await Promise.all(prompts.map((p) => greedyByFullForwards(policy, p, 6)));
    expect(out.map((x) => Array.from(x.tokens))).toEqual(full);
    const s = engine.stats();
    expect(s.prefilledPromptTokens - before.prefilledPromptTokens).toBe(4 * 3 + 60);
    // In one forward the four would each pad to 60 computed columns (300 in all).
    expect(s.paddedPromptTokens - before.paddedPromptTokens).toBe(4 * 3 + 60);
  });

  it('is dropped when an optimizer step changes the parameters', async () => {
    await using policy = await tinyPolicy(23, { vocab: V, layers: 2 });
    await using engine = new Engine(policy, { slots: 4 });
    const prompt = randomIds(rng(3), 30, V);
    await engine.generate(greedy(prompt));
    await engine.generate(greedy(prompt));
    expect(engine.stats().reusedPromptTokens).toBe(29);
    using opt = Optimizer.create(policy, { lr: 0.05 });
    const response = randomIds(rng(4), 8, V);
    const old = await policy.logprobs({ prompts: [prompt], completions: [response] });
    await opt.trainStep([{ prompt, response, advantage: 1, oldLogprobs: Array.from(old[0]) }], {});
    const after = await engine.generate(greedy(prompt));
    expect(engine.stats().reusedPromptTokens).toBe(29); // nothing reused across the step
    expect(Array.from(after.tokens)).toEqual(await greedyByFullForwards(policy, prompt, 6));
  });

  it('a train step reaches the compute-dtype weight copies the engine decodes with (bf16 over fp32 parameters)', async () => {
    // The engine keeps bf16 copies of the fp32 parameters, refreshed in place after a step (so captured CUDA graphs
    // see them). A reloaded copy of the stepped weights, with copies of its own, is the reference.
    await using policy = await Policy.init(tinyConfig({ vocab: V, layers: 2 }), { seed: 25, std: 0.3, dtype: 'bfloat16', paramDtype: 'float32' });
    await using engine = new Engine(policy, { slots: 4 });
    const prompt = randomIds(rng(5), 20, V);
    const request = { ...greedy(prompt), maxNewTokens: 24 };
    const before = await engine.generate(request);
    using opt = Optimizer.create(policy, { lr: 0.3 });
    const old = await policy.logprobs({ prompts: [prompt], completions: [before.tokens] });
    await opt.trainStep([{ prompt, response: Array.from(before.tokens), advantage: -1, oldLogprobs: Array.from(old[0]) }], {});
    const after = await engine.generate(request);
    const dir = tempDir('stepped');
    await policy.save(dir, { dtype: 'float32' });
    await using reloaded = await Policy.load(dir, { dtype: 'bfloat16', paramDtype: 'float32' });
    await using fresh = new Engine(reloaded, { slots: 4 });
    expect(Array.from(after.tokens)).toEqual(Array.from((await fresh.generate(request)).tokens));
    expect(Array.from(after.tokens)).not.toEqual(Array.from(before.tokens));
  });

  it('stays within its budget, dropping the least recently used prompts', async () => {
    await using policy = await tinyPolicy(24, { vocab: V, layers: 2, kvHeads: 2, headDim: 8 });
    // fp32 keys and values of 2 layers x 2 heads x 8 dims: 256 bytes a token; a budget of 100 tokens.
    await using engine = new Engine(policy, { slots: 4, prefixCacheBytes: 100 * 256 });
    const r = rng(8);
    const a = randomIds(r, 40, V);
    const b = randomIds(r, 40, V);
    const c = randomIds(r, 40, V);
    for (const p of [a, b]) await engine.generate(greedy(p));
    expect(engine.stats().cachedPrefixTokens).toBe(80);
    await engine.generate(greedy(a)); // a is used again: b is now the least recently used
    await engine.generate(greedy(c));
    expect(engine.stats().cachedPrefixTokens).toBe(80);
    const reused = engine.stats().reusedPromptTokens;
    await engine.generate(greedy(a));
    expect(engine.stats().reusedPromptTokens - reused).toBe(39);
    await engine.generate(greedy(b));
    expect(engine.stats().reusedPromptTokens - reused).toBe(39); // b was dropped
    expect(() => new Engine(policy, { prefixCacheBytes: -1 })).toThrow(/prefixCacheBytes/);
    engine.clearPrefixCache();
    await engine.generate(greedy(a));
    expect(engine.stats().reusedPromptTokens - reused).toBe(39); // emptied before that step: a computed again
    expect(engine.stats().cachedPrefixTokens).toBe(40);
  });

  it('keeps each finished prompt as one tensor: one stack of every layer, not a clone per layer and side', async () => {
    await using policy = await tinyPolicy(24, { vocab: V, layers: 6 });
    const prompts = [randomIds(rng(1), 9, V), randomIds(rng(2), 11, V)];
    // Operators a generate dispatches with the prefix cache on, less the same generate with it off: what keeping the
    // two finished prompts costs.
    const ops = async (prefixCacheBytes?: number): Promise<Record<string, number>> => {
      await using engine = new Engine(policy, { slots: 2, prefixCacheBytes });
      await Promise.all(prompts.map((p) => engine.generate(greedy(p)))); // first use: weight copies and buffers
      await using fresh = new Engine(policy, { slots: 2, prefixCacheBytes });
      addon().opCounterStart();
      try {
        await Promise.all(prompts.map((p) => fresh.generate(greedy(p))));
      } catch (e) {
        addon().opCounterStop();
        throw e;
      }
      return addon().opCounterStop().byName;
    };
    const on = await ops();
    const off = await ops(0);
    const extra = (name: string): number => (on[name] ?? 0) - (off[name] ?? 0);
    expect(extra('aten::clone')).toBe(0);
    expect(extra('aten::stack')).toBe(prompts.length);
  });

  it('release() frees an idle engine, which then generates as a fresh one; it refuses while requests run', async () => {
    await using policy = await tinyPolicy(25, { vocab: V, layers: 2 });
    await using engine = new Engine(policy, { slots: 4 });
    const prompts = [randomIds(rng(3), 12, V), randomIds(rng(4), 30, V)];
    const before = await Promise.all(prompts.map((p) => engine.generate(greedy(p))));
    expect(engine.stats().slotCapacity).toBeGreaterThan(0);
    expect(engine.stats().cachedPrefixTokens).toBeGreaterThan(0);
    await engine.release();
    expect(engine.stats().slotCapacity).toBe(0);
    expect(engine.stats().cachedPrefixTokens).toBe(0);
    const after = await Promise.all(prompts.map((p) => engine.generate(greedy(p))));
    expect(after.map((x) => Array.from(x.tokens))).toEqual(before.map((x) => Array.from(x.tokens)));
    expect(engine.stats().reusedPromptTokens).toBe(0); // nothing was kept across the release
    const running = engine.generate(greedy(prompts[0]));
    await expect(engine.release()).rejects.toMatchObject({ code: 'E_ARG' });
    await running;
  });
});
