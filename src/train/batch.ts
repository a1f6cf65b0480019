// An iteration's rows as the native train step takes them: the row types (a policy-gradient row, a supervised row),
// their flattening into one columnar batch (packRows), and the columns of a rollout's rows built once (trainBatch).
import { LamerError } from '../errors.js';
import type { NativeTrainBatch } from '../native/types.js';

/** One row of a mini-batch: a prompt, one sampled response, and what the loss needs per response token. */
export interface TrainRow {
  prompt: ArrayLike<number>;
  response: ArrayLike<number>;
  /** The same advantage for every response token (GiGPO, GRPO), or one per token (PPO with GAE). */
  advantage: number | ArrayLike<number>;
  /** Log-probs of the response under the policy that sampled it (at the sampling temperature). Without them the
   * ratio is 1 (the step is exactly on-policy). */
  oldLogprobs?: ArrayLike<number>;
  /** Log-probs under the frozen reference (KL loss); computed from `options.reference` when absent. */
  refLogprobs?: ArrayLike<number>;
  /** PPO: value targets and the values at rollout time, one per response token. */
  returns?: ArrayLike<number>;
  oldValues?: ArrayLike<number>;
}

/**
 * An iteration's rows in columns, built once after a rollout (`trainBatch` below): row r is
 * ids[sum(lengths[..r]) ..][..lengths[r]], its first starts[r] ids the prompt; per-token columns hold one value per
 * response token, rows concatenated. `rowReturns` (one per row) is what PPO's GAE places on a row's last token.
 */
export interface TrainBatch extends NativeTrainBatch {
  rowReturns?: Float32Array;
}

/** A supervised row: cross-entropy on the response tokens only. */
export interface SftRow {
  prompt: ArrayLike<number>;
  response: ArrayLike<number>;
  /**
   * Per response token (or one for all), what the token's loss is: w > 0 cross-entropy times w, w < 0 the
   * unlikelihood -log(1 - p) times |w| (a continuation the row's context must not have), 0 none. Default 1.
   */
  weight?: number | ArrayLike<number>;
}

function column<R extends { response: ArrayLike<number> }>(
  rows: readonly R[],
  pick: (r: R) => ArrayLike<number> | number | undefined,
  name: string,
  total: number,
): Float32Array | undefined {
  const present = rows.filter((r) => pick(r) !== undefined).length;
  if (present === 0) return undefined;
  if (present !== rows.length) throw new LamerError('E_ARG', `train rows: '${name}' is given for ${present} of ${rows.length} rows; give it for all or none`);
  const out = new Float32Array(total);
  let k = 0;
  rows.forEach((r, i) => {
    const v = pick(r)!;
    const n = r.response.length;
    if (typeof v === 'number') {
      out.fill(v, k, k + n);
    } else {
      if (v.length !== n) throw new LamerError('E_ARG', `train row ${i}: '${name}' has ${v.length} values for ${n} response tokens`);
      out.set(v, k);
    }
    k += n;
  });
  return out;
}

/** Flattens rows for the addon (copies; JS memory is only lent to native code for the call). */
export function packRows(rows: readonly (TrainRow | SftRow)[]): NativeTrainBatch {
  const lengths = new Int32Array(rows.length);
  const starts = new Int32Array(rows.length);
  let total = 0;
  let scored = 0;
  rows.forEach((r, i) => {
    if (r.prompt.length < 1) throw new LamerError('E_ARG', `train row ${i}: the prompt is empty (the first response token needs a context)`);
    lengths[i] = r.prompt.length + r.response.length;
    starts[i] = r.prompt.length;
    total += lengths[i];
    scored += r.response.length;
  });
  const ids = new Int32Array(total);
  let k = 0;
  rows.forEach((r, i) => {
    for (const part of [r.prompt, r.response]) {
      for (let t = 0; t < part.length; t++) {
        const id = part[t];
        if (!Number.isInteger(id) || id < 0) throw new LamerError('E_ARG', `train row ${i}: token ${t} is not a token id (${id})`);
        ids[k++] = id;
      }
    }
  });
  const train = rows as readonly TrainRow[];
  const batch: NativeTrainBatch = { ids, lengths, starts };
  if (rows.length > 0 && 'advantage' in rows[0]) {
    batch.advantages = column(train, (r) => r.advantage, 'advantage', scored);
    batch.oldLogprobs = column(train, (r) => r.oldLogprobs, 'oldLogprobs', scored);
    batch.refLogprobs = column(train, (r) => r.refLogprobs, 'refLogprobs', scored);
    batch.returns = column(train, (r) => r.returns, 'returns', scored);
    batch.oldValues = column(train, (r) => r.oldValues, 'oldValues', scored);
  } else if (rows.some((r) => (r as SftRow).weight !== undefined)) {
    // Supervised token weights travel in the advantages column (the sft objective reads it as weights).
    batch.advantages = column(rows as readonly SftRow[], (r) => r.weight ?? 1, 'weight', scored);
    if (batch.advantages && !batch.advantages.every(Number.isFinite)) throw new LamerError('E_ARG', "train rows: a supervised 'weight' is not a finite number");
  }
  return batch;
}

/**
 * The columns of an iteration's rows that have response tokens (rows without any carry no gradient): one copy of the
 * tokens, advantages spread over each row's response tokens (packRows). `rows` maps a batch row to its index in `update`.
 */
export function trainBatch(update: {
  promptIds: readonly ArrayLike<number>[];
  responseIds: readonly ArrayLike<number>[];
  advantages: ArrayLike<number>;
  oldLogprobs: readonly ArrayLike<number>[];
  rowReturns?: ArrayLike<number>;
}): { batch: TrainBatch; rows: number[] } {
  const rows: number[] = [];
  for (let i = 0; i < update.promptIds.length; i++) if (update.responseIds[i].length > 0) rows.push(i);
  const batch: TrainBatch = packRows(
    rows.map((i) => ({ prompt: update.promptIds[i], response: update.responseIds[i], advantage: update.advantages[i], oldLogprobs: update.oldLogprobs[i] })),
  );
  const returns = update.rowReturns;
  if (returns) batch.rowReturns = Float32Array.from(rows, (i) => returns[i]);
  return { batch, rows };
}
