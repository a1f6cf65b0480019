// Unlikelihood rows for the warm start (sft.unlikelihood): a move the environment refuses, as token ids, becomes a
// row that lowers the probability of its first token that no admissible move continues with. The tokens before it are
// shared with some admissible move (`<action>click[` before a product id), so lowering them would teach against valid
// moves too; the tokens after it follow a token the model should not have written, and carry no signal.
import type { SftRow } from './batch.js';

/** Tokens `a` and `b` share from their start. */
function sharedPrefix(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let k = 0;
  while (k < n && a[k] === b[k]) k++;
  return k;
}

/**
 * The unlikelihood row of a refused response (its ids, the stop token included): the prompt extended by the
 * refused response's tokens up to where it departs from every admissible response, and that one token as the
 * response, weighted -`weight`. Null when no token departs (the refused response is an admissible one).
 */
export function unlikelihoodRow(
  prompt: ArrayLike<number>,
  refused: ArrayLike<number>,
  admissible: readonly ArrayLike<number>[],
  weight: number,
): SftRow | null {
  let k = 0;
  for (const a of admissible) k = Math.max(k, sharedPrefix(refused, a));
  if (k >= refused.length) return null;
  const context = new Int32Array(prompt.length + k);
  context.set(Array.from(prompt));
  for (let t = 0; t < k; t++) context[prompt.length + t] = refused[t];
  return { prompt: context, response: [refused[k]], weight: -weight };
}
