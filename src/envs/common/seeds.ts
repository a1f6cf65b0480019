// Task seed ranges. Training and evaluation draw task seeds from disjoint ranges, so held-out evaluation tasks are
// never seen in training (SPEC §6). Both ranges stay below 2^32, where Rng uses the seed bits directly.

import { LamerError } from '../../errors.js';

export type SeedSplit = 'train' | 'eval';

/** A half-open range [start, end) of task seeds. */
export interface SeedRange {
  readonly start: number;
  readonly end: number;
}

export const TRAIN_SEEDS: SeedRange = Object.freeze({ start: 0, end: 1_000_000_000 });
export const EVAL_SEEDS: SeedRange = Object.freeze({ start: 1_000_000_000, end: 2_000_000_000 });

export function seedRange(split: SeedSplit): SeedRange {
  if (split === 'train') return TRAIN_SEEDS;
  if (split === 'eval') return EVAL_SEEDS;
  throw new LamerError('E_ENV', `unknown seed split ${JSON.stringify(split)}: expected 'train' or 'eval'`);
}

/** The seed of the index-th task of a split (index 0 is the first seed of the range). */
export function taskSeed(split: SeedSplit, index: number): number {
  const range = seedRange(split);
  if (!Number.isInteger(index) || index < 0 || index >= range.end - range.start) {
    throw new LamerError(
      'E_ENV',
      `task index ${index} is outside the ${split} split: expected an integer in [0, ${range.end - range.start})`,
    );
  }
  return range.start + index;
}

/** Which split a seed belongs to, or undefined when it is in neither range. */
export function seedSplitOf(seed: number): SeedSplit | undefined {
  if (seed >= TRAIN_SEEDS.start && seed < TRAIN_SEEDS.end) return 'train';
  if (seed >= EVAL_SEEDS.start && seed < EVAL_SEEDS.end) return 'eval';
  return undefined;
}
