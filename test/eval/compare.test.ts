// The paired comparison of two methods on the same tasks: its means are exactly the pass@k differences, and its
// bootstrap interval agrees with the normal approximation of the paired differences.
import { describe, expect, it } from 'vitest';
import { compareMethods, formatComparison } from '../../src/eval/compare.js';
import { passAtK } from '../../src/eval/passk.js';
import { hasCode } from '../../src/errors.js';
import { Rng } from '../../src/util/rng.js';

const outcomes = (firstWin: number[], n: number) => firstWin.map((w) => ({ won: Array.from({ length: n }, (_, k) => k === w) }));

function draw(rng: Rng, tasks: number, probs: number[]): number[] {
  // probs[k]: probability that the first win is attempt k; the rest never win.
  return Array.from({ length: tasks }, () => {
    let u = rng.next();
    for (let k = 0; k < probs.length; k++) if ((u -= probs[k]) < 0) return k;
    return -1;
  });
}

describe('compareMethods', () => {
  it('means equal the pass@N and gain differences computed by passAtK', () => {
    const rng = new Rng(3);
    const a = draw(rng, 300, [0.2, 0.1, 0.08]);
    const b = draw(rng, 300, [0.2, 0.06, 0.03]);
    const c = compareMethods({ method: 'lamer', firstWin: a }, { method: 'gigpo', firstWin: b }, 3);
    const pa = passAtK(outcomes(a, 3), 3).passAtK;
    const pb = passAtK(outcomes(b, 3), 3).passAtK;
    expect(c.passAtN.mean).toBeCloseTo(pa[2] - pb[2], 12);
    expect(c.gain.mean).toBeCloseTo(pa[2] - pa[0] - (pb[2] - pb[0]), 12);
    expect(c.passAtN.low).toBeLessThan(c.passAtN.mean);
    expect(c.passAtN.high).toBeGreaterThan(c.passAtN.mean);
  });

  it('the 95% interval matches mean +- 1.96 standard errors of the paired differences', () => {
    const rng = new Rng(11);
    const a = draw(rng, 400, [0.25, 0.1, 0.05]);
    const b = draw(rng, 400, [0.25, 0.05, 0.05]);
    const c = compareMethods({ method: 'a', firstWin: a }, { method: 'b', firstWin: b }, 3, { resamples: 4000, seed: 5 });
    const d = a.map((w, i) => (w >= 0 ? 1 : 0) - (b[i] >= 0 ? 1 : 0));
    const mean = d.reduce((s, x) => s + x, 0) / d.length;
    const sd = Math.sqrt(d.reduce((s, x) => s + (x - mean) ** 2, 0) / (d.length - 1));
    const half = (1.96 * sd) / Math.sqrt(d.length);
    expect(Math.abs(c.passAtN.high - c.passAtN.low - 2 * half)).toBeLessThan(0.2 * 2 * half);
  });

  it('identical outcomes give a zero-width interval at 0; a method that wins every task where the other never wins, at +100', () => {
    const a = [0, 1, -1, 2, 0];
    const same = compareMethods({ method: 'a', firstWin: a }, { method: 'b', firstWin: a }, 3);
    expect([same.passAtN.mean, same.passAtN.low, same.passAtN.high, same.gain.low, same.gain.high]).toEqual([0, 0, 0, 0, 0]);
    const all = compareMethods({ method: 'a', firstWin: [1, 1, 1] }, { method: 'b', firstWin: [-1, -1, -1] }, 3);
    expect([all.passAtN.low, all.passAtN.high, all.gain.mean]).toEqual([1, 1, 1]);
    expect(formatComparison(all)).toContain('a - b pass@3: +100.0 points (95% CI +100.0 to +100.0)');
  });

  it('is reproducible for a seed and rejects mismatched or malformed outcomes with E_ARG', () => {
    const rng = new Rng(1);
    const a = draw(rng, 50, [0.3, 0.2]);
    const b = draw(rng, 50, [0.3, 0.1]);
    expect(compareMethods({ method: 'a', firstWin: a }, { method: 'b', firstWin: b }, 2, { seed: 9 })).toEqual(
      compareMethods({ method: 'a', firstWin: a }, { method: 'b', firstWin: b }, 2, { seed: 9 }),
    );
    expect(() => compareMethods({ method: 'a', firstWin: a }, { method: 'b', firstWin: b.slice(1) }, 2)).toThrow(/same non-empty task list/);
    expect(() => compareMethods({ method: 'a', firstWin: [0, 3] }, { method: 'b', firstWin: [0, 0] }, 2)).toThrow(/first won attempt/);
    let error: unknown;
    try {
      compareMethods({ method: 'a', firstWin: [] }, { method: 'b', firstWin: [] }, 2);
    } catch (e) {
      error = e;
    }
    expect(hasCode(error, 'E_ARG')).toBe(true);
  });
});
