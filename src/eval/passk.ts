// pass@k (SPEC §7): for each evaluation task, won_k = episode k was won; pass@k = mean over tasks of
// (won_0 or ... or won_{k-1}). Cumulative, so it never decreases with k; reported for k = 1..N and per task type.

import { LamerError } from '../errors.js';

export interface TaskOutcome {
  /** won[k]: episode (attempt) k was won; episodes not played (after a win) count as not won. */
  won: readonly boolean[];
  /** The environment's task type, when it has types. */
  taskType?: string;
}

export interface PassAtK {
  /** pass@1..pass@N as fractions in [0, 1]. */
  passAtK: number[];
  tasks: number;
  /** pass@1..N per task type (only for tasks with a type). */
  byType: Record<string, number[]>;
  /** Tasks per type. */
  tasksByType: Record<string, number>;
}

function cumulative(outcomes: readonly TaskOutcome[], episodes: number): number[] {
  const solvedBy = new Array<number>(episodes).fill(0);
  for (const o of outcomes) {
    const first = o.won.slice(0, episodes).indexOf(true);
    if (first >= 0) for (let k = first; k < episodes; k++) solvedBy[k]++;
  }
  return solvedBy.map((c) => c / outcomes.length);
}

/**
 * pass@1..N over the tasks of each group (e.g. in- and out-of-distribution task types), in the order groups first
 * occur; tasks whose group is undefined are left out.
 */
export function passAtKByGroup(outcomes: readonly TaskOutcome[], groupOf: (o: TaskOutcome) => string | undefined, episodes: number): Record<string, number[]> {
  const groups = new Map<string, TaskOutcome[]>();
  for (const o of outcomes) {
    const g = groupOf(o);
    if (g === undefined) continue;
    let list = groups.get(g);
    if (!list) groups.set(g, (list = []));
    list.push(o);
  }
  return Object.fromEntries([...groups].map(([g, list]) => [g, cumulative(list, episodes)]));
}

/** pass@1..N over tasks; N defaults to the longest `won` array. */
export function passAtK(outcomes: readonly TaskOutcome[], episodes?: number): PassAtK {
  if (!Array.isArray(outcomes) || outcomes.length === 0) {
    throw new LamerError('E_ARG', 'passAtK: expected at least one task outcome');
  }
  const n = episodes ?? Math.max(...outcomes.map((o) => o.won.length));
  if (!Number.isInteger(n) || n < 1) {
    throw new LamerError('E_ARG', `passAtK: episodes must be a positive integer, found ${JSON.stringify(episodes)}`);
  }
  const typed = new Map<string, TaskOutcome[]>();
  for (const o of outcomes) {
    if (o.taskType === undefined) continue;
    let list = typed.get(o.taskType);
    if (!list) typed.set(o.taskType, (list = []));
    list.push(o);
  }
  const byType: Record<string, number[]> = {};
  const tasksByType: Record<string, number> = {};
  for (const type of [...typed.keys()].sort()) {
    const list = typed.get(type)!;
    byType[type] = cumulative(list, n);
    tasksByType[type] = list.length;
  }
  return { passAtK: cumulative(outcomes, n), tasks: outcomes.length, byType, tasksByType };
}

/**
 * score@1..N where the environment scores episodes (WebShop's purchase score): for each task the best score of its
 * first k attempts (an attempt not played after a win keeps the winning score), averaged over the tasks, as fractions.
 * Null when any played attempt has no score.
 */
export function scoreAtK(trials: readonly { episodeScores: ReadonlyArray<number | null> }[], episodes: number): number[] | null {
  if (trials.length === 0) return null;
  const sums = new Array<number>(episodes).fill(0);
  for (const t of trials) {
    if (t.episodeScores.length === 0 || t.episodeScores.some((s) => s === null)) return null;
    let best = 0;
    for (let k = 0; k < episodes; k++) {
      if (k < t.episodeScores.length) best = Math.max(best, t.episodeScores[k]!);
      sums[k] += best;
    }
  }
  return sums.map((s) => s / trials.length);
}
