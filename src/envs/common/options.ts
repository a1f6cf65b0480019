// Validation of environment options and seeds at the door, so a bad value fails with a message naming the option,
// the expected range and what was given, instead of a wrong environment later.

import { LamerError } from '../../errors.js';

/** An integer option in [min, max], or its default when absent. Throws E_ENV otherwise. */
export function intOption(env: string, options: Record<string, unknown> | undefined, key: string, fallback: number, min: number, max: number): number {
  const value = options?.[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new LamerError('E_ENV', `${env} option ${key}: expected an integer in [${min}, ${max}], found ${JSON.stringify(value)}`);
  }
  return value;
}

/** Throws E_ENV when `options` names keys the environment does not know (usually a typo). */
export function rejectUnknownOptions(env: string, options: Record<string, unknown> | undefined, known: readonly string[]): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new LamerError('E_ENV', `${env} options must be an object, found ${JSON.stringify(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new LamerError('E_ENV', `${env} has no option ${JSON.stringify(key)}; known options: ${known.join(', ')}`);
    }
  }
}

/** A task seed must be a non-negative safe integer (Rng folds it to 32 bits deterministically). */
export function checkSeed(env: string, seed: unknown): number {
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0) {
    throw new LamerError('E_ENV', `${env}.reset(seed): expected a non-negative integer seed, found ${String(seed)}`);
  }
  return seed;
}
