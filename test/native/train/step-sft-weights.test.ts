// Supervised rows with token weights (SftRow.weight): cross-entropy times w where w > 0, the unlikelihood
// -log(1 - p) times |w| where w < 0, nothing where w = 0. Checked against the formula written out in TS from the
// step's log-probs, against the policy objective's gradient at the advantages the chain rule gives (an independent
// code path: d/dlp of -log(1 - e^lp) is p / (1 - p)), and against central finite differences (float64 model).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Policy } from '../../../src/model/policy.js';
import { Optimizer } from '../../../src/train/optimizer.js';
import type { SftRow, TrainRow } from '../../../src/train/batch.js';
import { hasCode } from '../../../src/errors.js';
import { tinyPolicy } from './step-helpers.js';
import { randomIds, rng } from '../../helpers/index.js';

/** Each row's per-token weights, the default 1 where a row gives none. */
function tokenWeights(rows: readonly SftRow[]): number[] {
  return rows.flatMap((r) => Array.from(r.response, (_, t) => (r.weight === undefined ? 1 : typeof r.weight === 'number' ? r.weight : r.weight[t])));
}

describe('supervised token weights and unlikelihood (float64 model)', () => {
  let policy: Policy;
  let opt: Optimizer;
  let rows: SftRow[];

  beforeAll(async () => {
    policy = await tinyPolicy(31, { vocab: 40, hidden: 16, intermediate: 24, headDim: 4, tied: false }, 'float64', 0.3);
    opt = Optimizer.create(policy, { lr: 1e-3 });
    const r = rng(17);
    rows = [
      { prompt: randomIds(r, 5, 40), response: randomIds(r, 3, 40) },
      { prompt: randomIds(r, 4, 40), response: randomIds(r, 4, 40), weight: [1, 0, -0.5, 2] },
      { prompt: randomIds(r, 7, 40), response: randomIds(r, 1, 40), weight: -1 },
      { prompt: randomIds(r, 3, 40), response: randomIds(r, 2, 40), weight: 0.5 },
    ];
  });
  afterAll(() => {
    opt.dispose();
    policy.dispose();
  });

  it('the loss is the token mean of w * -lp (w > 0) and |w| * -log(1 - p) (w < 0), from the step log-probs', async () => {
    const out = await opt.lossAndGrad(rows, { objective: 'sft', grad: false });
    const w = tokenWeights(rows);
    expect(out.logprobs.length).toBe(w.length);
    let sum = 0;
    w.forEach((wt, i) => {
      const lp = out.logprobs[i];
      sum += wt > 0 ? -wt * lp : wt < 0 ? -wt * -Math.log(1 - Math.exp(lp)) : 0;
    });
    // The step returns its log-probs in float32: the sums agree to that precision.
    expect(Math.abs(out.metrics.loss - sum / w.length)).toBeLessThan(1e-6);
    // Without weights the same rows give plain cross-entropy.
    const plain = await opt.lossAndGrad(
      rows.map(({ prompt, response }) => ({ prompt, response })),
      { objective: 'sft', grad: false },
    );
    expect(Math.abs(plain.metrics.loss + Array.from(out.logprobs).reduce((s, x) => s + x, 0) / w.length)).toBeLessThan(1e-6);
    // Weight 1 on every row is the unweighted step, exactly.
    const ones = await opt.lossAndGrad(
      rows.map(({ prompt, response }) => ({ prompt, response, weight: 1 })),
      { objective: 'sft', grad: false },
    );
    expect(ones.metrics.loss).toBe(plain.metrics.loss);
  });

  it('its gradient is the policy gradient at advantages w (w > 0), 0, and -|w| p / (1 - p) (w < 0)', async () => {
    const sft = await opt.lossAndGrad(rows, { objective: 'sft' });
    const w = tokenWeights(rows);
    let k = 0;
    // On-policy (old log-probs = the current ones: every ratio 1, nothing clipped), token-mean, no entropy, no KL.
    const policyRows: TrainRow[] = rows.map((r) => {
      const n = r.response.length;
      const lp = sft.logprobs.slice(k, k + n);
      const advantage = Array.from(lp, (x, t) => {
        const wt = w[k + t];
        const p = Math.exp(x);
        return wt > 0 ? wt : wt < 0 ? wt * (p / (1 - p)) : 0;
      });
      k += n;
      return { prompt: r.prompt, response: r.response, advantage, oldLogprobs: lp };
    });
    const pg = await opt.lossAndGrad(policyRows, { objective: 'policy', aggregation: 'token-mean', entropyCoef: 0 });
    let checked = 0;
    for (const [name, g] of Object.entries(sft.grads!)) {
      const a = g.data as Float64Array;
      const b = pg.grads![name].data as Float64Array;
      let scale = 0;
      for (let i = 0; i < a.length; i++) scale = Math.max(scale, Math.abs(b[i]));
      // The advantages and old log-probs travel as float32: agreement to that precision.
      for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i]), `${name}[${i}]`).toBeLessThanOrEqual(1e-10 + 1e-6 * scale);
      if (scale > 1e-6) checked++;
      g.dispose();
      pg.grads![name].dispose();
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('its gradient matches central finite differences of the loss', async () => {
    const g = await opt.lossAndGrad(rows, { objective: 'sft' });
    const params = policy.native.parameters();
    try {
      const r = rng(5);
      const dir = new Map(Object.keys(params).map((n) => [n, Float64Array.from({ length: params[n].numel }, () => 2 * r() - 1)]));
      const at = async (scale: number) => {
        for (const [n, v] of dir) {
          const data = params[n].data as Float64Array;
          for (let i = 0; i < v.length; i++) data[i] += scale * v[i];
        }
        const out = await opt.lossAndGrad(rows, { objective: 'sft', grad: false });
        for (const [n, v] of dir) {
          const data = params[n].data as Float64Array;
          for (let i = 0; i < v.length; i++) data[i] -= scale * v[i];
        }
        return out.metrics.loss;
      };
      let an = 0;
      for (const [n, v] of dir) {
        const gd = g.grads![n].data as Float64Array;
        for (let i = 0; i < v.length; i++) an += gd[i] * v[i];
      }
      const h = 1e-5;
      const fd = ((await at(h)) - (await at(-h))) / (2 * h);
      expect(Math.abs(an)).toBeGreaterThan(1e-3);
      expect(Math.abs(fd - an)).toBeLessThan(1e-6 * Math.max(1, Math.abs(an)));
    } finally {
      for (const t of Object.values(params)) t.dispose();
      for (const t of Object.values(g.grads!)) t.dispose();
    }
  });

  it('a weight that is not a finite number is refused with E_ARG', async () => {
    const bad = [{ ...rows[0], weight: Number.NaN }];
    await expect(opt.lossAndGrad(bad, { objective: 'sft', grad: false })).rejects.toSatisfy((e: unknown) => hasCode(e, 'E_ARG'));
    await expect(opt.lossAndGrad([{ ...rows[1], weight: [1, 2] }], { objective: 'sft', grad: false })).rejects.toSatisfy((e: unknown) => hasCode(e, 'E_ARG'));
  });
});
