// The engine/trainer agreement of a step's rows against the definitions computed plainly, token by token.
import { describe, expect, it } from 'vitest';
import { logprobAgreement } from '../../src/train/agreement.js';

describe('logprobAgreement', () => {
  it('takes the selected rows in order and gives mean and max |difference| and the k3 KL estimate', () => {
    const engine = [Float32Array.from([-1, -2]), Float32Array.from([-0.5]), Float32Array.from([-3, -0.1, -0.2])];
    const rows = [0, 2, 1]; // batch row of each staged row
    const selected = [1, 0]; // staged rows 1 (batch row 2) then 0 (batch row 0)
    const trainer = Float32Array.from([-3.1, -0.1, -0.25, -1.2, -1.9]);
    const old = [...engine[2], ...engine[0]]; // the float32 values, in the step's row order
    const d = old.map((o, i) => trainer[i] - o);
    const a = logprobAgreement(selected, rows, engine, trainer);
    expect(a.tokens).toBe(5);
    expect(a.meanAbs).toBeCloseTo(d.reduce((s, x) => s + Math.abs(x), 0) / 5, 12);
    expect(a.maxAbs).toBeCloseTo(Math.max(...d.map(Math.abs)), 12);
    // KL(engine || trainer) estimated from engine samples: mean of r - 1 - log r, r = p_trainer / p_engine.
    expect(a.k3).toBeCloseTo(d.reduce((s, x) => s + (Math.exp(x) - 1 - x), 0) / 5, 12);
    expect(logprobAgreement([0], rows, engine, Float32Array.from([-1, -2])).k3).toBe(0);
    expect(() => logprobAgreement([0], rows, engine, Float32Array.from([-1]))).toThrow(/1 trainer log-probs for 2/);
  });
});
