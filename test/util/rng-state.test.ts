// The seeded generator's state, saved and restored (a resumed warm start's shuffles): the restored generator draws
// what the original would have drawn next; a state that is not four 32-bit words, or all zero, is refused.
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/util/rng.js';
import { hasCode } from '../../src/errors.js';

describe('Rng.state and Rng.fromState', () => {
  it('continue the same stream, through JSON', () => {
    const a = new Rng(12345);
    for (let i = 0; i < 37; i++) a.nextU32();
    const b = Rng.fromState(JSON.parse(JSON.stringify(a.state())) as number[]);
    const xs = Array.from({ length: 100 }, () => a.nextU32());
    expect(Array.from({ length: 100 }, () => b.nextU32())).toEqual(xs);
    expect(new Set(xs).size).toBeGreaterThan(95);
    const order = Array.from({ length: 50 }, (_, i) => i);
    expect(Rng.fromState(b.state()).shuffle([...order])).toEqual(b.shuffle([...order]));
  });

  it('refuse a state that is not four 32-bit unsigned words, or all zero', () => {
    for (const bad of [
      [1, 2, 3],
      [1, 2, 3, 2 ** 32],
      [1, 2, 3, -1],
      [1, 2, 3, 0.5],
      [0, 0, 0, 0],
    ]) {
      let err: unknown;
      try {
        Rng.fromState(bad);
      } catch (e) {
        err = e;
      }
      expect(hasCode(err, 'E_ARG'), JSON.stringify(bad)).toBe(true);
    }
  });
});
