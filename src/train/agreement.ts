// How far the trainer's log-probs of the sampled tokens are from the ones the rollout engine sampled them with, on the
// same weights. They differ by float rounding (batch shapes, kernels, a prefix cache) and by more when something is
// wrong: a bf16 engine beside an fp32 trainer, a stale graph or cache, a LoRA weight the engine does not see. Every
// importance ratio of the update (PPO's clip, approxKl) takes the engine's log-probs as the old policy's, so a gap
// here biases them all.

/** Agreement over the tokens compared: |log p_trainer − log p_engine| (mean, max) and the k3 estimate of the KL. */
export interface LogprobAgreement {
  /** Response tokens compared. */
  tokens: number;
  meanAbs: number;
  maxAbs: number;
  /**
   * k3 estimate of KL(engine ‖ trainer) over tokens sampled from the engine: mean of (r − 1) − log r with
   * r = p_trainer / p_engine (non-negative for every token, unbiased; Schulman's "Approximating KL divergence").
   */
  k3: number;
}

/**
 * The agreement over the rows `selected` (indices into `rows`, which map to the batch's rows), whose trainer
 * log-probs `trainer` hold each selected row's response tokens in turn, against the engine's `engine[rows[j]]`.
 */
export function logprobAgreement(
  selected: ArrayLike<number>,
  rows: readonly number[],
  engine: readonly ArrayLike<number>[],
  trainer: ArrayLike<number>,
): LogprobAgreement {
  let at = 0;
  let sumAbs = 0;
  let maxAbs = 0;
  let k3 = 0;
  for (let i = 0; i < selected.length; i++) {
    const old = engine[rows[selected[i]]];
    for (let t = 0; t < old.length; t++, at++) {
      const d = trainer[at] - old[t];
      sumAbs += Math.abs(d);
      maxAbs = Math.max(maxAbs, Math.abs(d));
      k3 += Math.expm1(d) - d;
    }
  }
  if (at !== trainer.length) throw new Error(`logprobAgreement: ${trainer.length} trainer log-probs for ${at} response tokens`);
  return { tokens: at, meanAbs: at ? sumAbs / at : 0, maxAbs, k3: at ? k3 / at : 0 };
}
