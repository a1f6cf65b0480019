// The decoder's fused operators (native/model/fused_ops.h: rotary, swiglu, kv_write, decode attention; one kernel
// each on a GPU). On the CPU each is checked against its definition computed here in float64 from the same inputs,
// within a bound worked out on paper from the rounding of the operator's dtype (below, per operator). On CUDA they
// are compared with their composite ATen forms, within one rounding of the storage type. And a decode step dispatches
// the few hundred operators the fusion is for (counted by the addon's operator counter, views apart).
import { describe, expect, it } from 'vitest';
import { addon } from '../../../src/native/addon.js';
import { decodeStepOps, qwen3_0_6bConfig, randomPolicy } from '../../../bench/decode-ops.js';
import { gpu, gpuTitle } from '../gpu.js';

interface Named {
  shape: number[];
  data: Float64Array;
}

/** Unit roundoff of each dtype (half the distance from 1 to the next number); the float64 reference has its own. */
const UNIT = { float32: 2 ** -24, float64: 2 ** -53 } as const;
const U64 = 2 ** -53;

/** Row-major index of `at` in `shape`. */
function offset(shape: number[], at: number[]): number {
  let o = 0;
  for (let i = 0; i < shape.length; i++) o = o * shape[i] + at[i];
  return o;
}

/** The largest |got - want| / bound over the elements, and the element where it is; a ratio above 1 breaks the bound. */
function worst(got: Float64Array, want: number[], bound: number[]): { ratio: number; at: number } {
  expect(got.length).toBe(want.length);
  let ratio = 0;
  let at = -1;
  for (let i = 0; i < want.length; i++) {
    const r = Math.abs(got[i] - want[i]) / bound[i];
    if (!(r <= ratio)) [ratio, at] = [Number.isNaN(r) ? Infinity : r, i];
  }
  return { ratio, at };
}

/**
 * rotary: out[b, t, h, d] = x[b, t, h, d] cos[b, t, h', d] + x[b, t, h, (d + D/2) mod D] sin[b, t, h', d], h' = h, or 0
 * when cos and sin are shared by the heads (roll by D/2, rotate_half's sign folded into sin). Two products and a sum:
 * at most three roundings of size u |term| (first order), in the operator and again in the reference, so the bound is
 * 3 (u + u64) (|x cos| + |x' sin|) per element.
 */
function rotaryCheck(x: Named, cos: Named, sin: Named, out: Named, u: number) {
  const [B, T, H, D] = x.shape;
  const want: number[] = [];
  const bound: number[] = [];
  for (let b = 0; b < B; b++)
    for (let t = 0; t < T; t++)
      for (let h = 0; h < H; h++)
        for (let d = 0; d < D; d++) {
          const hc = cos.shape[2] === 1 ? 0 : h;
          const c = cos.data[offset(cos.shape, [b, t, hc, d])];
          const s = sin.data[offset(sin.shape, [b, t, hc, d])];
          const a = x.data[offset(x.shape, [b, t, h, d])] * c;
          const r = x.data[offset(x.shape, [b, t, h, (d + D / 2) % D])] * s;
          want.push(a + r);
          bound.push(3 * (u + U64) * (Math.abs(a) + Math.abs(r)) + Number.MIN_VALUE);
        }
  expect(out.shape).toEqual(x.shape);
  return worst(out.data, want, bound);
}

/**
 * swiglu: out[..., i] = silu(g) up with g = gate_up[..., i], up = gate_up[..., I + i], silu(g) = g / (1 + exp(-g)).
 * Relative error, first order: exp within 1 ulp (2u), then 1 + e, the quotient and the product (u each): 5u. The bound
 * allows 8 (u + u64) |out|, the reference's own rounding included.
 */
function swigluCheck(gateUp: Named, out: Named, u: number) {
  const I = gateUp.shape.at(-1)! / 2;
  const rows = gateUp.data.length / (2 * I);
  const want: number[] = [];
  const bound: number[] = [];
  for (let r = 0; r < rows; r++)
    for (let i = 0; i < I; i++) {
      const g = gateUp.data[r * 2 * I + i];
      const up = gateUp.data[r * 2 * I + I + i];
      const y = (g / (1 + Math.exp(-g))) * up;
      want.push(y);
      bound.push(8 * (u + U64) * Math.abs(y) + Number.MIN_VALUE);
    }
  expect(out.shape).toEqual([...gateUp.shape.slice(0, -1), I]);
  return worst(out.data, want, bound);
}

/** kv_write_: column writeAt[b] + t of head h in row b's caches holds k[b, t, h] (v[b, t, h]); every other is unchanged. */
function kvWriteWant(cache: Named, kv: Named, writeAt: Named): number[] {
  const [B, H, C, D] = cache.shape;
  const T = kv.shape[1];
  const want = Array.from(cache.data);
  for (let b = 0; b < B; b++)
    for (let t = 0; t < T; t++)
      for (let h = 0; h < H; h++)
        for (let d = 0; d < D; d++) {
          const c = writeAt.data[b] + t;
          expect(c).toBeLessThan(C);
          want[offset(cache.shape, [b, h, c, d])] = kv.data[offset(kv.shape, [b, t, h, d])];
        }
  return want;
}

/**
 * Decode attention: row b attends to its columns 0..writeAt[b]: s_j = scale q.k_j, p = softmax(s), out = sum_j p_j v_j.
 * First-order rounding, with L columns and head size D: each score is off by at most D u scale max_j sum_d |q_d k_jd|
 * (a dot product of D terms), which moves p_j by twice that relatively; exp, the sum of L terms and the quotient add
 * (L + 3) u; the weighted sum of L values adds L u. So |out_d - want_d| <= (2 D u scale max_j sum_d |q_d k_jd| +
 * (2L + 3) u) max_j |v_jd|, with u + u64 for u; the bound is twice that, for the terms of second order.
 */
function decodeAttentionCheck(run: Record<string, Named>, u: number) {
  const q = run['decodeAttention.q'];
  const k = run['decodeAttention.kCache'];
  const v = run['decodeAttention.vCache'];
  const writeAt = run['decodeAttention.writeAt'].data;
  const scale = run['decodeAttention.scale'].data[0];
  const [B, Hk, G, D] = q.shape;
  const e = u + U64;
  const want: number[] = [];
  const bound: number[] = [];
  for (let b = 0; b < B; b++)
    for (let h = 0; h < Hk; h++)
      for (let g = 0; g < G; g++) {
        const L = writeAt[b] + 1;
        const scores: number[] = [];
        let magnitude = 0;
        for (let j = 0; j < L; j++) {
          let dot = 0;
          let abs = 0;
          for (let d = 0; d < D; d++) {
            const p = q.data[offset(q.shape, [b, h, g, d])] * k.data[offset(k.shape, [b, h, j, d])];
            dot += p;
            abs += Math.abs(p);
          }
          scores.push(scale * dot);
          magnitude = Math.max(magnitude, scale * abs);
        }
        const top = Math.max(...scores);
        const weights = scores.map((s) => Math.exp(s - top));
        const total = weights.reduce((a, w) => a + w, 0);
        for (let d = 0; d < D; d++) {
          let o = 0;
          let vmax = 0;
          for (let j = 0; j < L; j++) {
            const x = v.data[offset(v.shape, [b, h, j, d])];
            o += (weights[j] / total) * x;
            vmax = Math.max(vmax, Math.abs(x));
          }
          want.push(o);
          bound.push(2 * (2 * D * e * magnitude + (2 * L + 3) * e) * vmax + Number.MIN_VALUE);
        }
      }
  return worst(run['decodeAttention.out'].data, want, bound);
}

describe('fused decoder operators', () => {
  it('equal their definitions computed in float64, within the rounding of their dtype, on the CPU (float32 and float64)', () => {
    for (const dtype of ['float32', 'float64'] as const) {
      const u = UNIT[dtype];
      for (const seed of [1, 2, 3]) {
        const run = addon().fusedOpRun('cpu', dtype, seed);
        const where = `${dtype} seed ${seed}`;
        for (const cs of ['shared', 'perHead']) {
          const r = rotaryCheck(run['rotary.x'], run[`rotary.${cs}.cos`], run[`rotary.${cs}.sin`], run[`rotary.${cs}.out`], u);
          expect(r.ratio, `rotary (${cs} cos/sin) ${where}, element ${r.at}`).toBeLessThanOrEqual(1);
        }
        const s = swigluCheck(run['swiglu.gateUp'], run['swiglu.out'], u);
        expect(s.ratio, `swiglu ${where}, element ${s.at}`).toBeLessThanOrEqual(1);
        // A copy: exact.
        const writeAt = run['kvWrite.writeAt'];
        expect(Array.from(run['kvWrite.kCacheAfter'].data), `kv_write k ${where}`).toEqual(kvWriteWant(run['kvWrite.kCache'], run['kvWrite.k'], writeAt));
        expect(Array.from(run['kvWrite.vCacheAfter'].data), `kv_write v ${where}`).toEqual(kvWriteWant(run['kvWrite.vCache'], run['kvWrite.v'], writeAt));
        const a = decodeAttentionCheck(run, u);
        expect(a.ratio, `decode attention ${where}, element ${a.at}`).toBeLessThanOrEqual(1);
      }
    }
  });

  it.skipIf(!gpu.ok)(gpuTitle('equal their composite forms on CUDA within one rounding'), () => {
    for (const [dtype, tolerance] of [
      ['float32', 1e-5],
      ['bfloat16', 0.05],
    ] as const) {
      const g = addon().fusedOpGaps('cuda', dtype, 7);
      expect(g.rotary, dtype).toBeLessThan(tolerance);
      expect(g.swiglu, dtype).toBeLessThan(tolerance);
      expect(g.kvWrite, dtype).toBe(0);
      // The memory-efficient kernel over live columns only, against the float64 softmax over them.
      expect(g.decodeAttention, dtype).toBeLessThan(tolerance);
    }
  });

  it('a decode step of a 28-layer Qwen3 dispatches at most 360 operators that are not views', async () => {
    // The Qwen3-0.6B layout (28 layers, 16/8 heads, q/k norms, tied head) with narrow widths: the count depends on
    // the layers and the code, not on the widths. Before the fusion it was 1,608.
    const policy = await randomPolicy(qwen3_0_6bConfig(true));
    try {
      const ops = await decodeStepOps(policy);
      expect(ops.work).toBeGreaterThan(28 * 8);
      expect(ops.work).toBeLessThanOrEqual(360);
      for (const op of ['lamer::rotary', 'lamer::swiglu', 'lamer::kv_write_', 'lamer::decode_attention']) expect(ops.byName[op], op).toBe(28);
    } finally {
      policy.dispose();
    }
  }, 120_000);
});

// native/model/attention.h: the attention of prompts, scoring and the train step passes grouped key/value heads to sdpa
// shared (enable_gqa) or repeated to the query heads, whichever keeps sdpa on a fused kernel; both must give the same
// numbers, forward and backward.
describe('sequence attention', () => {
  it('shared and repeated key/value heads give the same outputs and gradients on the CPU, which keeps them shared', () => {
    for (const [dtype, tolerance] of [
      ['float64', 1e-12],
      ['float32', 1e-5],
    ] as const) {
      for (const seed of [1, 2]) {
        const c = addon().attentionCheck('cpu', dtype, seed);
        expect(c.gap, `${dtype} seed ${seed}`).toBeLessThan(tolerance);
        expect(c.masked.heads).toBe('shared');
        expect(c.causal.heads).toBe('shared');
      }
    }
  });

  it.skipIf(!gpu.ok)(gpuTitle('on CUDA, masked and causal grouped-query attention with gradients run a fused kernel, not math'), () => {
    for (const [dtype, tolerance] of [
      ['bfloat16', 0.05],
      ['float32', 1e-4],
    ] as const) {
      const c = addon().attentionCheck('cuda', dtype, 3);
      expect(c.gap, dtype).toBeLessThan(tolerance);
      expect(c.masked.backend, `${dtype} masked (${c.masked.heads} heads)`).not.toBe('math');
      expect(c.causal.backend, `${dtype} causal (${c.causal.heads} heads)`).not.toBe('math');
    }
  });
});
