// Runs (seeds) as the unit of replication (SPEC §11). Inside one run both methods played the same held-out tasks, so
// each run gets the paired task bootstrap of compare.ts; across runs, the headline is the mean of the runs' own
// differences with a Student-t interval on runs - 1 degrees of freedom. Pooling the tasks of several runs as if they
// were independent would leave out how much a whole run varies (warm start, RL, sampling) and understate the interval.

import { LamerError } from '../errors.js';
import { compareMethods, formatInterval, type CompareOptions, type Interval, type PairedComparison } from './compare.js';
import { describeTaskSet, type TaskSet } from './evaluate.js';

/**
 * P(T <= t) for Student's t with an integer number of degrees of freedom, from the finite series in
 * theta = atan(t / sqrt(df)) (Abramowitz & Stegun 26.7.3-4): exact up to floating point, no special functions.
 */
export function studentTCdf(t: number, df: number): number {
  if (!Number.isInteger(df) || df < 1) throw new LamerError('E_ARG', `studentTCdf: degrees of freedom must be a positive integer, found ${df}`);
  if (Number.isNaN(t)) return NaN;
  if (t === Infinity) return 1;
  if (t === -Infinity) return 0;
  const theta = Math.atan(t / Math.sqrt(df));
  const [s, c2] = [Math.sin(theta), Math.cos(theta) ** 2];
  if (df % 2 === 0) {
    // 1/2 + sin(theta)/2 * (1 + 1/2 cos^2 + (1*3)/(2*4) cos^4 + ... up to cos^(df-2)).
    let term = 1;
    let sum = 1;
    for (let j = 1; j <= (df - 2) / 2; j++) {
      term *= (c2 * (2 * j - 1)) / (2 * j);
      sum += term;
    }
    return 0.5 + (s * sum) / 2;
  }
  // 1/2 + (theta + sin(theta) cos(theta) * (1 + 2/3 cos^2 + (2*4)/(3*5) cos^4 + ... up to cos^(df-3))) / pi.
  let term = 1;
  let sum = df > 1 ? 1 : 0;
  for (let j = 1; j <= (df - 3) / 2; j++) {
    term *= (c2 * 2 * j) / (2 * j + 1);
    sum += term;
  }
  return 0.5 + (theta + s * Math.cos(theta) * sum) / Math.PI;
}

/** The p-quantile of Student's t with integer df (e.g. p = 0.975, df = 4: 2.776), by bisection on the CDF. */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new LamerError('E_ARG', `studentTQuantile: p must be in (0, 1), found ${p}`);
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  if (p === 0.5) return 0;
  let hi = 1;
  while (studentTCdf(hi, df) < p) hi *= 2;
  let lo = 0;
  // 100 halvings take any bracket below double precision.
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** A mean over runs with its Student-t interval. */
export interface RunsInterval extends Interval {
  /** Runs (seeds) the mean is over. */
  runs: number;
  /** Sample standard deviation over the runs (n - 1 in the denominator). */
  sd: number;
  /** Degrees of freedom, runs - 1. */
  df: number;
  /** The t quantile the half-width is made of: t(1 - (1 - level) / 2, df). */
  t: number;
  level: number;
}

/**
 * Mean of per-run values with a Student-t interval: mean +- t(1 - (1 - level)/2, n - 1) * sd / sqrt(n). Needs at least
 * two runs (one run says nothing about how runs vary).
 */
export function runsInterval(values: readonly number[], level = 0.95): RunsInterval {
  if (!Array.isArray(values) || values.length < 2 || values.some((v) => typeof v !== 'number' || !Number.isFinite(v))) {
    throw new LamerError('E_ARG', `runsInterval: expected at least two finite per-run values, found ${JSON.stringify(values)}`);
  }
  if (!(level > 0 && level < 1)) throw new LamerError('E_ARG', `runsInterval: level must be in (0, 1), found ${level}`);
  const n = values.length;
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1));
  const t = studentTQuantile(1 - (1 - level) / 2, n - 1);
  const half = (t * sd) / Math.sqrt(n);
  return { mean, low: mean - half, high: mean + half, runs: n, sd, df: n - 1, t, level };
}

/** One run's final evaluation, as the run folder's eval.json holds it. */
export interface RunEvaluation {
  /** A name for the run (its folder). */
  run: string;
  /** The run's seed, where known. */
  seed?: number;
  results: ReadonlyArray<{ method: string; passAtK: readonly number[]; tasks: number; firstWin?: readonly number[]; taskSet?: TaskSet; variantOf?: string }>;
}

export interface MethodAcrossRuns {
  method: string;
  /** pass@1..N per run, in run order. */
  perRun: number[][];
  /** Mean pass@1..N over the runs. */
  mean: number[];
  /** pass@N over the runs with its t-interval (absent with one run). */
  passAtN?: RunsInterval;
}

export interface PairAcrossRuns {
  a: string;
  b: string;
  episodes: number;
  /** Per run: the paired task bootstrap of a against b on that run's tasks. */
  perRun: Array<{ run: string; seed?: number; comparison: PairedComparison }>;
  /** Mean of the per-run pass@N differences with a t-interval over the runs (absent with one run). */
  passAtN?: RunsInterval;
  /** The same for the gain pass@N - pass@1. */
  gain?: RunsInterval;
}

export interface RunsComparison {
  runs: Array<{ run: string; seed?: number; tasks: number }>;
  /** The tasks every method of every run was scored on. */
  taskSet: TaskSet;
  episodes: number;
  methods: MethodAcrossRuns[];
  /** `a` (default: the first method of the first run) against each other method present in every run. */
  pairs: PairAcrossRuns[];
}

export interface CompareRunsOptions extends CompareOptions {
  // `seed` resamples the runs whose seed is unknown; a run with a known seed resamples with it, as its job did for
  // compare.json, so the per-run intervals here are the job's own.
  /** The method compared with the others; default the first method of the first run. */
  a?: string;
  /** Level of the across-run intervals (default 0.95). */
  level?: number;
}

/**
 * The task list every evaluation of every run scored (SPEC §11: records say what they scored, and comparisons refuse
 * records of different task lists): seeds pair only when they were scored on the same tasks.
 */
/**
 * The tasks the comparison is on: those method `a` was scored on, the same in every run, and every method must record
 * its tasks and share them, but a variant (a record with `variantOf`) scored on other tasks on purpose, e.g. harder
 * ones: it is left out of the comparison (compare it with `a` set to a method of its tasks).
 */
function commonTaskSet(runs: readonly RunEvaluation[], a: string): TaskSet {
  const first = runs[0];
  const firstA = first.results.find((m) => m.method === a) ?? first.results[0];
  const firstSet = firstA.taskSet;
  for (const r of runs) {
    for (const m of r.results) {
      if (!m.taskSet) {
        throw new LamerError(
          'E_TASKS',
          `compareRuns: run ${r.run} does not record which tasks ${m.method} was scored on (an evaluation of an earlier build); evaluate it again with this build to compare it`,
        );
      }
      // A variant may be scored on other tasks on purpose (harder ones); any other method must share a's.
      const variantInvolved = m.variantOf !== undefined || firstA.variantOf !== undefined;
      if (m.taskSet.hash !== firstSet!.hash && (m.method === firstA.method || !variantInvolved)) {
        throw new LamerError(
          'E_TASKS',
          `compareRuns: run ${r.run} scored ${m.method} on ${describeTaskSet(m.taskSet)} (task hash ${m.taskSet.hash.slice(0, 12)}), run ${first.run} ` +
            `scored ${firstA.method} on ${describeTaskSet(firstSet!)} (${firstSet!.hash.slice(0, 12)}): runs are compared only on the same tasks`,
        );
      }
    }
  }
  return firstSet!;
}

/**
 * Compares methods over several runs: per method its pass@k in each run and on average; per pair (a against every
 * other method that every run evaluated) the paired bootstrap inside each run and the t-interval across runs.
 */
export function compareRuns(runs: readonly RunEvaluation[], options: CompareRunsOptions = {}): RunsComparison {
  // Array.isArray would widen the readonly element types to any, so the lengths are checked on their own.
  if (!runs || !(runs.length > 0)) throw new LamerError('E_ARG', 'compareRuns: expected at least one run');
  for (const r of runs) {
    if (!r || !r.results || !(r.results.length > 0)) {
      throw new LamerError('E_ARG', `compareRuns: run ${JSON.stringify(r?.run)} has no evaluated methods`);
    }
  }
  const taskSet = commonTaskSet(runs, options.a ?? runs[0].results[0].method);
  const episodes = runs[0].results[0].passAtK.length;
  for (const r of runs) {
    for (const m of r.results) {
      if (m.passAtK.length !== episodes) {
        throw new LamerError(
          'E_ARG',
          `compareRuns: run ${r.run} reports pass@1..${m.passAtK.length} for ${m.method}, run ${runs[0].run} pass@1..${episodes}; compare runs of the same N`,
        );
      }
    }
  }
  // Methods in the order of the first run, kept when every run evaluated them on the comparison's tasks.
  const methods = runs[0].results
    .map((m) => m.method)
    .filter((m) => runs.every((r) => r.results.some((x) => x.method === m && x.taskSet?.hash === taskSet.hash)));
  const a = options.a ?? runs[0].results[0].method;
  if (!methods.includes(a)) {
    throw new LamerError('E_ARG', `compareRuns: method ${a} is not evaluated in every run (common to all: ${methods.join(', ') || 'none'})`);
  }
  const find = (r: RunEvaluation, method: string) => r.results.find((x) => x.method === method)!;
  const level = options.level ?? 0.95;
  const across = (values: number[]) => (values.length >= 2 ? runsInterval(values, level) : undefined);
  const methodRows: MethodAcrossRuns[] = methods.map((method) => {
    const perRun = runs.map((r) => find(r, method).passAtK.slice());
    const mean = perRun[0].map((_, k) => perRun.reduce((s, p) => s + p[k], 0) / perRun.length);
    const passAtN = across(perRun.map((p) => p[episodes - 1]));
    return { method, perRun, mean, ...(passAtN ? { passAtN } : {}) };
  });
  const pairs: PairAcrossRuns[] = methods
    .filter((b) => b !== a)
    .map((b) => {
      const perRun = runs.map((r) => {
        const [ra, rb] = [find(r, a), find(r, b)];
        if (!ra.firstWin || !rb.firstWin) {
          throw new LamerError(
            'E_ARG',
            `compareRuns: run ${r.run} has no per-task outcomes (firstWin) for ${ra.firstWin ? b : a}; re-run its evaluation with this build`,
          );
        }
        const bootstrap = { resamples: options.resamples, seed: r.seed ?? options.seed ?? 0 };
        const comparison = compareMethods(
          { method: a, firstWin: ra.firstWin, taskSet: ra.taskSet },
          { method: b, firstWin: rb.firstWin, taskSet: rb.taskSet },
          episodes,
          bootstrap,
        );
        return { run: r.run, ...(r.seed !== undefined ? { seed: r.seed } : {}), comparison };
      });
      const passAtN = across(perRun.map((p) => p.comparison.passAtN.mean));
      const gain = across(perRun.map((p) => p.comparison.gain.mean));
      return { a, b, episodes, perRun, ...(passAtN ? { passAtN } : {}), ...(gain ? { gain } : {}) };
    });
  return {
    runs: runs.map((r) => ({ run: r.run, ...(r.seed !== undefined ? { seed: r.seed } : {}), tasks: find(r, a).tasks })),
    taskSet,
    episodes,
    methods: methodRows,
    pairs,
  };
}

const pct = (x: number) => (100 * x).toFixed(1);

/** Fixed-width columns, the first `left` left-aligned (names) and the rest right-aligned (figures). */
function columns(lines: string[][], left = 1): string {
  const widths = lines[0].map((_, c) => Math.max(...lines.map((l) => (l[c] ?? '').length)));
  return lines
    .map((l) =>
      l
        .map((cell, c) => (c < left ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A level (not a difference) with its interval, in points: "34.8 (30.1 to 39.5)". */
const formatLevel = (i: Interval) => `${pct(i.mean)} (${pct(i.low)} to ${pct(i.high)})`;

/** The comparison as text: pass@k per method and run, then per pair the per-run differences and the across-run interval. */
export function formatRunsComparison(c: RunsComparison): string {
  const n = c.episodes;
  const label = (r: { run: string; seed?: number }) => (r.seed !== undefined ? `${r.run} (seed ${r.seed})` : r.run);
  const out: string[] = [];
  out.push(
    `pass@k in % over ${c.runs.length} run${c.runs.length === 1 ? '' : 's'}, each on the same ${describeTaskSet(c.taskSet)} (task hash ${c.taskSet.hash.slice(0, 12)})`,
  );
  const header = ['method', 'run', ...Array.from({ length: n }, (_, k) => `pass@${k + 1}`)];
  const rows: string[][] = [header];
  for (const m of c.methods) {
    m.perRun.forEach((p, i) => rows.push([m.method, label(c.runs[i]), ...p.map(pct)]));
    if (c.runs.length > 1) rows.push([m.method, 'mean', ...m.mean.map(pct)]);
  }
  out.push(columns(rows, 2));
  if (c.runs.length > 1) {
    const first = c.methods.find((m) => m.passAtN)?.passAtN;
    out.push(
      '',
      `pass@${n} across runs (mean, ${Math.round(100 * (first?.level ?? 0.95))}% t-interval over ${c.runs.length} runs, ${c.runs.length - 1} d.o.f.)`,
    );
    out.push(columns([['method', `pass@${n}`], ...c.methods.map((m) => [m.method, m.passAtN ? formatLevel(m.passAtN) : '-'])]));
  }
  for (const p of c.pairs) {
    out.push('', `${p.a} - ${p.b}, per run (paired bootstrap over each run's tasks, 95% CI):`);
    const lines: string[][] = [['run', `pass@${n} difference`, `gain pass@1->${n} difference`]];
    for (const r of p.perRun) lines.push([label(r), formatInterval(r.comparison.passAtN), formatInterval(r.comparison.gain)]);
    if (p.passAtN && p.gain) {
      lines.push([`across ${p.passAtN.runs} runs (t, ${p.passAtN.df} d.o.f.)`, formatInterval(p.passAtN), formatInterval(p.gain)]);
    }
    out.push(columns(lines));
  }
  if (c.runs.length < 2) out.push('', 'one run: no across-run interval (it needs at least two seeds)');
  return out.join('\n');
}
