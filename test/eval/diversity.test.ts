// Attempts' entropy and repeats of a failed attempt's last action, on transcripts written by hand, against values
// worked out by hand from the definitions in src/eval/diversity.ts.
import { describe, expect, it } from 'vitest';
import { attemptDiversity, formatDiversity, pluginEntropyBits } from '../../src/eval/diversity.js';
import type { TrialTranscript } from '../../src/eval/transcripts.js';

const turn = (action: string) => ({ prompt: 'p', response: `I think.\n<action>${action}</action>`, reward: 0, valid: true });

function trial(attempts: string[][], wonEpisode = -1): TrialTranscript {
  return {
    task: 1,
    wonEpisode,
    episodes: attempts.map((actions, k) => ({ episode: k, won: k === wonEpisode, turns: actions.map(turn) })),
  };
}

describe('attempt diversity', () => {
  it('plug-in entropy in bits: 0 for one sequence, 1 for two equal halves, log2 3 for three distinct', () => {
    expect(pluginEntropyBits(['a', 'a', 'a'])).toBe(0);
    expect(pluginEntropyBits(['a', 'b'])).toBe(1);
    expect(pluginEntropyBits(['a', 'b', 'c'])).toBeCloseTo(Math.log2(3), 12);
    // Two of one, one of another: -(2/3 log2 2/3 + 1/3 log2 1/3) = 0.9183 bits.
    expect(pluginEntropyBits(['a', 'b', 'a'])).toBeCloseTo(0.918295834, 9);
  });

  it('compares whole action sequences, normalised, and counts repeats of the action that ended a failed attempt', () => {
    const transcripts = [
      // Three failed attempts; the second repeats the first one's last action (2, 2), the third does not repeat (3, 3).
      trial([
        ['(1, 1)', '(2, 2)'],
        ['(2, 2)', '(3, 3)'],
        ['(4, 4)', '(1, 1)'],
      ]),
      // The same sequence twice, with different spacing and case, then a win: entropy 0; the second attempt repeats
      // the first one's last action (it is the same sequence).
      trial(
        [
          ['Go To Cabinet 1', 'open  cabinet 1'],
          ['go to cabinet 1', 'open cabinet 1'],
        ],
        1,
      ),
      // One attempt only: no entropy term, no attempt after a failure.
      trial([['up']], 0),
    ];
    const d = attemptDiversity(transcripts);
    expect(d.trials).toBe(2);
    expect(d.meanEntropyBits).toBeCloseTo((Math.log2(3) + 0) / 2, 12);
    expect(d.afterFailure).toBe(3);
    expect(d.repeatedEnd).toBe(2);
    expect(formatDiversity('lamer', d)).toBe(
      "lamer: attempts' entropy 0.792 bits (2 trials); 2 of 3 attempts after a failure repeated its last action (66.7%)",
    );
  });

  it('attempts after a win are not counted as following a failure; no transcripts give zeros', () => {
    expect(attemptDiversity([trial([['a'], ['a']], 0)])).toEqual({ trials: 1, meanEntropyBits: 0, afterFailure: 0, repeatedEnd: 0 });
    expect(attemptDiversity([])).toEqual({ trials: 0, meanEntropyBits: 0, afterFailure: 0, repeatedEnd: 0 });
  });
});
