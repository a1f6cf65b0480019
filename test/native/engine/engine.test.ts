// The generation engine without a Python reference: the sampler equals a plain TS implementation of the same rule;
// stop strings end sequences; the engine client's ids, log-probs and text agree; \`lamer generate\` streams a seeded
// completion; a LaMer rollout through the engine is reproducible. test/parity/engine/engine.test.ts compares greedy
// decoding with the KV cache with repeated full forwards and transformers' generate(), and checks seeded sampling,
// batching and stop ids on checkpoints transformers wrote.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Policy } from '../../../src/model/policy.js';
import { presetCheckpoint } from '../../../src/model/presets.js';
import { Engine, EngineClient } from '../../../src/engine/index.js';
import { addon } from '../../../src/native/addon.js';
import { Tensor } from '../../../src/tensor.js';
import { maxAbsDiff, rng, tempDir } from '../../helpers/index.js';

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
