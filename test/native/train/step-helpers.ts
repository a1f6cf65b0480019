// Shared pieces of the train-step tests: tiny random models, seeded rows, parameter snapshots, and a plain TS
// reference of the policy loss (SPEC §5) computed from log-probs, independent of the native code.
import { parseModelConfig, type ModelConfig } from '../../../src/model/config.js';
import { Policy, type ComputeDType } from '../../../src/model/policy.js';
import type { Aggregation, KlType } from '../../../src/train/optimizer.js';
import type { SftRow, TrainRow } from '../../../src/train/batch.js';
import { randomIds, rng } from '../../helpers/index.js';

export interface TinyShape {
  arch?: 'qwen3' | 'qwen2' | 'llama';
  vocab?: number;
  hidden?: number;
  layers?: number;
  heads?: number;
  kvHeads?: number;
  headDim?: number;
  intermediate?: number;
  tied?: boolean;
}

export function tinyConfig(s: TinyShape = {}): ModelConfig {
  const arch = s.arch ?? 'qwen3';
  return parseModelConfig({
    model_type: arch,
    vocab_size: s.vocab ?? 50,
    hidden_size: s.hidden ?? 32,
    intermediate_size: s.intermediate ?? 48,
    num_hidden_layers: s.layers ?? 2,
    num_attention_heads: s.heads ?? 4,
    num_key_value_heads: s.kvHeads ?? 2,
    head_dim: s.headDim ?? 8,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    tie_word_embeddings: s.tied ?? true,
    max_position_embeddings: 512,
    bos_token_id: 1,
    eos_token_id: 2,
    pad_token_id: 0,
    dtype: 'float32',
  });
}

/** A random model (std 0.2 so log-probs vary across tokens, unlike a near-uniform 0.02 init). */
export async function tinyPolicy(seed: number, shape: TinyShape = {}, dtype: 'float32' | 'float64' = 'float32', std = 0.2): Promise<Policy> {
  // float64 is not a public compute dtype; the addon accepts it, which is what gradient checks need.
  const d = dtype as ComputeDType;
  return Policy.init(tinyConfig(shape), { seed, std, dtype: d, paramDtype: d });
}

/** Copies of every parameter's values, by name. */
export function snapshot(policy: Policy): Map<string, Float64Array> {
  const params = policy.native.parameters();
  const out = new Map<string, Float64Array>();
  for (const [name, t] of Object.entries(params)) {
    out.set(name, Float64Array.from(t.data as Float32Array | Float64Array));
    t.dispose();
  }
  return out;
}

export function maxParamDiff(a: Map<string, Float64Array>, b: Map<string, Float64Array>): number {
  let m = 0;
  for (const [name, x] of a) {
    const y = b.get(name);
    if (!y || y.length !== x.length) throw new Error(`parameter ${name} differs in presence or size`);
    for (let i = 0; i < x.length; i++) {
      const d = Math.abs(x[i] - y[i]);
      if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
    }
  }
  return m;
}

export interface RefLossOptions {
  clipLow: number;
  clipHigh: number;
  dualClip: number;
  aggregation: Aggregation;
  entropyCoef: number;
  kl: KlType;
  klCoef: number;
}

export interface RefLoss {
  loss: number;
  pgLoss: number;
  klLoss: number;
  entropyLoss: number;
  clipFrac: number;
  dualClipFrac: number;
  approxKl: number;
  /** How many tokens fell in each regime, so a test can insist every regime was exercised. */
  counts: { unclipped: number; clipped: number; dual: number };
}

/** SPEC §5 written out per token in plain TS, from the new log-probs (and entropies) of each row's tokens. */
export function referenceLoss(rows: TrainRow[], logprobs: number[][], entropy: number[][], o: RefLossOptions): RefLoss {
  const R = rows.length;
  const N = rows.reduce((a, r) => a + r.response.length, 0);
  const counts = { unclipped: 0, clipped: 0, dual: 0 };
  let clip = 0;
  let dual = 0;
  let approx = 0;
  const agg = (perToken: number[][]): number => {
    let total = 0;
    perToken.forEach((v) => {
      const sum = v.reduce((a, b) => a + b, 0);
      if (o.aggregation === 'token-mean') total += sum / N;
      else if (o.aggregation === 'seq-mean-token-sum') total += sum / R;
      else total += v.length > 0 ? sum / v.length / R : 0;
    });
    return total;
  };
  const pg: number[][] = [];
  const kl: number[][] = [];
  rows.forEach((row, i) => {
    const p: number[] = [];
    const k: number[] = [];
    for (let t = 0; t < row.response.length; t++) {
      const A = typeof row.advantage === 'number' ? row.advantage : row.advantage[t];
      const lp = logprobs[i][t];
      const old = row.oldLogprobs ? row.oldLogprobs[t] : lp;
      const ratio = Math.exp(Math.min(20, Math.max(-20, lp - old)));
      approx += old - lp;
      const l1 = -A * ratio;
      const l2 = -A * Math.min(1 + o.clipHigh, Math.max(1 - o.clipLow, ratio));
      let l = Math.max(l1, l2);
      if (l2 > l1) clip++;
      const l3 = -A * o.dualClip;
      if (A < 0 && l > l3) {
        dual++;
        counts.dual++;
        l = l3;
      } else if (l2 > l1) counts.clipped++;
      else counts.unclipped++;
      p.push(l);
      if (o.kl !== 'none') {
        const ref = row.refLogprobs![t];
        if (o.kl === 'kl') k.push(lp - ref);
        else if (o.kl === 'mse') k.push(0.5 * (lp - ref) ** 2);
        else {
          const d = Math.min(20, Math.max(-20, ref - lp));
          k.push(Math.min(10, Math.max(-10, Math.exp(d) - d - 1)));
        }
      }
    }
    pg.push(p);
    kl.push(k);
  });
  const pgLoss = agg(pg);
  const entropyLoss = agg(entropy);
  const klLoss = o.kl === 'none' ? 0 : agg(kl);
  return {
    loss: pgLoss - o.entropyCoef * entropyLoss + (o.kl === 'none' ? 0 : o.klCoef * klLoss),
    pgLoss,
    klLoss,
    entropyLoss,
    clipFrac: clip / N,
    dualClipFrac: dual / N,
    approxKl: approx / N,
    counts,
  };
}

/** Entropy of softmax(logits / T) at each response position, from the model's own full logits (inference path). */
export async function referenceEntropy(policy: Policy, rows: TrainRow[], temperature: number): Promise<number[][]> {
  const V = policy.config.vocabSize;
  const out: number[][] = [];
  for (const row of rows) {
    const seq = [...Array.from(row.prompt), ...Array.from(row.response)];
    using logits = await policy.logits([seq]);
    const data = logits.data as Float32Array | Float64Array;
    const ent: number[] = [];
    for (let t = row.prompt.length; t < seq.length; t++) {
      const z = Array.from(data.subarray((t - 1) * V, t * V), (x) => x / temperature);
      const m = Math.max(...z);
      const e = z.map((x) => Math.exp(x - m));
      const s = e.reduce((a, b) => a + b, 0);
      let h = 0;
      for (const x of e) {
        const p = x / s;
        if (p > 0) h -= p * Math.log(p);
      }
      ent.push(h);
    }
    out.push(ent);
  }
  return out;
}

/** The six fixed sequences the supervised-step tests memorise (native) and compare with transformers (parity). */
export function sftRows(vocab: number): SftRow[] {
  const r = rng(2024);
  return [
    [3, 8],
    [5, 6],
    [4, 10],
    [2, 7],
    [6, 9],
    [3, 5],
  ].map(([p, n]) => ({ prompt: randomIds(r, p, vocab), response: randomIds(r, n, vocab) }));
}

/** The optimizer settings of those runs, and their number of steps. */
export const SFT_SETTINGS = { lr: 1e-2, weightDecay: 0.01, betas: [0.9, 0.999] as [number, number], eps: 1e-8, gradClip: 1.0 };
export const SFT_STEPS = 60;
