// The update half of the train step: micro-batching does not change the result, AdamW with clipping and weight-decay
// groups against a plain TS reference, exact resume from saved optimizer state, and the learning-rate schedule.
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Policy } from '../../../src/model/policy.js';
import { Optimizer } from '../../../src/train/optimizer.js';
import { lrAt } from '../../../src/train/schedule.js';
import { trainBatch, type TrainRow } from '../../../src/train/batch.js';
import { computeGae } from '../../../src/algo/gae.js';
import * as lamer from '../../../src/index.js';
import { hasCode } from '../../../src/errors.js';
import { maxParamDiff, snapshot, tinyConfig, tinyPolicy } from './step-helpers.js';
import { randomIds, removeTempDirs, rng, tempDir } from '../../helpers/index.js';

afterAll(removeTempDirs);

/** 8 rows of lengths 20, 19, ..., 13 (prompt 4..7 tokens), mixed-sign advantages, off-policy old log-probs. */
async function splitRows(policy: Policy, seed: number): Promise<TrainRow[]> {
  const r = rng(seed);
  const V = policy.config.vocabSize;
  const base = Array.from({ length: 8 }, (_, i) => {
    const len = 13 + ((i * 5) % 8); // a permutation of 13..20, so sorting by length matters
    const p = 4 + (i % 4);
    return { prompt: randomIds(r, p, V), response: randomIds(r, len - p, V) };
  });
  const lp = await policy.logprobs({ prompts: base.map((b) => b.prompt), completions: base.map((b) => b.response) });
  return base.map((b, i) => ({
    ...b,
    advantage: (i % 3 === 0 ? -1 : 1) * (0.5 + r()),
    oldLogprobs: Array.from(lp[i], (x) => x + 0.4 * (r() - 0.5)),
  }));
}

describe('micro-batching', () => {
  for (const aggregation of ['token-mean', 'seq-mean-token-mean'] as const) {
    it(`${aggregation}: 1, 2 or 4 micro-batches give the same parameters after a step (within 1e-5)`, async () => {
      const results: { params: Map<string, Float64Array>; loss: number; gradNorm: number; micro: number }[] = [];
      let before: Map<string, Float64Array> | undefined;
      // Budgets: 100000 padded tokens hold all 8 rows, and the per-forward overhead (budget / 64) outweighs any padding
      // saved by a cut; 80 hold 4 rows of <= 20 at most, 40 hold 2.
      for (const [budget, atLeast] of [
        [100000, 1],
        [80, 2],
        [40, 4],
      ]) {
        await using policy = await tinyPolicy(3, { vocab: 64, hidden: 32 });
        before ??= snapshot(policy);
        using opt = Optimizer.create(policy, { lr: 1e-3, weightDecay: 0.01 });
        const rows = await splitRows(policy, 17);
        const m = await opt.trainStep(rows, { microBatchTokens: budget, aggregation, entropyCoef: 0.01 });
        if (atLeast === 1) expect(m.microBatches).toBe(1);
        else expect(m.microBatches).toBeGreaterThanOrEqual(atLeast);
        results.push({ params: snapshot(policy), loss: m.loss, gradNorm: m.gradNorm, micro: m.microBatches });
      }
      // The step moved the parameters (so equality below is not vacuous) ...
      expect(maxParamDiff(before!, results[0].params)).toBeGreaterThan(5e-4);
      for (const r of results.slice(1)) {
        // ... and every split moved them to the same place; loss and gradient norm (scale-sensitive) agree too.
        expect(maxParamDiff(results[0].params, r.params)).toBeLessThan(1e-5);
        expect(Math.abs(r.loss - results[0].loss)).toBeLessThan(1e-6 * Math.max(1, Math.abs(results[0].loss)));
        expect(Math.abs(r.gradNorm - results[0].gradNorm)).toBeLessThan(1e-5 * results[0].gradNorm);
      }
    });
  }
});

describe('AdamW', () => {
  it('two steps with gradient clipping and weight-decay groups equal a plain TS AdamW on the same gradients (float64)', async () => {
    await using policy = await tinyPolicy(
      5,
      { arch: 'qwen2', vocab: 40, hidden: 16, intermediate: 24, headDim: 4, heads: 4, kvHeads: 2, tied: false },
      'float64',
      0.3,
    );
    const o = { lr: 3e-3, weightDecay: 0.1, betas: [0.8, 0.95] as [number, number], eps: 1e-6, gradClip: 0.05 };
    using opt = Optimizer.create(policy, o);
    const rows = await splitRows(policy, 23);
    const names = [...snapshot(policy).keys()];
    expect(names.some((n) => n.endsWith('.bias'))).toBe(true);
    const m = new Map<string, Float64Array>();
    const v = new Map<string, Float64Array>();
    let expected = snapshot(policy);
    for (let step = 1; step <= 2; step++) {
      const g = await opt.lossAndGrad(rows, { entropyCoef: 0.01 });
      const grads = new Map(Object.entries(g.grads!).map(([k, t]) => [k, Float64Array.from(t.data as Float64Array)]));
      for (const t of Object.values(g.grads!)) t.dispose();
      let sq = 0;
      for (const x of grads.values()) for (const y of x) sq += y * y;
      const norm = Math.sqrt(sq);
      expect(norm).toBeGreaterThan(o.gradClip); // clipping is active
      const coef = Math.min(1, o.gradClip / (norm + 1e-6));
      const metrics = await opt.trainStep(rows, { entropyCoef: 0.01 });
      expect(metrics.gradNorm).toBeCloseTo(norm, 10);
      expect(metrics.step).toBe(step);
      const next = new Map<string, Float64Array>();
      for (const [name, p] of expected) {
        const gr = grads.get(name)!;
        const decay = name.endsWith('norm.weight') || name.endsWith('.bias') ? 0 : o.weightDecay;
        const mm = m.get(name) ?? new Float64Array(p.length);
        const vv = v.get(name) ?? new Float64Array(p.length);
        const out = new Float64Array(p.length);
        for (let i = 0; i < p.length; i++) {
          const gi = gr[i] * coef;
          mm[i] = o.betas[0] * mm[i] + (1 - o.betas[0]) * gi;
          vv[i] = o.betas[1] * vv[i] + (1 - o.betas[1]) * gi * gi;
          const mh = mm[i] / (1 - o.betas[0] ** step);
          const vh = Math.sqrt(vv[i]) / Math.sqrt(1 - o.betas[1] ** step);
          out[i] = p[i] * (1 - o.lr * decay) - (o.lr * mh) / (vh + o.eps);
        }
        m.set(name, mm);
        v.set(name, vv);
        next.set(name, out);
      }
      expected = next;
      expect(maxParamDiff(expected, snapshot(policy))).toBeLessThan(1e-12);
    }
  });

  it('with zero gradients only weight decay acts, and never on norm weights or biases', async () => {
    await using policy = await tinyPolicy(6, { arch: 'qwen2', vocab: 40, hidden: 16, intermediate: 24, headDim: 4, tied: true });
    const before = snapshot(policy);
    using opt = Optimizer.create(policy, { lr: 0.1, weightDecay: 0.5 });
    const rows = (await splitRows(policy, 4)).map((r) => ({ ...r, advantage: 0 }));
    await opt.trainStep(rows, { entropyCoef: 0 });
    const after = snapshot(policy);
    let decayed = 0;
    let kept = 0;
    for (const [name, p] of before) {
      const q = after.get(name)!;
      const noDecay = name.endsWith('norm.weight') || name.endsWith('.bias');
      for (let i = 0; i < p.length; i++) expect(Math.abs(q[i] - (noDecay ? p[i] : p[i] * 0.95))).toBeLessThan(1e-6);
      if (noDecay) kept++;
      else decayed++;
    }
    expect(kept).toBeGreaterThan(5); // norms and q/k/v biases
    expect(decayed).toBeGreaterThan(5);
  });
});

describe('save, reload, continue', () => {
  for (const variant of ['fp32 parameters with a value head (PPO)', 'bf16 parameters with fp32 master weights'] as const) {
    it(`${variant}: identical parameters to an uninterrupted run`, async () => {
      const bf16 = variant.startsWith('bf16');
      const dir = tempDir('resume');
      try {
        const init = async () => Policy.init(tinyConfig(), { seed: 9, std: 0.2, dtype: 'float32', paramDtype: bf16 ? 'bfloat16' : 'float32' });
        const optOptions = { lr: 2e-3, weightDecay: 0.01, valueHead: !bf16, schedule: 'cosine' as const, warmupSteps: 2, totalSteps: 6 };
        const rowsFor = async (policy: Policy, k: number): Promise<TrainRow[]> => {
          const rows = await splitRows(policy, 100 + k);
          if (bf16) return rows;
          const r = rng(200 + k);
          return rows.map((row) => ({
            ...row,
            returns: Array.from(row.response, () => r()),
            oldValues: Array.from(row.response, () => r() - 0.5),
          }));
        };
        const step = { valueCoef: bf16 ? 0 : 0.5, entropyCoef: 0.01, microBatchTokens: 64 };

        // Uninterrupted: 6 steps.
        await using a = await init();
        using optA = Optimizer.create(a, optOptions);
        const rowSets: TrainRow[][] = [];
        for (let k = 0; k < 6; k++) {
          rowSets.push(await rowsFor(a, k));
          await optA.trainStep(rowSets[k], step);
          if (k === 2) {
            await a.save(join(dir, 'policy'), { dtype: bf16 ? 'bfloat16' : 'float32' });
            await optA.save(join(dir, 'optimizer.safetensors'));
          }
        }
        // Resumed: load after step 3, run steps 4..6 on the same rows.
        await using b = await Policy.load(join(dir, 'policy'), { dtype: 'float32', paramDtype: bf16 ? 'bfloat16' : 'float32' });
        using optB = await Optimizer.load(b, join(dir, 'optimizer.safetensors'), optOptions);
        expect(optB.stepCount).toBe(3);
        expect(optB.lr).toBe(lrAt(3, { ...optOptions, minLrRatio: 0 }));
        for (let k = 3; k < 6; k++) await optB.trainStep(rowSets[k], step);
        expect(optB.stepCount).toBe(6);
        expect(maxParamDiff(snapshot(a), snapshot(b))).toBe(0);
        if (!bf16) {
          const va = await optA.values(rowSets[5]);
          const vb = await optB.values(rowSets[5]);
          expect(vb).toEqual(va);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('a value-head optimizer saved before its first step loads (step 0, zero head); a head-less one refuses it', async () => {
    const dir = tempDir('fresh');
    try {
      await using policy = await tinyPolicy(1);
      using fresh = Optimizer.create(policy, { valueHead: true });
      await fresh.save(join(dir, 'opt.safetensors'));
      using again = await Optimizer.load(policy, join(dir, 'opt.safetensors'), { valueHead: true });
      expect(again.stepCount).toBe(0);
      const rows = await splitRows(policy, 3);
      expect((await again.values(rows)).every((v) => v.every((x) => x === 0))).toBe(true);
      using headless = Optimizer.create(policy);
      const e = await headless.load(join(dir, 'opt.safetensors')).then(
        () => null,
        (err: unknown) => err,
      );
      expect(hasCode(e, 'E_CHECKPOINT')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a state file for another model shape is rejected with E_CHECKPOINT', async () => {
    const dir = tempDir('shape');
    try {
      await using a = await tinyPolicy(1, { hidden: 32 });
      using optA = Optimizer.create(a, { lr: 1e-3 });
      await optA.trainStep(await splitRows(a, 1));
      await optA.save(join(dir, 'opt.safetensors'));
      await using b = await tinyPolicy(1, { hidden: 16, headDim: 4 });
      using optB = Optimizer.create(b);
      const e = await optB.load(join(dir, 'opt.safetensors')).then(
        () => null,
        (err: unknown) => err,
      );
      expect(hasCode(e, 'E_CHECKPOINT')).toBe(true);
      expect(String(e)).toMatch(/expected shape/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('non-finite gradients', () => {
  it('a step whose gradient overflows fails with E_TRAIN and leaves the parameters unchanged', async () => {
    await using policy = await tinyPolicy(4);
    using opt = Optimizer.create(policy, { lr: 1e-3 });
    const rows = (await splitRows(policy, 2)).map((r) => ({ ...r, advantage: 3e38 }));
    const before = snapshot(policy);
    const e = await opt.trainStep(rows).then(
      () => null,
      (err: unknown) => err,
    );
    expect(hasCode(e, 'E_TRAIN')).toBe(true);
    expect(maxParamDiff(before, snapshot(policy))).toBe(0);
    expect(opt.stepCount).toBe(0);
    // The optimizer is still usable.
    expect((await opt.trainStep(await splitRows(policy, 2))).step).toBe(1);
  });
});

describe('learning-rate schedule', () => {
  it('constant, linear warmup, warmup + cosine to minLrRatio', () => {
    expect([0, 1, 10].map((s) => lrAt(s, { lr: 1, schedule: 'constant', warmupSteps: 5 }))).toEqual([1, 1, 1]);
    expect([0, 1, 3, 4, 9].map((s) => lrAt(s, { lr: 1, schedule: 'warmup', warmupSteps: 4 }))).toEqual([0.25, 0.5, 1, 1, 1]);
    const c = { lr: 2, schedule: 'cosine' as const, warmupSteps: 2, totalSteps: 12, minLrRatio: 0.1 };
    expect(lrAt(0, c)).toBe(1);
    expect(lrAt(2, c)).toBeCloseTo(2, 12);
    expect(lrAt(7, c)).toBeCloseTo(2 * (0.1 + 0.9 * 0.5), 12); // halfway through the decay
    expect(lrAt(12, c)).toBeCloseTo(0.2, 12);
    expect(lrAt(50, c)).toBeCloseTo(0.2, 12);
    expect(() => lrAt(3, { lr: 1, schedule: 'cosine', warmupSteps: 0 })).toThrow(/totalSteps/);
  });
});

describe('the package index', () => {
  it('exports the Optimizer', () => {
    expect(lamer.Optimizer).toBe(Optimizer);
  });
});

describe('staged batch (what the trainer runs: the iteration staged once, mini-batches by row index)', () => {
  it('a step over staged rows equals trainStep over the same rows, exactly', async () => {
    await using a = await tinyPolicy(9, { vocab: 64, hidden: 32 });
    await using b = await tinyPolicy(9, { vocab: 64, hidden: 32 });
    const rows = await splitRows(a, 31);
    using optA = Optimizer.create(a, { lr: 1e-3 });
    using optB = Optimizer.create(b, { lr: 1e-3 });
    const { batch, rows: kept } = trainBatch({
      promptIds: rows.map((r) => Int32Array.from(r.prompt)),
      responseIds: rows.map((r) => Int32Array.from(r.response)),
      advantages: Float32Array.from(rows, (r) => r.advantage as number),
      oldLogprobs: rows.map((r) => Float32Array.from(r.oldLogprobs!)),
    });
    expect(kept).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await optA.stage(batch);
    const before = snapshot(a);
    for (const pick of [
      [5, 2, 7],
      [0, 1, 3, 4, 6],
    ]) {
      const ma = await optA.stagedStep(Int32Array.from(pick), { entropyCoef: 0.01, microBatchTokens: 40 });
      const mb = await optB.trainStep(
        pick.map((i) => rows[i]),
        { entropyCoef: 0.01, microBatchTokens: 40 },
      );
      expect(ma.loss).toBe(mb.loss);
      expect(ma.tokens).toBe(mb.tokens);
    }
    expect(maxParamDiff(before, snapshot(a))).toBeGreaterThan(1e-4);
    expect(maxParamDiff(snapshot(a), snapshot(b))).toBe(0);
  });

  it('rows without response tokens are left out of the batch', () => {
    const { batch, rows } = trainBatch({
      promptIds: [Int32Array.from([1, 2]), Int32Array.from([3]), Int32Array.from([4])],
      responseIds: [Int32Array.from([5]), new Int32Array(0), Int32Array.from([6, 7])],
      advantages: Float32Array.from([0.5, 9, -1]),
      oldLogprobs: [Float32Array.from([-1]), new Float32Array(0), Float32Array.from([-2, -3])],
      rowReturns: Float32Array.from([1, 2, 3]),
    });
    expect(rows).toEqual([0, 2]);
    expect(Array.from(batch.ids)).toEqual([1, 2, 5, 4, 6, 7]);
    expect(Array.from(batch.lengths)).toEqual([3, 3]);
    expect(Array.from(batch.starts)).toEqual([2, 1]);
    expect(Array.from(batch.advantages!)).toEqual([0.5, -1, -1]);
    expect(Array.from(batch.oldLogprobs!)).toEqual([-1, -2, -3]);
    expect(Array.from(batch.rowReturns!)).toEqual([1, 3]);
  });

  it('PPO: native values and GAE over the staged batch equal the value head plus the TypeScript GAE', async () => {
    await using a = await tinyPolicy(10, { vocab: 64, hidden: 32 });
    await using b = await tinyPolicy(10, { vocab: 64, hidden: 32 });
    const rows = await splitRows(a, 41);
    using optA = Optimizer.create(a, { lr: 1e-3, valueHead: true });
    using optB = Optimizer.create(b, { lr: 1e-3, valueHead: true });
    const returns = Float32Array.from(rows, (_, i) => (i % 2 ? 1 : -0.5));
    const ppo = { entropyCoef: 0.01, valueCoef: 0.5, microBatchTokens: 64 };
    // A first step so the value head is no longer zero and GAE sees real values.
    const warm = rows.map((r) => ({ ...r, returns: Array(r.response.length).fill(1), oldValues: Array(r.response.length).fill(0) }));
    await optA.trainStep(warm, ppo);
    await optB.trainStep(warm, ppo);
    const { batch } = trainBatch({
      promptIds: rows.map((r) => Int32Array.from(r.prompt)),
      responseIds: rows.map((r) => Int32Array.from(r.response)),
      advantages: new Float32Array(rows.length),
      oldLogprobs: rows.map((r) => Float32Array.from(r.oldLogprobs!)),
      rowReturns: returns,
    });
    await optA.stage(batch);
    await optA.gae({ gamma: 0.99, lambda: 0.9, microBatchTokens: 64 });
    const values = await optB.values(rows, { microBatchTokens: 64 });
    expect(values.some((v) => v.some((x) => Math.abs(x) > 1e-4))).toBe(true);
    const lengths = Int32Array.from(rows, (r) => r.response.length);
    const packed = Float32Array.from(values.flatMap((v) => Array.from(v)));
    const gae = computeGae({ rowReward: returns, values: packed, responseLengths: lengths, gamma: 0.99, lambda: 0.9 });
    let k = 0;
    const withGae = rows.map((r, i) => {
      const n = lengths[i];
      const row = { ...r, advantage: gae.advantage.subarray(k, k + n), returns: gae.returns.subarray(k, k + n), oldValues: packed.subarray(k, k + n) };
      k += n;
      return row;
    });
    const ma = await optA.stagedStep(Int32Array.from([0, 1, 2, 3, 4, 5, 6, 7]), ppo);
    const mb = await optB.trainStep(withGae, ppo);
    expect(ma.valueLoss).toBeGreaterThan(0);
    expect(ma.loss).toBe(mb.loss);
    expect(maxParamDiff(snapshot(a), snapshot(b))).toBe(0);
  });

  it('bad staged calls are coded errors', async () => {
    await using policy = await tinyPolicy(11, { vocab: 64, hidden: 32 });
    using opt = Optimizer.create(policy, { lr: 1e-3 });
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: unknown) => (hasCode(e, 'E_ARG') ? 'E_ARG' : String(e)),
      );
    expect(await code(opt.stagedStep(Int32Array.from([0])))).toBe('E_ARG'); // nothing staged
    const rows = await splitRows(policy, 3);
    const { batch } = trainBatch({
      promptIds: rows.map((r) => Int32Array.from(r.prompt)),
      responseIds: rows.map((r) => Int32Array.from(r.response)),
      advantages: new Float32Array(rows.length),
      oldLogprobs: rows.map((r) => Float32Array.from(r.oldLogprobs!)),
    });
    await opt.stage(batch);
    expect(await code(opt.stagedStep(Int32Array.from([8])))).toBe('E_ARG'); // past the last row
    expect(await code(opt.stagedStep(Int32Array.from([-1])))).toBe('E_ARG');
    expect(await code(opt.stagedStep(Int32Array.from([2, 2])))).toBe('E_ARG'); // a row named twice
    expect(await code(opt.gae({ gamma: 1, lambda: 1 }))).toBe('E_ARG'); // no row returns staged
    expect(await code(opt.stage({ ...batch, ids: batch.ids.map(() => 999) }))).toBe('E_ARG'); // outside the vocabulary
  });
});
