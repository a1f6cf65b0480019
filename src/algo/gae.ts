// GAE for the PPO baseline (SPEC §4): a critic value per response token, GAE inside one response (each row is its own
// sequence; its scalar reward lands on the last token), then advantages whitened over every token of the batch.

import { LamerError } from '../errors.js';
import { checkResponseLengths } from './tokens.js';

export interface GaeInput {
  /** One scalar reward per row, placed on the row's last response token (e.g. the row's stepReturn or reward). */
  rowReward: Float32Array;
  /** Critic values per response token, packed row after row (length = sum of responseLengths). */
  values: Float32Array;
  responseLengths: Int32Array;
  /** Default 1.0. */
  gamma?: number;
  /** Default 1.0. */
  lambda?: number;
  /** Whiten advantages over the batch (default true). */
  whiten?: boolean;
}

export interface GaeResult {
  /** Per token, packed like `values`; whitened unless `whiten: false`. */
  advantage: Float32Array;
  /** Value targets per token: raw (unwhitened) advantage + value. */
  returns: Float32Array;
}

/** Whitening epsilon inside the square root, so a batch of equal advantages stays finite. */
const WHITEN_EPS = 1e-8;

export function computeGae(input: GaeInput): GaeResult {
  const { rowReward, values, responseLengths } = input;
  const gamma = input.gamma ?? 1.0;
  const lambda = input.lambda ?? 1.0;
  for (const [name, v] of [
    ['gamma', gamma],
    ['lambda', lambda],
  ] as const) {
    if (!Number.isFinite(v) || v < 0 || v > 1) {
      throw new LamerError('E_ROWS', `computeGae: ${name} must be a number in [0, 1], found ${v}`);
    }
  }
  const total = checkResponseLengths(rowReward.length, responseLengths, 'computeGae');
  if (values.length !== total) {
    throw new LamerError('E_ROWS', `computeGae: values has ${values.length} entries but the responses have ${total} tokens`);
  }
  const raw = new Float64Array(total);
  const returns = new Float32Array(total);
  let offset = 0;
  for (let r = 0; r < rowReward.length; r++) {
    const len = responseLengths[r];
    let lastGae = 0;
    for (let t = len - 1; t >= 0; t--) {
      const k = offset + t;
      const reward = t === len - 1 ? rowReward[r] : 0;
      const nextValue = t === len - 1 ? 0 : values[k + 1];
      const delta = reward + gamma * nextValue - values[k];
      lastGae = delta + gamma * lambda * lastGae;
      raw[k] = lastGae;
      returns[k] = lastGae + values[k];
    }
    offset += len;
  }
  const advantage = new Float32Array(total);
  if (input.whiten === false || total === 0) {
    advantage.set(raw);
    return { advantage, returns };
  }
  let sum = 0;
  for (let k = 0; k < total; k++) sum += raw[k];
  const mean = sum / total;
  let squares = 0;
  for (let k = 0; k < total; k++) squares += (raw[k] - mean) ** 2;
  // Unbiased variance; a single token has none, so it is only centred.
  const scale = total > 1 ? 1 / Math.sqrt(squares / (total - 1) + WHITEN_EPS) : 1;
  for (let k = 0; k < total; k++) advantage[k] = (raw[k] - mean) * scale;
  return { advantage, returns };
}
