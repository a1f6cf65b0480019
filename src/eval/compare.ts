// Paired comparison of two methods evaluated on the same held-out tasks: the difference of pass@N and of the gain
// pass@N - pass@1, each with a 95% percentile bootstrap interval that resamples tasks (both methods' outcomes on a
// task stay together, so task difficulty, shared by both, does not widen the interval). One board is 1/tasks of
// pass@k; the interval says whether a difference is larger than which boards happened to be drawn.

import { LamerError } from '../errors.js';
import { Rng } from '../util/rng.js';
import { describeTaskSet, type TaskSet } from './evaluate.js';

export interface Interval {
  /** Difference a - b in fractions (points / 100). */
  mean: number;
  low: number;
  high: number;
}

export interface PairedComparison {
  a: string;
  b: string;
  tasks: number;
  /** The tasks both were scored on (absent when the records name none). */
  taskSet?: TaskSet;
  /** N: the pass@N compared. */
  episodes: number;
  /** pass@N(a) - pass@N(b). */
  passAtN: Interval;
  /** (pass@N - pass@1)(a) - (pass@N - pass@1)(b). */
  gain: Interval;
  resamples: number;
}

export interface CompareOptions {
  /** Bootstrap resamples (default 2000). */
  resamples?: number;
  /** Seed of the resampling (default 0), so the interval is reproducible. */
  seed?: number;
}

function check(name: string, firstWin: readonly number[], episodes: number): void {
  if (!Array.isArray(firstWin) || firstWin.some((w) => !Number.isInteger(w) || w < -1 || w >= episodes)) {
    throw new LamerError('E_ARG', `compareMethods: ${name} must list, per task, the index of the first won attempt in [0, ${episodes}) or -1`);
  }
}

/**
 * Compares method a with method b from their per-task first won attempts (`firstWin[i]`: 0-based attempt of the first
 * win on task i, -1 when every attempt failed), which must come from the same tasks in the same order.
 */
export function compareMethods(
  a: { method: string; firstWin: readonly number[]; taskSet?: TaskSet },
  b: { method: string; firstWin: readonly number[]; taskSet?: TaskSet },
  episodes: number,
  options: CompareOptions = {},
): PairedComparison {
  if (a.taskSet && b.taskSet && a.taskSet.hash !== b.taskSet.hash) {
    throw new LamerError(
      'E_TASKS',
      `compareMethods: ${a.method} was scored on ${describeTaskSet(a.taskSet)} (task hash ${a.taskSet.hash.slice(0, 12)}) and ${b.method} on ` +
        `${describeTaskSet(b.taskSet)} (${b.taskSet.hash.slice(0, 12)}); a paired comparison needs both on the same tasks`,
    );
  }
  if (!Number.isInteger(episodes) || episodes < 1) throw new LamerError('E_ARG', `compareMethods: episodes must be a positive integer, found ${episodes}`);
  check(a.method, a.firstWin, episodes);
  check(b.method, b.firstWin, episodes);
  const n = a.firstWin.length;
  if (n === 0 || b.firstWin.length !== n) {
    throw new LamerError('E_ARG', `compareMethods: both methods need outcomes on the same non-empty task list (${n} vs ${b.firstWin.length})`);
  }
  const resamples = options.resamples ?? 2000;
  if (!Number.isInteger(resamples) || resamples < 1) throw new LamerError('E_ARG', `compareMethods: resamples must be a positive integer, found ${resamples}`);
  // Per task: the contribution to pass@N and to the gain (solved at N but not at attempt 1), for a minus b.
  const dPass = new Float64Array(n);
  const dGain = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const [wa, wb] = [a.firstWin[i], b.firstWin[i]];
    dPass[i] = (wa >= 0 ? 1 : 0) - (wb >= 0 ? 1 : 0);
    dGain[i] = (wa >= 1 ? 1 : 0) - (wb >= 1 ? 1 : 0);
  }
  const mean = (xs: Float64Array) => xs.reduce((s, x) => s + x, 0) / n;
  const rng = new Rng(options.seed ?? 0);
  const passMeans = new Float64Array(resamples);
  const gainMeans = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let p = 0;
    let g = 0;
    for (let i = 0; i < n; i++) {
      const j = rng.int(n);
      p += dPass[j];
      g += dGain[j];
    }
    passMeans[r] = p / n;
    gainMeans[r] = g / n;
  }
  const interval = (values: Float64Array, m: number): Interval => {
    const sorted = Float64Array.from(values).sort();
    const at = (q: number) => sorted[Math.min(resamples - 1, Math.max(0, Math.round(q * (resamples - 1))))];
    return { mean: m, low: at(0.025), high: at(0.975) };
  };
  return {
    a: a.method,
    b: b.method,
    tasks: n,
    ...(a.taskSet ? { taskSet: a.taskSet } : {}),
    episodes,
    passAtN: interval(passMeans, mean(dPass)),
    gain: interval(gainMeans, mean(dGain)),
    resamples,
  };
}

/**
 * The first method against each other one scored on the same tasks, for results of one evaluation run; results scored
 * on other tasks (a variant evaluated on harder ones) form groups of their own, each compared with its first. A
 * result without per-task outcomes, or with a different task count, is left out.
 */
export function compareWithFirst(
  results: ReadonlyArray<{ method: string; firstWin?: readonly number[]; taskSet?: TaskSet }>,
  episodes: number,
  options: CompareOptions = {},
): PairedComparison[] {
  const groups = new Map<string, Array<(typeof results)[number]>>();
  for (const r of results) {
    const key = r.taskSet?.hash ?? results[0].taskSet?.hash ?? '';
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const out: PairedComparison[] = [];
  for (const [first, ...others] of groups.values()) {
    for (const other of others) {
      if (!first.firstWin || !other.firstWin || first.firstWin.length !== other.firstWin.length) continue;
      out.push(compareMethods({ ...first, firstWin: first.firstWin }, { ...other, firstWin: other.firstWin }, episodes, options));
    }
  }
  return out;
}

/** A difference in points with its sign: 0.027 -> "+2.7". */
export const formatPoints = (x: number): string => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;

/** "+2.7 (-1.6 to +7.0)": the mean and the 95% interval, in points. */
export const formatInterval = (i: Interval): string => `${formatPoints(i.mean)} (${formatPoints(i.low)} to ${formatPoints(i.high)})`;

/** Two lines: the pass@N difference and the gain difference, in points with their 95% intervals. */
export function formatComparison(c: PairedComparison): string {
  const line = (what: string, i: Interval) =>
    `${c.a} - ${c.b} ${what}: ${formatPoints(i.mean)} points (95% CI ${formatPoints(i.low)} to ${formatPoints(i.high)})`;
  return [
    line(`pass@${c.episodes}`, c.passAtN),
    line(`gain pass@1->${c.episodes}`, c.gain),
    `(paired bootstrap over the ${c.taskSet ? describeTaskSet(c.taskSet) : `${c.tasks} tasks`}, ${c.resamples} resamples)`,
  ].join('\n');
}
