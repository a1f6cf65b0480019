// The warm start's unlikelihood rows (src/train/unlikelihood.ts): the refused response's first token that no
// admissible response continues with, after the tokens some admissible response shares, worked out by hand.
import { describe, expect, it } from 'vitest';
import { unlikelihoodRow } from '../../src/train/unlikelihood.js';

describe('unlikelihood rows', () => {
  it('cut the refused response where it departs from the admissible one that shares most of it', () => {
    const row = unlikelihoodRow([1, 2], [5, 6, 7, 9, 2], [[5, 6, 8, 9, 2], [5, 6, 7, 3, 2], [4]], 0.5);
    expect(row).not.toBeNull();
    expect(Array.from(row!.prompt)).toEqual([1, 2, 5, 6, 7]);
    expect(Array.from(row!.response)).toEqual([9]);
    expect(row!.weight).toBe(-0.5);
  });

  it('take the first token when no admissible response shares it, and the stop token after a shorter move', () => {
    expect(Array.from(unlikelihoodRow([3], [7, 8], [[5, 6]], 1)!.prompt)).toEqual([3]);
    expect(Array.from(unlikelihoodRow([3], [7, 8], [[5, 6]], 1)!.response)).toEqual([7]);
    // `click[mint]` + stop against `click[mint green]` + stop: the stop token after mint is what is refused.
    const row = unlikelihoodRow([3], [10, 11, 2], [[10, 11, 12, 2]], 1)!;
    expect(Array.from(row.prompt)).toEqual([3, 10, 11]);
    expect(Array.from(row.response)).toEqual([2]);
  });

  it('give none for a response an admissible one equals, or with no admissible response at all cut at the start', () => {
    expect(unlikelihoodRow([3], [5, 6, 2], [[5, 6, 2]], 1)).toBeNull();
    expect(Array.from(unlikelihoodRow([3], [5, 6, 2], [], 1)!.response)).toEqual([5]);
  });
});
