// The policy loss of the train step against independent references: its value against SPEC §5 written out in TS
// from the log-probs (every aggregation and KL type; unclipped, clipped and dual-clipped tokens), its log-probs
// against the inference path, its entropy against full logits, its gradient against finite differences of the loss
// (float64 model), and the chunked log-prob function against plain autograd.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Policy } from '../../../src/model/policy.js';
import { Optimizer, type Aggregation, type KlType } from '../../../src/train/optimizer.js';
import type { TrainRow } from '../../../src/train/batch.js';
import { hasCode } from '../../../src/errors.js';
import type { Tensor } from '../../../src/tensor.js';
import { maxParamDiff, referenceEntropy, referenceLoss, snapshot, tinyConfig, tinyPolicy } from './step-helpers.js';
import { randomIds, rng } from '../../helpers/index.js';

/** Largest |a - b| over two gradients of one parameter, and the largest |b| (their scale). */
function gradDiff(a: Tensor, b: Tensor): { diff: number; scale: number } {
  const x = a.data as Float32Array | Float64Array;
  const y = b.data as Float32Array | Float64Array;
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < x.length; i++) {
    diff = Math.max(diff, Math.abs(x[i] - y[i]));
    scale = Math.max(scale, Math.abs(y[i]));
  }
  return { diff, scale };
}

const AGGREGATIONS: Aggregation[] = ['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean'];
const KLS: KlType[] = ['none', 'low_var_kl', 'kl', 'mse'];

/** Offsets old = new + delta that put each token's ratio exp(-delta) well inside one regime: near 1 (unclipped),
 * beyond 1 +- 0.2 (clipped, depending on the sign of A), or above 3 (dual clip when A < 0). */
const DELTAS = [0.05, -0.05, 0.5, -0.5, -1.6];

async function makeRows(policy: Policy, seed: number, temperature: number): Promise<TrainRow[]> {
  const r = rng(seed);
  const V = policy.config.vocabSize;
  const shapes = [
    [2, 5],
    [6, 3],
    [3, 9],
    [4, 1],
    [5, 7],
    [1, 6],
  ];
  const base = shapes.map(([p, n]) => ({ prompt: randomIds(r, p, V), response: randomIds(r, n, V) }));
  const lp = await policy.logprobs({ prompts: base.map((b) => b.prompt), completions: base.map((b) => b.response) }, { temperature });
  return base.map((b, i) => {
    const n = b.response.length;
    const perToken = i === 2; // one row with per-token (GAE-style) advantages
    const sign = i % 2 === 0 ? 1 : -1;
    const advantage = perToken ? Array.from({ length: n }, (_, t) => (t % 2 ? -1 : 1) * (0.3 + r())) : sign * (0.2 + r());
    const oldLogprobs = Array.from({ length: n }, (_, t) => lp[i][t] + DELTAS[(t + i) % DELTAS.length]);
    // Reference log-probs: moderate differences, and one large one (d = 3.5) that low_var_kl clamps at 10.
    const refLogprobs = Array.from({ length: n }, (_, t) => lp[i][t] + (t === 0 && i === 4 ? 3.5 : 2 * r() - 1));
    return { ...b, advantage, oldLogprobs, refLogprobs };
  });
}

describe('policy loss value', () => {
  let policy: Policy;
  let opt: Optimizer;
  let rows: TrainRow[];
  const temperature = 0.7;
  let entropy: number[][];

  beforeAll(async () => {
    policy = await tinyPolicy(11, { vocab: 60, hidden: 32 });
    opt = Optimizer.create(policy, { lr: 1e-3 });
    rows = await makeRows(policy, 5, temperature);
    entropy = await referenceEntropy(policy, rows, temperature);
  });
  afterAll(() => {
    opt.dispose();
    policy.dispose();
  });

  it('training log-probs equal the inference path (which matches transformers) at the temperature', async () => {
    const out = await opt.lossAndGrad(rows, { grad: false, temperature });
    const lp = await policy.logprobs({ prompts: rows.map((r) => r.prompt), completions: rows.map((r) => r.response) }, { temperature });
    const flat = lp.flatMap((a) => Array.from(a));
    expect(out.logprobs.length).toBe(flat.length);
    for (let i = 0; i < flat.length; i++) expect(Math.abs(out.logprobs[i] - flat[i])).toBeLessThan(1e-5);
  });

  it('rows of one length (no padding: plain causal attention) give the inference path log-probs too', async () => {
    const r = rng(31);
    const same = Array.from({ length: 4 }, () => ({ prompt: randomIds(r, 5, 60), response: randomIds(r, 7, 60), advantage: 1 }));
    const out = await opt.lossAndGrad(same, { grad: false, temperature });
    const lp = await policy.logprobs({ prompts: same.map((x) => x.prompt), completions: same.map((x) => x.response) }, { temperature });
    const flat = lp.flatMap((a) => Array.from(a));
    for (let i = 0; i < flat.length; i++) expect(Math.abs(out.logprobs[i] - flat[i])).toBeLessThan(1e-5);
  });

  for (const aggregation of AGGREGATIONS) {
    for (const kl of KLS) {
      it(`${aggregation}, kl ${kl}: loss, pg loss, kl loss, entropy, clip fractions and approx KL match the TS reference`, async () => {
        const o = { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, aggregation, entropyCoef: 0.01, kl, klCoef: 0.05 };
        const out = await opt.lossAndGrad(rows, {
          grad: false,
          temperature,
          aggregation,
          entropyCoef: o.entropyCoef,
          kl: { type: kl, coef: o.klCoef },
        });
        let k = 0;
        const lp = rows.map((r) => Array.from({ length: r.response.length }, () => out.logprobs[k++]));
        const ref = referenceLoss(rows, lp, entropy, o);
        // Every regime is exercised.
        expect(ref.counts.unclipped).toBeGreaterThan(3);
        expect(ref.counts.clipped).toBeGreaterThan(3);
        expect(ref.counts.dual).toBeGreaterThan(1);
        const m = out.metrics;
        expect(m.loss).toBeCloseTo(ref.loss, 5);
        expect(m.pgLoss).toBeCloseTo(ref.pgLoss, 5);
        expect(m.entropyLoss).toBeCloseTo(ref.entropyLoss, 4);
        expect(m.clipFrac).toBeCloseTo(ref.clipFrac, 9);
        expect(m.dualClipFrac).toBeCloseTo(ref.dualClipFrac, 9);
        expect(m.approxKl).toBeCloseTo(ref.approxKl, 5);
        if (kl !== 'none') expect(m.klLoss).toBeCloseTo(ref.klLoss, 5);
        else expect(m.klLoss).toBeUndefined();
        const N = rows.reduce((a, r) => a + r.response.length, 0);
        expect(m.entropy).toBeCloseTo(entropy.flat().reduce((a, b) => a + b, 0) / N, 4);
        expect(m.tokens).toBe(N);
      });
    }
  }

  it('PPO value loss: 0.5 * max((v - R)^2, (clip(v, old +- 0.5) - R)^2), token-mean, from the value head', async () => {
    using ppo = Optimizer.create(policy, { lr: 1e-2, valueHead: true });
    const r = rng(9);
    const withValues = (oldValues: number[][]) =>
      rows.map((row, i) => ({ ...row, returns: Array.from(row.response, () => 2 * r() - 1), oldValues: oldValues[i] }));
    // One step moves the zero-initialised head so its predictions are not all 0.
    await ppo.trainStep(withValues(rows.map((row) => Array.from(row.response, () => 0))), { temperature, valueCoef: 1 });
    const v = await ppo.values(rows);
    expect(v.flatMap((a) => Array.from(a)).some((x) => Math.abs(x) > 1e-4)).toBe(true);
    // Old values: half within 0.5 of the prediction (no clip), half beyond (clipped).
    const old = v.map((a) => Array.from(a, (x, t) => x + (t % 2 ? 0.1 : -1.2)));
    const batch = withValues(old);
    const out = await ppo.lossAndGrad(batch, { grad: false, temperature, valueCoef: 0.7, valueClip: 0.5 });
    let sum = 0;
    let clipped = 0;
    let n = 0;
    batch.forEach((row, i) => {
      Array.from(row.response).forEach((_, t) => {
        const pred = v[i][t];
        const o = row.oldValues![t];
        const R = row.returns![t];
        const vc = Math.min(o + 0.5, Math.max(o - 0.5, pred));
        const a = (pred - R) ** 2;
        const b = (vc - R) ** 2;
        sum += Math.max(a, b);
        if (b > a) clipped++;
        n++;
      });
    });
    expect(clipped).toBeGreaterThan(0);
    expect(out.metrics.valueLoss).toBeCloseTo((0.5 * sum) / n, 5);
    expect(out.metrics.valueClipFrac).toBeCloseTo(clipped / n, 9);
    // The total includes valueCoef * valueLoss.
    const noValue = await ppo.lossAndGrad(batch, { grad: false, temperature, valueCoef: 0 });
    expect(out.metrics.loss - noValue.metrics.loss).toBeCloseTo(0.7 * out.metrics.valueLoss!, 5);
  });

  it('KL to a frozen reference policy: the native step scores the rows with it (no gradient) when they carry no log-probs', async () => {
    await using reference = await tinyPolicy(12, { vocab: 60, hidden: 32 });
    const bare = rows.map(({ refLogprobs: _r, ...x }) => x);
    const refLp = await reference.logprobs({ prompts: rows.map((r) => r.prompt), completions: rows.map((r) => r.response) }, { temperature });
    const kl = { type: 'low_var_kl' as KlType, coef: 0.2 };
    const a = await opt.lossAndGrad(bare, { grad: false, temperature, kl, reference });
    const b = await opt.lossAndGrad(
      bare.map((r, i) => ({ ...r, refLogprobs: refLp[i] })),
      { grad: false, temperature, kl },
    );
    expect(a.metrics.klLoss).toBeGreaterThan(0.01);
    // The same numbers as the reference's own scoring pass (Policy.logprobs), up to float32 summation order.
    expect(Math.abs(a.metrics.klLoss! - b.metrics.klLoss!)).toBeLessThan(1e-6 * b.metrics.klLoss!);
    expect(Math.abs(a.metrics.loss - b.metrics.loss)).toBeLessThan(1e-6 * Math.abs(b.metrics.loss));
  });

  it('rejects malformed batches with E_ARG', async () => {
    const bad = async (f: () => Promise<unknown>) => {
      const e = await f().then(
        () => null,
        (err: unknown) => err,
      );
      expect(hasCode(e, 'E_ARG')).toBe(true);
    };
    await bad(() => opt.trainStep([{ prompt: [], response: [1], advantage: 1 }]));
    await bad(() => opt.trainStep([{ prompt: [1], response: [999], advantage: 1 }]));
    await bad(() => opt.trainStep([{ prompt: [1], response: [2, 3], advantage: [1] }]));
    await bad(() => opt.trainStep([{ prompt: [1], response: [2], advantage: Number.NaN }]));
    await bad(() =>
      opt.trainStep(rows, { kl: { type: 'low_var_kl' } }).then(() =>
        opt.trainStep(
          rows.map(({ refLogprobs: _r, ...x }) => x),
          { kl: { type: 'kl' } },
        ),
      ),
    );
    await bad(() => opt.trainStep(rows, { valueCoef: 1 }));
    await bad(() => opt.trainStep(rows, { aggregation: 'mean' as Aggregation }));
  });
});

describe('policy loss gradient (float64 model)', () => {
  let policy: Policy;
  let opt: Optimizer;
  let rows: TrainRow[];

  beforeAll(async () => {
    policy = await tinyPolicy(21, { vocab: 40, hidden: 16, intermediate: 24, headDim: 4, tied: false }, 'float64', 0.3);
    opt = Optimizer.create(policy, { lr: 1e-3 });
    rows = await makeRows(policy, 13, 0.8);
  });
  afterAll(() => {
    opt.dispose();
    policy.dispose();
  });

  for (const aggregation of AGGREGATIONS) {
    it(`${aggregation} with entropy bonus and low_var_kl: gradient matches central finite differences`, async () => {
      const loss = { temperature: 0.8, aggregation, entropyCoef: 0.05, kl: { type: 'low_var_kl' as KlType, coef: 0.1 } };
      const g = await opt.lossAndGrad(rows, loss);
      const params = policy.native.parameters();
      const names = Object.keys(params).sort();
      try {
        const r = rng(77);
        // A random direction over every parameter, and single coordinates of a few parameters.
        const dir = new Map(names.map((n) => [n, Float64Array.from({ length: params[n].numel }, () => 2 * r() - 1)]));
        const evalAt = async (scale: number, d: Map<string, Float64Array>): Promise<number> => {
          for (const [n, v] of d) {
            const data = params[n].data as Float64Array;
            for (let i = 0; i < v.length; i++) data[i] += scale * v[i];
          }
          const out = await opt.lossAndGrad(rows, { ...loss, grad: false });
          for (const [n, v] of d) {
            const data = params[n].data as Float64Array;
            for (let i = 0; i < v.length; i++) data[i] -= scale * v[i];
          }
          return out.metrics.loss;
        };
        const dot = (d: Map<string, Float64Array>) => {
          let s = 0;
          for (const [n, v] of d) {
            const gd = g.grads![n].data as Float64Array;
            for (let i = 0; i < v.length; i++) s += gd[i] * v[i];
          }
          return s;
        };
        const h = 1e-5;
        const fd = ((await evalAt(h, dir)) - (await evalAt(-h, dir))) / (2 * h);
        const an = dot(dir);
        expect(Math.abs(an)).toBeGreaterThan(1e-3);
        expect(Math.abs(fd - an)).toBeLessThan(1e-6 * Math.max(1, Math.abs(an)));
        for (const n of [
          'model.embed_tokens.weight',
          'model.layers.0.self_attn.q_norm.weight',
          'model.layers.1.mlp.down_proj.weight',
          'lm_head.weight',
          'model.norm.weight',
        ]) {
          const gd = g.grads![n].data as Float64Array;
          // The coordinate with the largest gradient and a random one.
          let best = 0;
          for (let i = 1; i < gd.length; i++) if (Math.abs(gd[i]) > Math.abs(gd[best])) best = i;
          for (const i of [best, Math.floor(r() * gd.length)]) {
            const e = new Float64Array(gd.length);
            e[i] = 1;
            const one = new Map([[n, e]]);
            const fdi = ((await evalAt(h, one)) - (await evalAt(-h, one))) / (2 * h);
            expect(Math.abs(fdi - gd[i]), `${n}[${i}]`).toBeLessThan(1e-7 + 1e-6 * Math.abs(gd[i]));
          }
        }
      } finally {
        for (const t of Object.values(params)) t.dispose();
        for (const t of Object.values(g.grads!)) t.dispose();
      }
    });
  }

  it('gradient checkpointing (layers recomputed in backward) gives the same gradients', async () => {
    const loss = { temperature: 0.8, entropyCoef: 0.05, microBatchTokens: 40 };
    const a = await opt.lossAndGrad(rows, { ...loss, gradientCheckpointing: true });
    const b = await opt.lossAndGrad(rows, { ...loss, gradientCheckpointing: false });
    expect(a.metrics.microBatches).toBeGreaterThan(1);
    expect(a.metrics.loss).toBe(b.metrics.loss);
    expect(Object.keys(a.grads!).sort()).toEqual(Object.keys(b.grads!).sort());
    for (const [n, t] of Object.entries(a.grads!)) {
      const { diff, scale } = gradDiff(t, b.grads![n]);
      expect(scale, n).toBeGreaterThan(0);
      expect(diff, n).toBeLessThan(1e-12);
      t.dispose();
      b.grads![n].dispose();
    }
  });

  it('the chunked log-prob function gives the loss and gradients of plain autograd over whole logits', async () => {
    const loss = { temperature: 0.8, entropyCoef: 0.05, kl: { type: 'mse' as KlType, coef: 0.1 } };
    // 1 KB chunks: a row or two per chunk, so every chunk boundary is crossed.
    const a = await opt.lossAndGrad(rows, { ...loss, chunked: true, chunkBytes: 1024 });
    const b = await opt.lossAndGrad(rows, { ...loss, chunked: false });
    expect(Math.abs(a.metrics.loss - b.metrics.loss)).toBeLessThan(1e-12);
    expect(Math.abs(a.metrics.entropy! - b.metrics.entropy!)).toBeLessThan(1e-12);
    for (const [n, t] of Object.entries(a.grads!)) {
      expect(gradDiff(t, b.grads![n]).diff, n).toBeLessThan(1e-12);
      t.dispose();
      b.grads![n].dispose();
    }
  });
});

describe('mixed precision (bf16 compute, fp32 parameters: the CUDA default, run here on the CPU)', () => {
  it('chunked and plain-autograd gradients agree to bf16 rounding, reach the fp32 parameters, and a step moves them', async () => {
    await using policy = await Policy.init(tinyConfig({ vocab: 60, hidden: 32 }), { seed: 8, std: 0.2, dtype: 'bfloat16', paramDtype: 'float32' });
    expect(policy.native.dtype).toBe('bfloat16');
    expect(policy.native.paramDtype).toBe('float32');
    using opt = Optimizer.create(policy, { lr: 1e-3 });
    const rows = await makeRows(policy, 41, 1);
    const a = await opt.lossAndGrad(rows, { entropyCoef: 0.01, chunkBytes: 2048 });
    const b = await opt.lossAndGrad(rows, { entropyCoef: 0.01, chunked: false });
    expect(Math.abs(a.metrics.loss - b.metrics.loss)).toBeLessThan(1e-3);
    for (const [n, t] of Object.entries(a.grads!)) {
      expect(t.dtype, n).toBe('float32');
      const { diff, scale } = gradDiff(t, b.grads![n]);
      expect(scale, n).toBeGreaterThan(0);
      expect(diff, n).toBeLessThan(0.03 * scale);
      t.dispose();
      b.grads![n].dispose();
    }
    const before = snapshot(policy);
    const m = await opt.trainStep(rows, { entropyCoef: 0.01 });
    expect(Number.isFinite(m.loss) && m.gradNorm > 0).toBe(true);
    expect(maxParamDiff(before, snapshot(policy))).toBeGreaterThan(5e-4);
  });
});
