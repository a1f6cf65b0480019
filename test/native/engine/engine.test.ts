// The generation engine against independent references: greedy decoding with the KV cache equals greedy decoding by
// repeated full forwards (no cache) and transformers' generate(); the sampler equals a plain TS implementation of the
// same rule; sampled log-probs equal the model's own log-prob computation; seeded sampling does not depend on the
// batch; stop ids and stop strings end sequences; requests joining mid-decode disturb nobody.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Policy } from '../../../src/model/policy.js';
import { presetCheckpoint } from '../../../src/model/presets.js';
import { Engine, EngineClient, type EngineRequest, type EngineResult } from '../../../src/engine/index.js';
import { addon } from '../../../src/native/addon.js';
import { Tensor } from '../../../src/tensor.js';
import { hasCode } from '../../../src/errors.js';
import { ensurePython, maxAbsDiff, Oracle, python, root, tempDir } from '../../parity/python.js';
import { greedyByFullForwards } from './full-forwards.js';

const py = ensurePython();

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomIds(n: number, vocab: number, r: () => number, low = 4): number[] {
  return Array.from({ length: n }, () => low + Math.floor(r() * (vocab - low)));
}

/** transformers' greedy generate of each prompt alone (test/parity/engine/hf_generate.py). */
function hfGreedy(model: string, prompts: number[][], maxNew: number): number[][] {
  const dir = tempDir('hfgen');
  writeFileSync(join(dir, 'in.json'), JSON.stringify({ prompts, max_new_tokens: maxNew, mode: 'alone', stop: true }));
  execFileSync(python, [join(root, 'test', 'parity', 'engine', 'hf_generate.py'), '--model', model, '--input', join(dir, 'in.json'), '--out', join(dir, 'out.json')], {
    env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error', HF_HUB_OFFLINE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return (JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')) as { tokens: number[][] }).tokens;
}

/**
 * The sampling rule written plainly in double precision: temperature, top-k, renormalise, top-p, then the inverse CDF
 * over the kept tokens in descending probability; a row without cuts walks its CDF in token-id order (no sort).
 */
function referenceSample(logits: ArrayLike<number>, p: { temperature: number; topP: number; topK: number }, u: number): number {
  const V = logits.length;
  if (p.temperature === 0) {
    let best = 0;
    for (let j = 1; j < V; j++) if (logits[j] > logits[best]) best = j;
    return best;
  }
  const scaled = Array.from(logits, (x) => x / p.temperature);
  const max = Math.max(...scaled);
  const e = scaled.map((x) => Math.exp(x - max));
  const z = e.reduce((a, b) => a + b, 0);
  const k = p.topK > 0 && p.topK < V ? p.topK : V;
  const order = e.map((_, i) => i);
  if (k < V || p.topP < 1) order.sort((a, b) => e[b] - e[a] || a - b);
  let kept = order.slice(0, k);
  const mass = kept.reduce((a, i) => a + e[i] / z, 0);
  if (p.topP < 1) {
    const out: number[] = [];
    let before = 0;
    for (const i of kept) {
      if (!(before < p.topP)) break;
      out.push(i);
      before += e[i] / z / mass;
    }
    kept = out;
  }
  const total = kept.reduce((a, i) => a + e[i], 0);
  let acc = 0;
  for (const i of kept) {
    acc += e[i];
    if (acc > u * total) return i;
  }
  return kept[kept.length - 1];
}

describe('sampler', () => {
  const native = addon();
  const V = 50;
  const params = [
    { temperature: 1, topP: 1, topK: 0 },
    { temperature: 0.7, topP: 0.8, topK: 20 },
    { temperature: 0, topP: 1, topK: 0 },
    { temperature: 1.3, topP: 0.5, topK: 0 },
    { temperature: 0.9, topP: 1, topK: 5 },
    { temperature: 1, topP: 0.95, topK: 3 },
  ];

  it('picks the token a plain implementation of the rule picks, and reports log_softmax(logits / T) without the cuts', () => {
    const r = rng(5);
    let mismatches = 0;
    for (let trial = 0; trial < 200; trial++) {
      const data = Float32Array.from({ length: params.length * V }, () => (r() - 0.5) * 6);
      using logits = Tensor.from(data, { shape: [params.length, V] });
      const uniforms = Float64Array.from(params, () => r());
      const out = native.engineSample(logits.native, params, uniforms);
      for (let b = 0; b < params.length; b++) {
        const row = data.subarray(b * V, (b + 1) * V);
        if (out.tokens[b] !== referenceSample(row, params[b], uniforms[b])) mismatches++;
        const T = params[b].temperature || 1;
        const max = Math.max(...Array.from(row, (x) => x / T));
        const lse = max + Math.log(Array.from(row).reduce((a, x) => a + Math.exp(x / T - max), 0));
        expect(Math.abs(out.logprobs[b] - (row[out.tokens[b]] / T - lse))).toBeLessThan(1e-5);
      }
    }
    // A uniform within ~1e-7 of a CDF boundary may round either way; with 1200 draws expect none.
    expect(mismatches).toBe(0);
  });

  it('over a vocabulary of several blocks (the two-level inverse CDF) picks what the plain rule picks, never a zero-probability token', () => {
    // 2,600 tokens: blocks of 1,024 with the last one padded; rows with whole blocks and block edges of probability 0.
    const W = 2600;
    const r = rng(6);
    const rows = 8;
    const plain = { temperature: 1, topP: 1, topK: 0 };
    let mismatches = 0;
    for (let trial = 0; trial < 60; trial++) {
      const data = Float32Array.from({ length: rows * W }, () => (r() - 0.5) * 8);
      for (let b = 0; b < rows; b++) {
        const row = data.subarray(b * W, (b + 1) * W);
        if (b % 4 === 1) row.fill(-Infinity, 1024, 2048); // a middle block of zero probability
        if (b % 4 === 2) row.fill(-Infinity, 2040, W); // the last block and the end of the one before
        if (b % 4 === 3) row.fill(-Infinity, 0, 1023); // all but the last token of the first block
      }
      using logits = Tensor.from(data, { shape: [rows, W] });
      // Some uniforms at the extremes, where rounding could run past the last token of positive probability.
      const uniforms = Float64Array.from({ length: rows }, (_, b) => (b === 0 ? 1 - 2 ** -53 : b === 5 ? 0 : r()));
      const out = native.engineSample(
        logits.native,
        Array.from({ length: rows }, () => plain),
        uniforms,
      );
      for (let b = 0; b < rows; b++) {
        const row = data.subarray(b * W, (b + 1) * W);
        expect(row[out.tokens[b]], `row ${b} picked a token of probability 0`).toBeGreaterThan(-Infinity);
        if (out.tokens[b] !== referenceSample(row, plain, uniforms[b])) mismatches++;
      }
    }
    expect(mismatches).toBe(0);
  });

  it('never picks outside top-k / top-p, and follows the distribution (frequencies within 4 sigma)', () => {
    const data = Float32Array.from({ length: V }, (_, i) => Math.sin(i * 1.7) * 2);
    const p = { temperature: 0.8, topP: 0.7, topK: 8 };
    const n = 4000;
    using logits = Tensor.from(
      Float32Array.from({ length: n * V }, (_, i) => data[i % V]),
      { shape: [n, V] },
    );
    const u = Float64Array.from({ length: n }, (_, i) => native.engineUniform(77, i));
    const out = native.engineSample(
      logits.native,
      Array.from({ length: n }, () => p),
      u,
    );
    // Expected probabilities by the rule, computed independently.
    const scaled = Array.from(data, (x) => Math.exp(x / p.temperature));
    const order = scaled.map((_, i) => i).sort((a, b) => scaled[b] - scaled[a]);
    const top = order.slice(0, p.topK);
    const zk = top.reduce((a, i) => a + scaled[i], 0);
    const kept: number[] = [];
    let before = 0;
    for (const i of top) {
      if (before >= p.topP) break;
      kept.push(i);
      before += scaled[i] / zk;
    }
    const zp = kept.reduce((a, i) => a + scaled[i], 0);
    const counts = new Map<number, number>();
    for (const t of out.tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
    for (const t of counts.keys()) expect(kept).toContain(t);
    for (const i of kept) {
      const q = scaled[i] / zp;
      const sigma = Math.sqrt(n * q * (1 - q));
      expect(Math.abs((counts.get(i) ?? 0) - n * q)).toBeLessThan(4 * sigma + 1);
    }
  });

  it('per-request uniforms are uniform on [0, 1) and differ between seeds', () => {
    const a = Array.from({ length: 20000 }, (_, i) => native.engineUniform(1, i));
    const mean = a.reduce((x, y) => x + y, 0) / a.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.01);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...a)).toBeLessThan(1);
    expect(native.engineUniform(2, 0)).not.toBe(native.engineUniform(1, 0));
    expect(native.engineUniform(1, 3)).toBe(a[3]);
  });
});

const ARCHS = [
  {
    name: 'qwen3 (tied, q/k norms, head_dim*heads != hidden)',
    args: ['--arch', 'qwen3', '--tied', '--hidden', '48', '--heads', '4', '--kv-heads', '2', '--head-dim', '16'],
  },
  { name: 'qwen2 (q/k/v biases)', args: ['--arch', 'qwen2', '--hidden', '48', '--heads', '4', '--kv-heads', '2', '--head-dim', '12'] },
  {
    name: 'llama (llama3 RoPE scaling, GQA 4/1)',
    args: ['--arch', 'llama', '--llama3-rope', '--hidden', '48', '--heads', '4', '--kv-heads', '1', '--head-dim', '12', '--rope-theta', '500000'],
  },
];

describe.skipIf(!py.ok)(`greedy decoding with the KV cache${py.ok ? '' : ` (skipped: ${py.reason})`}`, () => {
  let oracle: Oracle;
  beforeAll(() => {
    oracle = new Oracle();
  });
  afterAll(() => oracle?.close());

  for (const [a, arch] of ARCHS.entries()) {
    it(`${arch.name}: equals repeated full forwards and transformers' generate, token for token, in a staggered batch`, async () => {
      const dir = await oracle.makeCheckpoint([...arch.args, '--seed', String(a + 3), '--layers', '3']);
      await using policy = await Policy.load(dir);
      const r = rng(100 + a);
      const prompts = [7, 1, 15, 3, 11].map((n) => randomIds(n, policy.config.vocabSize, r));
      const maxNew = 24;
      const stopIds = policy.stopIds;
      await using engine = new Engine(policy, { slots: 4 });
      // Three requests start together, two join a few steps later (one after a slot frees: slots = 4).
      const results: Promise<EngineResult>[] = prompts.slice(0, 3).map((p) => engine.generate({ promptIds: p, maxNewTokens: maxNew, temperature: 0 }));
      await new Promise((res) => setTimeout(res, 5));
      for (const p of prompts.slice(3)) results.push(engine.generate({ promptIds: p, maxNewTokens: maxNew, temperature: 0 }));
      const ours = (await Promise.all(results)).map((x) => Array.from(x.tokens));
      const full: number[][] = [];
      for (const p of prompts) full.push(await greedyByFullForwards(policy, p, maxNew, stopIds));
      expect(ours).toEqual(full);
      expect(ours).toEqual(hfGreedy(dir, prompts, maxNew));
      expect(ours.some((t) => t.length > 4)).toBe(true);
    });
  }

  it('long and short requests joining in waves and leaving mid-batch still decode as full forwards do', async () => {
    // Rows leave from the middle of the batch (free slots below the highest live one are computed and ignored, then
    // refilled by later joins), later prompts are wider than the live rows, and later requests are longer than the
    // slots' first capacity (the cache grows once, with rows live): a misplaced or stale row would change its tokens.
    const dir = await oracle.makeCheckpoint([...ARCHS[0].args, '--seed', '21', '--layers', '2']);
    await using policy = await Policy.load(dir);
    const r = rng(77);
    const waves = [0, 1, 2, 3].map((w) =>
      Array.from({ length: 5 }, () => ({
        prompt: randomIds(1 + Math.floor(r() * (40 + 60 * w)), policy.config.vocabSize, r),
        maxNew: 1 + Math.floor(r() * 110),
      })),
    );
    await using engine = new Engine(policy, { slots: 7, stepsPerCall: 1, prefixCacheBytes: 0 });
    // Each wave is submitted when the longest request of the one before has streamed 3 tokens, so waves overlap
    // whatever the machine's speed.
    const results: Promise<EngineResult>[] = [];
    const submitted = new Promise<void>((done) => {
      const submit = (w: number): void => {
        if (w === waves.length) return done();
        const lead = waves[w].reduce((b, q, i, all) => (q.maxNew > all[b].maxNew ? i : b), 0);
        let streamed = 0;
        for (const [i, q] of waves[w].entries()) {
          const onTokens = (t: Int32Array): void => {
            streamed += t.length;
            if (streamed >= 3 && streamed - t.length < 3) submit(w + 1);
          };
          results.push(engine.generate({ promptIds: q.prompt, maxNewTokens: q.maxNew, temperature: 0, stopIds: [], ...(i === lead ? { onTokens } : {}) }));
        }
      };
      submit(0);
    });
    await submitted;
    const ours = (await Promise.all(results)).map((x) => Array.from(x.tokens));
    const requests = waves.flat();
    for (const [i, q] of requests.entries()) {
      expect(ours[i], `request ${i}`).toEqual(await greedyByFullForwards(policy, q.prompt, q.maxNew, []));
    }
    expect(engine.stats().peakActive).toBeGreaterThanOrEqual(6);
    const longest = Math.max(...requests.map((q) => q.prompt.length + q.maxNew));
    const firstWave = Math.max(...waves[0].map((q) => q.prompt.length + q.maxNew));
    expect(firstWave).toBeLessThanOrEqual(256);
    expect(longest).toBeGreaterThan(256);
    expect(engine.stats().slotCapacity).toBeGreaterThanOrEqual(longest);
    expect(waves.every((w) => Math.max(...w.map((q) => q.maxNew)) >= 3)).toBe(true);
  });
});

describe.skipIf(!py.ok)('sampling, batching, stops', () => {
  let oracle: Oracle;
  let policy: Policy;
  const V = 96;
  beforeAll(async () => {
    oracle = new Oracle();
    const dir = await oracle.makeCheckpoint([...ARCHS[0].args, '--seed', '9']);
    policy = await Policy.load(dir);
  });
  afterAll(() => {
    oracle?.close();
    policy?.dispose();
  });

  const base = (prompt: number[], seed: number, extra: Partial<EngineRequest> = {}): EngineRequest => ({
    promptIds: prompt,
    maxNewTokens: 32,
    temperature: 1,
    stopIds: [],
    seed,
    ...extra,
  });

  it('a fixed seed reproduces the tokens; another seed gives others', async () => {
    const prompt = randomIds(6, V, rng(1));
    await using engine = new Engine(policy);
    const a = await engine.generate(base(prompt, 42));
    const b = await engine.generate(base(prompt, 42));
    const c = await engine.generate(base(prompt, 43));
    expect(Array.from(b.tokens)).toEqual(Array.from(a.tokens));
    expect(Array.from(c.tokens)).not.toEqual(Array.from(a.tokens));
    expect(a.tokens.length).toBe(32);
    expect(a.finishReason).toBe('length');
  });

  it('a request samples the same tokens alone and in a busy batch that others join and leave', async () => {
    const r = rng(2);
    const target = base(randomIds(9, V, r), 7, { maxNewTokens: 40, temperature: 0.8, topP: 0.9, topK: 30 });
    let alone: EngineResult;
    {
      await using engine = new Engine(policy);
      alone = await engine.generate(target);
    }
    for (const stepsPerCall of [1, 5]) {
      await using engine = new Engine(policy, { slots: 7, stepsPerCall });
      const others: Promise<EngineResult>[] = [];
      for (let i = 0; i < 4; i++) {
        others.push(engine.generate(base(randomIds(1 + Math.floor(r() * 20), V, r), 100 + i, { maxNewTokens: 5 + i * 7, temperature: 1.2 })));
      }
      const mine = engine.generate(target);
      await new Promise((res) => setTimeout(res, 3));
      for (let i = 0; i < 6; i++) {
        others.push(engine.generate(base(randomIds(1 + Math.floor(r() * 30), V, r), 200 + i, { maxNewTokens: 3 + i * 5, topK: 4 })));
      }
      // Greedy rows too: every kind of sampling shares the batch's steps.
      others.push(engine.generate(base(randomIds(4, V, r), 300, { maxNewTokens: 25, temperature: 0 })));
      const got = await mine;
      await Promise.all(others);
      expect(Array.from(got.tokens)).toEqual(Array.from(alone.tokens));
      expect(maxAbsDiff([got.logprobs], [alone.logprobs])).toBeLessThan(1e-4);
      expect(engine.stats().peakActive).toBeGreaterThan(1);
    }
  });

  it('a request that arrives mid-decode joins at once and does not disturb the others', async () => {
    const r = rng(3);
    const reqA = base(randomIds(5, V, r), 11, { maxNewTokens: 60 });
    const reqB = base(randomIds(12, V, r), 12, { maxNewTokens: 20 });
    const alone: EngineResult[] = [];
    {
      await using engine = new Engine(policy);
      alone.push(await engine.generate(reqA), await engine.generate(reqB));
    }
    await using engine = new Engine(policy, { stepsPerCall: 1 });
    const events: string[] = [];
    let bStarted: Promise<EngineResult> | undefined;
    let aTokens = 0;
    const a = engine.generate({
      ...reqA,
      onTokens: (t) => {
        aTokens += t.length;
        events.push(`A${aTokens}`);
        if (aTokens >= 10 && !bStarted) bStarted = engine.generate({ ...reqB, onTokens: () => events.push('B') });
      },
    });
    const ra = await a;
    const rb = await bStarted!;
    expect(Array.from(ra.tokens)).toEqual(Array.from(alone[0].tokens));
    expect(Array.from(rb.tokens)).toEqual(Array.from(alone[1].tokens));
    // B decoded while A was still decoding, from the step right after it was submitted.
    // The step after B's submission: B's first token (prefill), then A's and B's decode tokens of that step.
    const firstB = events.indexOf('B');
    expect(events.slice(firstB - 1, firstB + 3)).toEqual(['A10', 'B', 'A11', 'B']);
    expect(events.lastIndexOf('B')).toBeLessThan(events.indexOf('A60'));
  });

  it('stop ids end a sequence (the stop token is the last one returned)', async () => {
    const prompt = randomIds(4, V, rng(4));
    await using engine = new Engine(policy);
    const free = await engine.generate(base(prompt, 5));
    const stopAt = 6;
    const stopId = free.tokens[stopAt];
    const first = Array.from(free.tokens).indexOf(stopId);
    const stopped = await engine.generate(base(prompt, 5, { stopIds: [stopId] }));
    expect(stopped.finishReason).toBe('stop');
    expect(stopped.stoppedBy).toEqual({ tokenId: stopId });
    expect(Array.from(stopped.tokens)).toEqual(Array.from(free.tokens.subarray(0, first + 1)));
    // The policy's own stop ids are the default.
    const byDefault = await engine.generate({ promptIds: prompt, maxNewTokens: 200, temperature: 1, seed: 3 });
    if (byDefault.finishReason === 'stop') expect(policy.stopIds).toContain(byDefault.tokens[byDefault.tokens.length - 1]);
  });

  it('sampled log-probs equal the model log-prob computation of the same tokens within 1e-4 (fp32)', async () => {
    const r = rng(6);
    await using engine = new Engine(policy, { slots: 8 });
    const settings = [
      { temperature: 1, topP: 1, topK: 0 },
      { temperature: 0.7, topP: 0.8, topK: 20 },
      { temperature: 1.5, topP: 0.9, topK: 0 },
    ];
    for (const s of settings) {
      const prompts = [3, 14, 8, 1].map((n) => randomIds(n, V, r));
      const results = await Promise.all(prompts.map((p, i) => engine.generate(base(p, 50 + i, { ...s, maxNewTokens: 25 }))));
      const ref = await policy.logprobs({ prompts, completions: results.map((x) => x.tokens) }, { temperature: s.temperature });
      expect(
        maxAbsDiff(
          results.map((x) => x.logprobs),
          ref,
        ),
      ).toBeLessThan(1e-4);
    }
  });

  it('bounds the batch by slots and by the token budget, and still serves every request', async () => {
    const r = rng(8);
    await using engine = new Engine(policy, { slots: 3, tokenBudget: 100 });
    const reqs = Array.from({ length: 10 }, (_, i) => base(randomIds(5 + i, V, r), i, { maxNewTokens: 20 }));
    const out = await Promise.all(reqs.map((q) => engine.generate(q)));
    expect(out.every((o) => o.tokens.length === 20)).toBe(true);
    expect(engine.stats().peakActive).toBeLessThanOrEqual(3);
    const tight = new Engine(policy, { slots: 8, tokenBudget: 60 });
    try {
      await Promise.all(reqs.slice(0, 6).map((q) => tight.generate(q)));
      // Each request reserves 25..30 tokens: at most 2 fit in 60.
      expect(tight.stats().peakActive).toBe(2);
      await expect(tight.generate(base(randomIds(50, V, r), 1, { maxNewTokens: 20 }))).rejects.toSatisfy((e: unknown) => hasCode(e, 'E_ARG'));
    } finally {
      tight.dispose();
    }
  });

  it('an aborted request rejects and frees its slot; the others finish unchanged', async () => {
    const r = rng(9);
    const keep = base(randomIds(7, V, r), 1, { maxNewTokens: 30 });
    let alone: EngineResult;
    {
      await using engine = new Engine(policy);
      alone = await engine.generate(keep);
    }
    await using engine = new Engine(policy);
    const controller = new AbortController();
    let n = 0;
    const doomed = engine.generate({
      ...base(randomIds(4, V, r), 2, { maxNewTokens: 200 }),
      signal: controller.signal,
      onTokens: (t) => {
        n += t.length;
        if (n >= 5) controller.abort();
      },
    });
    const kept = engine.generate(keep);
    await expect(doomed).rejects.toMatchObject({ name: 'AbortError' });
    expect(Array.from((await kept).tokens)).toEqual(Array.from(alone.tokens));
    expect(engine.active).toBe(0);
  });

  it('rejects bad requests with E_ARG', async () => {
    await using engine = new Engine(policy);
    for (const bad of [
      { promptIds: [], maxNewTokens: 3 },
      { promptIds: [1, V], maxNewTokens: 3 },
      { promptIds: [1], maxNewTokens: 0 },
      { promptIds: [1], maxNewTokens: 2, topP: 0 },
      { promptIds: [1], maxNewTokens: 2, temperature: -1 },
      { promptIds: [1], maxNewTokens: 2, seed: 1.5 },
    ]) {
      await expect(engine.generate(bad)).rejects.toSatisfy((e: unknown) => hasCode(e, 'E_ARG'));
    }
  });
});

describe('stop strings and the PolicyClient adapter (compact tokenizer, tiny preset)', () => {
  let policy: Policy;
  beforeAll(async () => {
    const { config, assets } = await presetCheckpoint('tiny');
    policy = await Policy.init(config, { seed: 3, assets, std: 0.5 });
  });
  afterAll(() => policy?.dispose());

  it('a stop string ends the sequence at the token that completes it', async () => {
    await using engine = new Engine(policy);
    const prompt = policy.encode('Hello there, general');
    const free = await engine.generate({ promptIds: prompt, maxNewTokens: 60, seed: 21, stopIds: [] });
    const text = policy.decode(free.tokens);
    const stop = text.slice(20, 23);
    expect(stop.length).toBe(3);
    const cut = await engine.generate({ promptIds: prompt, maxNewTokens: 60, seed: 21, stopIds: [], stop: ['@@never@@', stop] });
    expect(cut.finishReason).toBe('stop');
    expect(cut.stoppedBy).toEqual({ string: stop });
    const n = cut.tokens.length;
    expect(Array.from(cut.tokens)).toEqual(Array.from(free.tokens.subarray(0, n)));
    expect(policy.decode(cut.tokens)).toContain(stop);
    expect(policy.decode(cut.tokens.subarray(0, n - 1))).not.toContain(stop);
    expect(n).toBeLessThan(free.tokens.length);
  });

  it('EngineClient: chat-templated prompt ids, response ids, log-probs and text agree', async () => {
    const client = new EngineClient(policy, { slots: 4 });
    try {
      const reqs = ['Play a move', 'Reflect on the last episode', 'What next?'].map((prompt, i) => ({
        prompt,
        temperature: 0.7,
        topP: 0.8,
        topK: 20,
        maxNewTokens: 30,
        seed: i,
      }));
      const out = await Promise.all(reqs.map((q) => client.generate(q)));
      for (const [i, o] of out.entries()) {
        const expectedPrompt = policy.encode(
          policy.renderChat([{ role: 'user', content: reqs[i].prompt }], { addGenerationPrompt: true, enableThinking: false }),
        );
        expect(Array.from(o.promptIds)).toEqual(expectedPrompt);
        expect(o.logprobs.length).toBe(o.responseIds.length);
        const last = o.responseIds[o.responseIds.length - 1];
        const body = o.finishReason === 'stop' && policy.stopIds.includes(last) ? o.responseIds.subarray(0, -1) : o.responseIds;
        expect(o.text).toBe(policy.decode(body, { skipSpecialTokens: true }));
        const ref = await policy.logprobs({ prompts: [o.promptIds], completions: [o.responseIds] }, { temperature: 0.7 });
        expect(maxAbsDiff([o.logprobs], ref)).toBeLessThan(1e-4);
      }
      const again = await client.generate(reqs[1]);
      expect(Array.from(again.responseIds)).toEqual(Array.from(out[1].responseIds));
    } finally {
      client.dispose();
    }
  });
});

describe('lamer generate', () => {
  it('streams a seeded completion to stdout and reports the finish; bad options exit 2', async () => {
    const { command: initModel } = await import('../../../src/cli/commands/init-model.js');
    const { command } = await import('../../../src/cli/commands/generate.js');
    const dir = tempDir('gen');
    const out: string[] = [];
    const err: string[] = [];
    let second: string;
    const log = console.log;
    const error = console.error;
    const write = process.stdout.write.bind(process.stdout);
    console.log = () => {};
    console.error = (...a: unknown[]) => void err.push(a.join(' '));
    process.stdout.write = ((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      expect(await initModel.run(['--preset', 'tiny', '--out', dir, '--seed', '2'])).toBe(0);
      const args = ['--model', dir, '--prompt', 'Hello', '--chat', '--max-new', '12', '--temperature', '1', '--seed', '5'];
      expect(await command.run(args)).toBe(0);
      const first = out.join('');
      out.length = 0;
      expect(await command.run(args)).toBe(0);
      second = out.join('');
      expect(second).toBe(first);
      expect(out.length).toBeGreaterThan(1); // printed in pieces as tokens came
      expect(err.join('\n')).toMatch(/\[(stop|length): .*prompt \+ \d+ new tokens/);
      expect(await command.run(['--model', dir, '--prompt', 'x', '--max-new', '0'])).toBe(2);
      expect(await command.run(['--prompt', 'x'])).toBe(2);
    } finally {
      console.log = log;
      console.error = error;
      process.stdout.write = write;
    }
    // The same completion through the engine directly: the CLI adds nothing of its own.
    await using policy = await Policy.load(dir);
    await using engine = new Engine(policy);
    const ids = policy.encode(policy.renderChat([{ role: 'user', content: 'Hello' }], { addGenerationPrompt: true, enableThinking: false }));
    const r = await engine.generate({ promptIds: ids, maxNewTokens: 12, temperature: 1, seed: 5 });
    const body = r.stoppedBy && 'tokenId' in r.stoppedBy ? r.tokens.subarray(0, -1) : r.tokens;
    expect(second).toBe(`${policy.decode(body, { skipSpecialTokens: true })}\n`);
  });
});

describe('a LaMer rollout through the engine', () => {
  it('trials share batches, every row carries ids and log-probs, and a rerun with the same seed is identical', async () => {
    const { runRollout } = await import('../../../src/rollout/runner.js');
    const { createEnv } = await import('../../../src/envs/registry.js');
    const { config, assets } = await presetCheckpoint('tiny');
    await using policy = await Policy.init(config, { seed: 4, assets });
    const run = async () => {
      const client = new EngineClient(policy, { slots: 8 });
      try {
        const batch = await runRollout({
          policy: client,
          env: () => createEnv('minesweeper'),
          tasks: [3, 4],
          trialsPerTask: 2,
          seed: 17,
          trial: { episodes: 2, reflect: true, maxTurns: 2, sampling: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 12 } },
        });
        return { batch, stats: client.engine.stats() };
      } finally {
        client.dispose();
      }
    };
    const a = await run();
    expect(a.batch.table.length).toBeGreaterThan(4);
    expect(a.stats.peakActive).toBeGreaterThan(1);
    for (let i = 0; i < a.batch.table.length; i++) {
      expect(a.batch.responseIds[i].length).toBe(a.batch.logprobs[i].length);
      expect(a.batch.responseIds[i].length).toBeGreaterThan(0);
      expect(a.batch.responseIds[i].length).toBeLessThanOrEqual(12);
    }
    const b = await run();
    expect(b.batch.responses).toEqual(a.batch.responses);
    // Batches may be composed differently in the rerun: tokens are the same, log-probs equal up to fp32 rounding.
    expect(b.batch.responseIds.map((x) => Array.from(x))).toEqual(a.batch.responseIds.map((x) => Array.from(x)));
    expect(maxAbsDiff(b.batch.logprobs, a.batch.logprobs)).toBeLessThan(1e-4);
  });
});
