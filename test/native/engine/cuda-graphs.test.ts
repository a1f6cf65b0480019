// Decode steps replayed from CUDA graphs against the same engine decoding eagerly (cudaGraphs: false) and against the
// model's own log-prob computation, with and without a LoRA adapter. These run only where the addon has CUDA and sees a
// GPU; elsewhere they are skipped, and the CPU suite covers the fixed-slot cache the graphs read.
import { describe, expect, it } from 'vitest';
import { Engine, type EngineOptions, type EngineRequest, type EngineResult } from '../../../src/engine/index.js';
import { Policy } from '../../../src/model/policy.js';
import { Optimizer } from '../../../src/train/optimizer.js';
import { gpu, gpuTitle } from '../gpu.js';
import { tinyConfig } from '../train/step-helpers.js';
import { randomIds, rng } from '../../helpers/index.js';
import { BF16_LOGPROB_TOLERANCE } from './tolerances.js';

const V = 64;

function cudaPolicy(seed: number, dtype: 'float32' | 'bfloat16'): Promise<Policy> {
  return Policy.init(tinyConfig({ vocab: V, layers: 3 }), { seed, std: 0.2, device: 'cuda', dtype, paramDtype: 'float32' });
}

/** Requests that join in two waves and leave at different steps, so several row and width buckets are replayed. */
async function run(
  policy: Policy,
  cudaGraphs: boolean,
  make: (i: number, prompt: number[]) => EngineRequest,
  options: EngineOptions = {},
): Promise<{ out: EngineResult[]; engine: Engine }> {
  const engine = new Engine(policy, { slots: 8, stepsPerCall: 8, cudaGraphs, ...options });
  const r = rng(5);
  const prompts = Array.from({ length: 12 }, (_, i) => randomIds(r, 3 + ((i * 7) % 40), V));
  const first = prompts.slice(0, 6).map((p, i) => engine.generate(make(i, p)));
  await new Promise((res) => setTimeout(res, 5));
  const second = prompts.slice(6).map((p, i) => engine.generate(make(6 + i, p)));
  return { out: await Promise.all([...first, ...second]), engine };
}

describe.skipIf(!gpu.ok)(gpuTitle('CUDA graphs'), () => {
  it('greedy tokens with graphs equal those without, token for token, and the steps were replayed from graphs', async () => {
    await using policy = await cudaPolicy(1, 'float32');
    const greedy = (i: number, p: number[]): EngineRequest => ({ promptIds: p, maxNewTokens: 10 + 9 * (i % 5), temperature: 0, stopIds: [] });
    const on = await run(policy, true, greedy);
    const off = await run(policy, false, greedy);
    expect(on.out.map((x) => Array.from(x.tokens))).toEqual(off.out.map((x) => Array.from(x.tokens)));
    const s = on.engine.stats();
    expect(s.graphError).toBeUndefined();
    expect(s.graphSteps).toBeGreaterThan(s.decodeSteps / 2);
    expect(s.graphs).toBeGreaterThan(1);
    expect(off.engine.stats().graphSteps).toBe(0);
    on.engine.dispose();
    off.engine.dispose();
  });

  it('attention over live lengths gives the tokens masked attention gives, reading only the live keys/values', async () => {
    await using policy = await cudaPolicy(5, 'float32');
    const greedy = (i: number, p: number[]): EngineRequest => ({ promptIds: p, maxNewTokens: 10 + 9 * (i % 5), temperature: 0, stopIds: [] });
    const live = await run(policy, true, greedy, { liveAttention: true });
    const masked = await run(policy, true, greedy, { liveAttention: false });
    expect(live.out.map((x) => Array.from(x.tokens))).toEqual(masked.out.map((x) => Array.from(x.tokens)));
    const [l, m] = [live.engine.stats(), masked.engine.stats()];
    expect(l.kvBytesLive).toBe(m.kvBytesLive);
    expect(m.kvBytesRead).toBeGreaterThan(1.5 * m.kvBytesLive); // rows x rounded width
    expect(l.kvBytesRead).toBeGreaterThanOrEqual(l.kvBytesLive);
    expect(l.kvBytesRead).toBeLessThan(m.kvBytesRead);
    live.engine.dispose();
    masked.engine.dispose();
  });

  it('precapture captures every bucket before the first request, and generating then captures no more', async () => {
    await using policy = await cudaPolicy(6, 'float32');
    const greedy = (i: number, p: number[]): EngineRequest => ({ promptIds: p, maxNewTokens: 10 + 9 * (i % 5), temperature: 0, stopIds: [] });
    // Every bucket, directly and as the engine option (captured before the first step, in the same waves as below).
    await using idle = new Engine(policy, { slots: 8, stepsPerCall: 8 });
    const captured = await idle.precapture({ columns: 128, temperature: 0 });
    expect(captured.error).toBeUndefined();
    // Rows 1, 2, 4, 8; attention over live lengths (the default) makes the width bound nothing, so one width each.
    expect(captured.graphs).toBe(4);
    await using masked = new Engine(policy, { slots: 8, stepsPerCall: 8, liveAttention: false });
    expect((await masked.precapture({ columns: 128, temperature: 0 })).graphs).toBe(4 * 2); // x widths 64, 128
    const pre = await run(policy, true, greedy, { precapture: { columns: 128, temperature: 0 } });
    expect(pre.engine.stats().graphs).toBe(captured.graphs);
    expect(pre.engine.stats().graphSteps).toBeGreaterThan(0);
    const reference = await run(policy, false, greedy);
    expect(pre.out.map((x) => Array.from(x.tokens))).toEqual(reference.out.map((x) => Array.from(x.tokens)));
    pre.engine.dispose();
    reference.engine.dispose();
  });

  it('seeded sampling (plain, top-k/top-p and greedy rows together) gives the same tokens with and without graphs', async () => {
    await using policy = await cudaPolicy(2, 'float32');
    const kinds = [{ temperature: 1 }, { temperature: 0.8, topK: 10, topP: 0.9 }, { temperature: 0 }];
    const sampled = (i: number, p: number[]): EngineRequest => ({ promptIds: p, maxNewTokens: 30, stopIds: [], seed: 100 + i, ...kinds[i % 3] });
    const on = await run(policy, true, sampled);
    const off = await run(policy, false, sampled);
    expect(on.out.map((x) => Array.from(x.tokens))).toEqual(off.out.map((x) => Array.from(x.tokens)));
    expect(on.engine.stats().graphSteps).toBeGreaterThan(0);
    on.engine.dispose();
    off.engine.dispose();
  });

  for (const [dtype, tolerance] of [
    ['float32', 1e-4],
    ['bfloat16', BF16_LOGPROB_TOLERANCE],
  ] as const) {
    it(`log-probs from graph replays equal policy.logprobs within ${tolerance} (${dtype})`, async () => {
      await using policy = await cudaPolicy(3, dtype);
      const sampled = (i: number, p: number[]): EngineRequest => ({ promptIds: p, maxNewTokens: 24, stopIds: [], seed: 7 + i, temperature: 1 });
      const { out, engine } = await run(policy, true, sampled);
      expect(engine.stats().graphSteps).toBeGreaterThan(0);
      const r = rng(5);
      const prompts = Array.from({ length: 12 }, (_, i) => randomIds(r, 3 + ((i * 7) % 40), V));
      const ref = await policy.logprobs({ prompts, completions: out.map((x) => x.tokens) });
      let worst = 0;
      for (let i = 0; i < out.length; i++) {
        for (let t = 0; t < out[i].logprobs.length; t++) worst = Math.max(worst, Math.abs(out[i].logprobs[t] - ref[i][t]));
      }
      expect(worst, `the largest gap (${dtype})`).toBeLessThan(tolerance);
      engine.dispose();
    });
  }

  it('a train step that changes the parameters is seen by the next replay of the same graphs', async () => {
    await using policy = await cudaPolicy(4, 'bfloat16');
    const prompt = randomIds(rng(9), 12, V);
    const greedy: EngineRequest = { promptIds: prompt, maxNewTokens: 40, temperature: 0, stopIds: [] };
    await using graphs = new Engine(policy, { slots: 4, stepsPerCall: 8 });
    const before = await graphs.generate(greedy);
    const captured = graphs.stats().graphs;
    using opt = Optimizer.create(policy, { lr: 0.5 });
    const old = await policy.logprobs({ prompts: [prompt], completions: [before.tokens] });
    await opt.trainStep([{ prompt, response: Array.from(before.tokens), advantage: -1, oldLogprobs: Array.from(old[0]) }], {});
    const after = await graphs.generate(greedy);
    await using eager = new Engine(policy, { slots: 4, stepsPerCall: 8, cudaGraphs: false });
    const reference = await eager.generate(greedy);
    expect(Array.from(after.tokens)).toEqual(Array.from(reference.tokens));
    expect(Array.from(after.tokens)).not.toEqual(Array.from(before.tokens));
    expect(graphs.stats().graphs).toBe(captured); // replayed, not captured again
  });

  for (const merged of [false, true]) {
    it(`a LoRA step on a bf16 base is seen by the next replay of the same graphs (${merged ? 'merged copies' : 'unmerged'})`, async () => {
      // The base frozen in bf16 (as lamer train keeps it under LoRA), the adapter in fp32.
      await using policy = await Policy.init(tinyConfig({ vocab: V, layers: 3 }), {
        seed: 6,
        std: 0.2,
        device: 'cuda',
        dtype: 'bfloat16',
        paramDtype: 'bfloat16',
      });
      await policy.addLora({ r: 4, alpha: 8, dropout: 0, targets: 'all-linear', seed: 2 });
      if (merged) await policy.setAdapterMerged(true);
      const prompt = randomIds(rng(10), 12, V);
      const greedy: EngineRequest = { promptIds: prompt, maxNewTokens: 40, temperature: 0, stopIds: [] };
      await using graphs = new Engine(policy, { slots: 4, stepsPerCall: 8 });
      using opt = Optimizer.create(policy, { lr: 0.05, weightDecay: 0 });
      await opt.sftStep([{ prompt, response: randomIds(rng(11), 8, V) }]);
      const before = await graphs.generate(greedy);
      const captured = graphs.stats().graphs;
      await opt.sftStep([{ prompt, response: randomIds(rng(12), 8, V) }]);
      await opt.sftStep([{ prompt, response: randomIds(rng(12), 8, V) }]);
      const after = await graphs.generate(greedy);
      await using eager = new Engine(policy, { slots: 4, stepsPerCall: 8, cudaGraphs: false });
      const reference = await eager.generate(greedy);
      expect(Array.from(after.tokens)).toEqual(Array.from(reference.tokens));
      // The steps changed what the replays compute: other tokens, or the same ones with other log-probs.
      const sameTokens = Array.from(after.tokens).join() === Array.from(before.tokens).join();
      if (sameTokens) expect(Math.max(...Array.from(after.logprobs, (x, i) => Math.abs(x - before.logprobs[i])))).toBeGreaterThan(1e-3);
      expect(graphs.stats().graphError).toBeUndefined();
      expect(graphs.stats().graphSteps).toBeGreaterThan(0);
      expect(graphs.stats().graphs).toBe(captured);
      // Only the adapter trained: the optimizer holds no state for the base.
      expect((await opt.memory()).trainableCount).toBe(policy.loraParameterCount);
    });
  }
});
