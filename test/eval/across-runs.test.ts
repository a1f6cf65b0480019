// Across-run statistics against figures computed by hand and printed t tables: the t quantiles, the interval of a
// hand-worked case, the five-seed example, and compareRuns built from per-run paired comparisons.
import { describe, expect, it } from 'vitest';
import { compareRuns, formatRunsComparison, runsInterval, studentTCdf, studentTQuantile, type RunEvaluation } from '../../src/eval/across-runs.js';
import { compareMethods } from '../../src/eval/compare.js';
import { hasCode } from '../../src/errors.js';
import { Rng } from '../../src/util/rng.js';
import type { TaskSet } from '../../src/eval/evaluate.js';
import { createHash } from 'node:crypto';

describe('Student t', () => {
  it('quantiles match a printed t table', () => {
    // Two-sided 95% (p = 0.975) and one-sided 95% (p = 0.95) critical values, three decimals as tables print them.
    const table: Array<[number, number, number]> = [
      [0.975, 1, 12.706],
      [0.975, 2, 4.303],
      [0.975, 3, 3.182],
      [0.975, 4, 2.776],
      [0.975, 5, 2.571],
      [0.975, 9, 2.262],
      [0.975, 10, 2.228],
      [0.975, 30, 2.042],
      [0.95, 4, 2.132],
      [0.95, 1, 6.314],
      [0.995, 4, 4.604],
    ];
    for (const [p, df, t] of table) expect(studentTQuantile(p, df), `t(${p}, ${df})`).toBeCloseTo(t, 3);
    // Many degrees of freedom: the normal's 1.95996.
    expect(studentTQuantile(0.975, 2000)).toBeCloseTo(1.96, 2);
    expect(studentTQuantile(0.025, 4)).toBeCloseTo(-2.776, 3);
  });

  it('the CDF has the closed forms of 1, 2 and 3 degrees of freedom', () => {
    for (const t of [-3, -0.5, 0, 0.7, 2, 10]) {
      expect(studentTCdf(t, 1)).toBeCloseTo(0.5 + Math.atan(t) / Math.PI, 12); // Cauchy
      expect(studentTCdf(t, 2)).toBeCloseTo(0.5 + t / (2 * Math.sqrt(2 + t * t)), 12);
      const u = t / Math.sqrt(3);
      expect(studentTCdf(t, 3)).toBeCloseTo(0.5 + (u / (1 + u * u) + Math.atan(u)) / Math.PI, 12);
    }
  });

  it('refuses degrees of freedom that are not positive integers', () => {
    for (const f of [() => studentTCdf(1, 0), () => studentTCdf(1, 2.5), () => studentTQuantile(1.2, 3)]) {
      try {
        f();
        expect.unreachable();
      } catch (e) {
        expect(hasCode(e, 'E_ARG')).toBe(true);
      }
    }
  });
});

describe('runsInterval', () => {
  it('differences [1, 2, 3, 4, 5]: mean 3, sd 1.5811, t(0.975, 4) = 2.776, interval 3 +- 1.963', () => {
    const i = runsInterval([1, 2, 3, 4, 5]);
    expect(i.mean).toBe(3);
    expect(i.sd).toBeCloseTo(1.5811, 4);
    expect(i.df).toBe(4);
    expect(i.t).toBeCloseTo(2.7764, 4);
    expect(i.high - i.mean).toBeCloseTo(1.9632, 3);
    expect(i.mean - i.low).toBeCloseTo(1.9632, 3);
  });

  it("the issue's five seeds: pass@3 differences +10.2, -0.4, +19.1, -1.6, +3.1 give +6.1 (-4.6 to +16.8)", () => {
    const i = runsInterval([0.102, -0.004, 0.191, -0.016, 0.031]);
    expect(100 * i.mean).toBeCloseTo(6.08, 2);
    expect(100 * i.low).toBeCloseTo(-4.6, 1);
    expect(100 * i.high).toBeCloseTo(16.8, 1);
  });

  it('needs two finite values', () => {
    for (const bad of [[], [1], [1, NaN]]) {
      try {
        runsInterval(bad);
        expect.unreachable();
      } catch (e) {
        expect(hasCode(e, 'E_ARG')).toBe(true);
      }
    }
  });
});

/** The record of a task list (what eval.json holds), with a hash made of `tag`. */
function taskSet(tasks: number, tag = 'tasks'): TaskSet {
  return { split: 'eval', offset: 0, count: tasks, hash: createHash('sha256').update(tag).digest('hex'), by: 'content' };
}

/** A run's eval.json results for methods with given first-win probabilities per attempt. */
function run(name: string, seed: number, probs: Record<string, number[]>, tasks = 120): RunEvaluation {
  const rng = new Rng(seed);
  return {
    run: name,
    seed,
    results: Object.entries(probs).map(([method, p]) => {
      const firstWin = Array.from({ length: tasks }, () => {
        let u = rng.next();
        for (let k = 0; k < p.length; k++) if ((u -= p[k]) < 0) return k;
        return -1;
      });
      const passAtK = [0, 1, 2].map((k) => firstWin.filter((w) => w >= 0 && w <= k).length / tasks);
      return { method, passAtK, tasks, firstWin, taskSet: taskSet(tasks) };
    }),
  };
}

describe('compareRuns', () => {
  const runs = [0, 1, 2, 3].map((s) => run(`r${s}`, s, { lamer: [0.2, 0.15 + 0.02 * s, 0.1], gigpo: [0.25, 0.05, 0.05], random: [0.17, 0.1, 0.07] }));

  it('per run the paired bootstrap of compare.ts; across runs the t-interval of the per-run differences', () => {
    const c = compareRuns(runs, { seed: 4 });
    // Each run resamples with its own seed (the job's compare.json did the same).
    expect(c.pairs.map((p) => [p.a, p.b])).toEqual([
      ['lamer', 'gigpo'],
      ['lamer', 'random'],
    ]);
    const pair = c.pairs[0];
    const direct = runs.map((r) => {
      const [a, b] = [r.results[0], r.results[1]];
      return compareMethods({ method: 'lamer', firstWin: a.firstWin!, taskSet: a.taskSet }, { method: 'gigpo', firstWin: b.firstWin! }, 3, { seed: r.seed });
    });
    pair.perRun.forEach((p, i) => expect(p.comparison).toEqual(direct[i]));
    // The across-run figures from the per-run means, by hand.
    const d = direct.map((x) => x.passAtN.mean);
    const mean = d.reduce((s, x) => s + x, 0) / 4;
    const sd = Math.sqrt(d.reduce((s, x) => s + (x - mean) ** 2, 0) / 3);
    expect(pair.passAtN!.mean).toBeCloseTo(mean, 12);
    expect(pair.passAtN!.high - mean).toBeCloseTo((3.182 * sd) / 2, 3);
    const g = direct.map((x) => x.gain.mean);
    expect(pair.gain!.mean).toBeCloseTo(g.reduce((s, x) => s + x, 0) / 4, 12);
    // Per method: pass@k of each run and their mean.
    const lamer = c.methods[0];
    expect(lamer.perRun).toEqual(runs.map((r) => r.results[0].passAtK));
    expect(lamer.mean[2]).toBeCloseTo(runs.reduce((s, r) => s + r.results[0].passAtK[2], 0) / 4, 12);
    const text = formatRunsComparison(c);
    expect(text).toContain('lamer - gigpo, per run');
    expect(text).toContain('across 4 runs (t, 3 d.o.f.)');
    expect(text).toContain('r0 (seed 0)');
    expect(text).toContain('each on the same held-out tasks 0-119 (development set)');
  });

  it('refuses, naming the runs, to pair runs scored on different task lists or runs that do not record theirs', () => {
    const other = { ...runs[2], results: runs[2].results.map((r) => ({ ...r, taskSet: taskSet(120, 'other tasks') })) };
    const unrecorded = { ...runs[3], results: runs[3].results.map(({ taskSet: _t, ...r }) => r) };
    for (const [bad, named] of [
      [other, /run r2 scored lamer on held-out tasks 0-119 .* run r0 scored lamer/],
      [unrecorded, /run r3 does not record/],
    ] as const) {
      try {
        compareRuns([runs[0], runs[1], bad]);
        expect.unreachable();
      } catch (e) {
        expect(hasCode(e, 'E_TASKS'), String(e)).toBe(true);
        expect((e as Error).message).toMatch(named);
      }
    }
    // Inside one run too: two methods of one eval.json scored on different tasks.
    const mixed = { ...runs[0], results: [runs[0].results[0], { ...runs[0].results[1], taskSet: taskSet(120, 'other tasks') }] };
    expect(() => compareRuns([mixed])).toThrow(/run r0 scored gigpo/);
    // But a variant scored on other tasks on purpose (harder ones) is left out of the comparison, and compared with
    // the methods of its own tasks when it is the first method.
    const hard = { ...runs[0].results[1], method: 'gigpo-hard', variantOf: 'react', taskSet: taskSet(120, 'other tasks') };
    expect(compareRuns([{ ...runs[0], results: [...runs[0].results, hard] }]).methods.map((m) => m.method)).not.toContain('gigpo-hard');
    expect(compareRuns([{ ...runs[0], results: [...runs[0].results, hard] }], { a: 'gigpo-hard' }).methods.map((m) => m.method)).toEqual(['gigpo-hard']);
    // And one paired comparison.
    const [a, b] = [runs[0].results[0], other.results[1]];
    try {
      compareMethods({ method: 'lamer', firstWin: a.firstWin!, taskSet: a.taskSet }, { method: 'gigpo', firstWin: b.firstWin!, taskSet: b.taskSet }, 3);
      expect.unreachable();
    } catch (e) {
      expect(hasCode(e, 'E_TASKS')).toBe(true);
    }
  });

  it('compares a chosen method with the others, keeps only methods every run has, and gives no interval for one run', () => {
    const partial = [...runs.slice(0, 2), { ...runs[2], results: runs[2].results.filter((r) => r.method !== 'random') }];
    const c = compareRuns(partial, { a: 'gigpo' });
    expect(c.methods.map((m) => m.method)).toEqual(['lamer', 'gigpo']);
    expect(c.pairs.map((p) => [p.a, p.b])).toEqual([['gigpo', 'lamer']]);
    const one = compareRuns(runs.slice(0, 1));
    expect(one.pairs[0].passAtN).toBeUndefined();
    expect(formatRunsComparison(one)).toContain('no across-run interval');
    try {
      compareRuns(partial, { a: 'random' });
      expect.unreachable();
    } catch (e) {
      expect(hasCode(e, 'E_ARG')).toBe(true);
    }
  });
});
