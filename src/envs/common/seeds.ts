// Task seed ranges. Training and evaluation draw task seeds from disjoint ranges (SPEC §6). Both ranges stay below
// 2^32, where Rng uses the seed bits directly. Disjoint seeds are not enough where the task space is small (4x4
// MineSweeper with 2 mines has 1,584 tasks, so two seeds often give the same board): an environment that can name a
// task's content also splits the content (`contentSplit`) and draws for a seed only content of the seed's own split,
// so an evaluation task never occurs in training, demonstrations or the boards defaults are chosen on (SPEC §11).
// The boards defaults are chosen on (the `select` seeds) have content of their own too, carved out of the training
// side, so that choosing on them measures play on boards the demonstrations and training rollouts never showed.

import { LamerError } from '../../errors.js';

export type SeedSplit = 'train' | 'eval';

/** A half-open range [start, end) of task seeds. */
export interface SeedRange {
  readonly start: number;
  readonly end: number;
}

export const TRAIN_SEEDS: SeedRange = Object.freeze({ start: 0, end: 1_000_000_000 });
export const EVAL_SEEDS: SeedRange = Object.freeze({ start: 1_000_000_000, end: 2_000_000_000 });
/**
 * The model-selection seeds (`eval.split: select`), the top of the training range: far from the iterations' tasks
 * (from 0) and the demonstrations' (from 500,000,000).
 */
export const SELECT_SEEDS: SeedRange = Object.freeze({ start: 900_000_000, end: 1_000_000_000 });

/** Whose content a task seed draws: training, model selection or evaluation. */
export type ContentSplit = SeedSplit | 'select';

export function seedRange(split: SeedSplit): SeedRange {
  if (split === 'train') return TRAIN_SEEDS;
  if (split === 'eval') return EVAL_SEEDS;
  throw new LamerError('E_ENV', `unknown seed split ${JSON.stringify(split)}: expected 'train' or 'eval'`);
}

/** The seed of the index-th task of a split (index 0 is the first seed of the range). */
export function taskSeed(split: SeedSplit, index: number): number {
  const range = seedRange(split);
  if (!Number.isInteger(index) || index < 0 || index >= range.end - range.start) {
    throw new LamerError('E_ENV', `task index ${index} is outside the ${split} split: expected an integer in [0, ${range.end - range.start})`);
  }
  return range.start + index;
}

/** Which split a seed belongs to, or undefined when it is in neither range. */
export function seedSplitOf(seed: number): SeedSplit | undefined {
  if (seed >= TRAIN_SEEDS.start && seed < TRAIN_SEEDS.end) return 'train';
  if (seed >= EVAL_SEEDS.start && seed < EVAL_SEEDS.end) return 'eval';
  return undefined;
}

/** Whose content a seed draws (undefined for a seed in neither range). */
export function contentSplitOfSeed(seed: number): ContentSplit | undefined {
  const split = seedSplitOf(seed);
  return split === 'train' && seed >= SELECT_SEEDS.start && seed < SELECT_SEEDS.end ? 'select' : split;
}

/**
 * The split a task's content belongs to, from a stable hash of a text naming that content (e.g. a mine layout): half of
 * all contents are evaluation content, an eighth model-selection content (a quarter of the other half) and the rest
 * training content. The same on every machine and in every run, and independent of seeds.
 */
export function contentSplit(content: string): ContentSplit {
  // FNV-1a over the UTF-16 code units, then a murmur3 finaliser so the top bit depends on every character.
  let h = 0x811c9dc5;
  for (let i = 0; i < content.length; i++) h = Math.imul(h ^ content.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  if (h >>> 31 === 1) return 'eval';
  return ((h >>> 29) & 3) === 0 ? 'select' : 'train';
}

/**
 * Task blocks of the training split: a run seed S draws its iterations' tasks from block S of the rollout blocks
 * (training-split indices from S x TASK_BLOCK_SIZE) and its demonstrations from block S of the demonstration blocks
 * (from DEMO_TASKS_START + S x TASK_BLOCK_SIZE), so two seeds share neither (SPEC §11: a seed varies the data).
 * Both sets of blocks stay below the model-selection seeds.
 */
export const TASK_BLOCK_SIZE = 2 ** 20;
/** Blocks of each kind: task blocks (rollout.taskSeed, sft.taskSeed) are integers in [0, TASK_BLOCKS). */
export const TASK_BLOCKS = 256;
/** Index in the training split of the first demonstration block. */
export const DEMO_TASKS_START = 500_000_000;

export type TaskBlockKind = 'rollout' | 'demonstration';

/** The training-split seed of the index-th task of a block. */
export function blockTaskSeed(kind: TaskBlockKind, block: number, index: number): number {
  if (!Number.isInteger(block) || block < 0 || block >= TASK_BLOCKS) {
    throw new LamerError('E_ENV', `task block ${block}: expected an integer in [0, ${TASK_BLOCKS})`);
  }
  if (!Number.isInteger(index) || index < 0 || index >= TASK_BLOCK_SIZE) {
    throw new LamerError('E_ENV', `task ${index} of a ${kind} block: a block holds ${TASK_BLOCK_SIZE} tasks (indices 0 to ${TASK_BLOCK_SIZE - 1})`);
  }
  return taskSeed('train', (kind === 'demonstration' ? DEMO_TASKS_START : 0) + block * TASK_BLOCK_SIZE + index);
}
