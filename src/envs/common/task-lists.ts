// Task lists drawn from a seed sequence: the distinct tasks of the sequence (by content where the environment names
// it, Environment.taskKey), so a count of n is n different tasks, and a content hash of a list, so that a record of
// what was scored can be compared with another (SPEC §11: records say what they scored).
import { createHash } from 'node:crypto';
import { LamerError } from '../../errors.js';
import type { Environment } from '../types.js';

/** Seeds scanned per task wanted before a sequence is declared too small for the count. */
const SCAN_PER_TASK = 100;

export interface DistinctTasksOptions {
  /** Index of the first task in the sequence of distinct tasks (default 0). */
  offset?: number;
  /** Length of the seed sequence: nth(i) is defined for i below it (default: unbounded). */
  length?: number;
  /** What the tasks are, for errors ("held-out", "demonstration"). */
  what: string;
}

/**
 * Tasks [offset, offset + count) of the sequence of distinct tasks that the seeds nth(0), nth(1), ... give: a seed whose
 * task repeats an earlier seed's by content is skipped. Without taskKey every seed is its own task, and task i is
 * seed nth(offset + i). Two lists of one sequence with disjoint ranges share no task.
 */
export function distinctTaskSeeds(nth: (i: number) => number, count: number, env: (() => Environment) | undefined, options: DistinctTasksOptions): number[] {
  const offset = options.offset ?? 0;
  if (!Number.isInteger(count) || count < 1) throw new LamerError('E_ARG', `${options.what} tasks: expected a positive task count, found ${count}`);
  if (!Number.isInteger(offset) || offset < 0)
    throw new LamerError('E_ARG', `${options.what} tasks: expected a non-negative first task index, found ${offset}`);
  const length = options.length ?? Infinity;
  const probe = env?.();
  if (!probe?.taskKey) {
    if (offset + count > length) {
      throw new LamerError('E_ARG', `${options.what} tasks ${offset} to ${offset + count - 1}: the sequence holds ${length} tasks`);
    }
    return Array.from({ length: count }, (_, i) => nth(offset + i));
  }
  const seen = new Set<string>();
  const seeds: number[] = [];
  const scan = Math.min(length, Math.max(10_000, SCAN_PER_TASK * (offset + count)));
  let i = 0;
  for (; i < scan && seeds.length < count; i++) {
    const seed = nth(i);
    probe.reset(seed);
    const key = probe.taskKey();
    if (seen.has(key)) continue;
    seen.add(key);
    if (seen.size > offset) seeds.push(seed);
  }
  if (seeds.length < count) {
    throw new LamerError(
      'E_ARG',
      `${options.what} tasks: ${count} distinct tasks wanted from task ${offset} on, but the first ${i} seeds of ${probe.name} give only ` +
        `${seen.size} distinct tasks in all; ask for fewer tasks or an earlier first task, or use a larger task space (e.g. a larger board)`,
    );
  }
  return seeds;
}

export interface TaskListHash {
  /** SHA-256 (hex) of the tasks' content keys in order, one per line. */
  hash: string;
  /** `content`: the keys are the environment's taskKey; `seed`: it names no content, and the keys are the seeds. */
  by: 'content' | 'seed';
}

/**
 * A content hash of a task list: of the environment's taskKey of every seed in order where it has one, else of its
 * name and the seeds. Two lists hash alike exactly when they hold the same tasks in the same order.
 */
export function taskListHash(seeds: readonly number[], env: () => Environment): TaskListHash {
  const probe = env();
  const keyOf = probe.taskKey
    ? (seed: number) => {
        probe.reset(seed);
        return probe.taskKey!();
      }
    : (seed: number) => `${probe.name}#${seed}`;
  const h = createHash('sha256');
  for (const seed of seeds) h.update(`${keyOf(seed)}\n`);
  return { hash: h.digest('hex'), by: probe.taskKey ? 'content' : 'seed' };
}
