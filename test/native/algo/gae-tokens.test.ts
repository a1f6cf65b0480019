// GAE with batch whitening, expansion of row advantages to tokens, and the similarity ratio, against hand-worked
// numbers (and ratios printed by Python's difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()).

import { describe, expect, it } from 'vitest';
import { computeGae, expandToTokens, similarityRatio } from '../../../src/algo/index.js';
import { addon } from '../../../src/native/addon.js';
import { hasCode } from '../../../src/errors.js';
import { rng } from '../../helpers/index.js';

describe('GAE', () => {
  // Row 0: three tokens, values [0.5, 0.25, 0], reward 1 on the last token. Row 1: one token, value 0.5, reward 2.
  const input = {
    rowReward: Float32Array.from([1, 2]),
    values: Float32Array.from([0.5, 0.25, 0, 0.5]),
    responseLengths: Int32Array.from([3, 1]),
  };

  it('gamma = lambda = 1: advantage = return - value, return = the final reward', () => {
    // deltas: t2 = 1 - 0 = 1; t1 = 0 + 0 - 0.25; t0 = 0 + 0.25 - 0.5. A = [0.5, 0.75, 1]; row 1: 2 - 0.5.
    const out = computeGae({ ...input, whiten: false });
    expect(Array.from(out.advantage)).toEqual([0.5, 0.75, 1, 1.5]);
    expect(Array.from(out.returns)).toEqual([1, 1, 1, 2]);
  });

  it('lambda < 1 decays the trace inside one response only', () => {
    // A2 = 1; A1 = -0.25 + 0.5*1 = 0.25; A0 = -0.25 + 0.5*0.25 = -0.125; row 1 starts afresh: 1.5.
    const out = computeGae({ ...input, lambda: 0.5, whiten: false });
    expect(Array.from(out.advantage)).toEqual([-0.125, 0.25, 1, 1.5]);
    expect(Array.from(out.returns)).toEqual([0.375, 0.5, 1, 2]);
  });

  it('whitens over every token of the batch with the unbiased variance', () => {
    // raw [0.5, 0.75, 1, 1.5]: mean 0.9375; squared deviations sum to 0.546875; var = 0.546875 / 3.
    const out = computeGae(input);
    const std = Math.sqrt(0.546875 / 3 + 1e-8);
    const expected = [0.5, 0.75, 1, 1.5].map((a) => (a - 0.9375) / std);
    for (let k = 0; k < 4; k++) expect(out.advantage[k]).toBeCloseTo(expected[k], 6);
    expect(Array.from(out.returns)).toEqual([1, 1, 1, 2]); // value targets are not whitened
  });

  it('rejects mismatched lengths with E_ROWS', () => {
    expect(() => computeGae({ ...input, values: new Float32Array(3) })).toThrow(/values has 3/);
  });
});

describe('GAE, native (what the trainer runs) against this TypeScript reference', () => {
  it('gives the same advantages and returns on random batches', () => {
    const rand = rng(7);
    for (let trial = 0; trial < 40; trial++) {
      const rows = 1 + Math.floor(rand() * 12);
      // Some rows without tokens, some of one token, most longer.
      const lengths = Int32Array.from({ length: rows }, () => (rand() < 0.15 ? Math.floor(rand() * 2) : 1 + Math.floor(rand() * 30)));
      const total = lengths.reduce((a, b) => a + b, 0);
      const rowReward = Float32Array.from({ length: rows }, () => 4 * rand() - 2);
      const values = Float32Array.from({ length: total }, () => 2 * rand() - 1);
      const gamma = trial % 4 === 0 ? 1 : rand();
      const lambda = trial % 3 === 0 ? 1 : rand();
      const whiten = trial % 5 !== 0;
      const ref = computeGae({ rowReward, values, responseLengths: lengths, gamma, lambda, whiten });
      const out = { advantage: new Float32Array(total), returns: new Float32Array(total) };
      addon().computeGae(lengths, rowReward, values, { gamma, lambda, whiten }, out);
      expect(out.returns).toEqual(ref.returns);
      expect(out.advantage).toEqual(ref.advantage);
    }
  });

  it('rejects mismatched lengths and out-of-range parameters with E_ROWS', () => {
    const lengths = Int32Array.from([2, 1]);
    const reward = Float32Array.from([1, 0]);
    const ok = { advantage: new Float32Array(3), returns: new Float32Array(3) };
    const code = (f: () => void) => {
      try {
        f();
        return 'none';
      } catch (e) {
        return hasCode(e, 'E_ROWS') ? 'E_ROWS' : String(e);
      }
    };
    expect(code(() => addon().computeGae(lengths, reward, new Float32Array(2), { gamma: 1, lambda: 1 }, ok))).toBe('E_ROWS');
    expect(code(() => addon().computeGae(lengths, reward, new Float32Array(3), { gamma: 1.5, lambda: 1 }, ok))).toBe('E_ROWS');
    expect(
      code(() =>
        addon().computeGae(lengths, reward, new Float32Array(3), { gamma: 1, lambda: 1 }, { advantage: new Float32Array(2), returns: new Float32Array(3) }),
      ),
    ).toBe('E_ROWS');
    expect(code(() => addon().computeGae(Int32Array.from([2, -1]), reward, new Float32Array(1), { gamma: 1, lambda: 1 }, ok))).toBe('E_ROWS');
  });
});

describe('expandToTokens', () => {
  it('repeats each row value over its tokens, packed or padded', () => {
    const values = Float32Array.from([1.5, -2]);
    const lengths = Int32Array.from([2, 3]);
    expect(Array.from(expandToTokens(values, lengths))).toEqual([1.5, 1.5, -2, -2, -2]);
    expect(Array.from(expandToTokens(values, lengths, 4))).toEqual([1.5, 1.5, 0, 0, -2, -2, -2, 0]);
    expect(() => expandToTokens(values, lengths, 2)).toThrow(/row 1 has 3 response tokens/);
    expect(() => expandToTokens(values, Int32Array.from([1]))).toThrow(/responseLengths/);
  });
});

describe('similarityRatio', () => {
  it.each([
    ['abcd', 'bcde', 0.75],
    ['tide', 'diet', 0.25],
    ['private Thread currentThread;', 'private volatile Thread currentThread;', 0.8656716417910447],
    ['1: # _ P X _ #\n2: # O _ _ _ #', '1: # _ _ P X #\n2: # O _ _ _ #', 0.9310344827586207],
    ['', '', 1],
    ['abc', '', 0],
    ['abc', 'xyz', 0],
  ])('%j vs %j = %d', (a, b, expected) => {
    expect(similarityRatio(a, b)).toBeCloseTo(expected, 12);
  });
});
