// pass@k on outcomes worked out by hand, per task type, and the printed table.

import { describe, expect, it } from 'vitest';
import { hasCode } from '../../src/errors.js';
import { passAtK, scoreAtK } from '../../src/eval/passk.js';
import { formatPassAtKTable } from '../../src/eval/table.js';

describe('passAtK', () => {
  it('is cumulative over episodes, counted by hand', () => {
    // Five tasks, N = 3. First win at episode: 0, 1, never, 2, 0.
    //   pass@1 = 2/5 (tasks 1, 5), pass@2 = 3/5 (+ task 2), pass@3 = 4/5 (+ task 4).
    const outcomes = [
      { won: [true, false, false] },
      { won: [false, true, false] },
      { won: [false, false, false] },
      { won: [false, false, true] },
      { won: [true, false, false] },
    ];
    const r = passAtK(outcomes);
    expect(r.passAtK).toEqual([2 / 5, 3 / 5, 4 / 5]);
    expect(r.tasks).toBe(5);
    expect(r.byType).toEqual({});
  });

  it('reports each task type on its own', () => {
    // cool: first wins at 1 and never -> [0, 1/2, 1/2]; heat: 0, 0, 2 -> [2/3, 2/3, 1]; one untyped task (won at 0).
    const r = passAtK([
      { won: [false, true, false], taskType: 'cool' },
      { won: [false, false, false], taskType: 'cool' },
      { won: [true, false, false], taskType: 'heat' },
      { won: [true, false, false], taskType: 'heat' },
      { won: [false, false, true], taskType: 'heat' },
      { won: [true, false, false] },
    ]);
    expect(r.byType).toEqual({ cool: [0, 1 / 2, 1 / 2], heat: [2 / 3, 2 / 3, 1] });
    expect(r.tasksByType).toEqual({ cool: 2, heat: 3 });
    expect(r.passAtK).toEqual([3 / 6, 4 / 6, 5 / 6]);
  });

  it('counts only the first N episodes when N is given, and rejects an empty set', () => {
    expect(passAtK([{ won: [false, false, true] }, { won: [false, true] }], 2).passAtK).toEqual([0, 1 / 2]);
    try {
      passAtK([]);
      expect.unreachable();
    } catch (e) {
      expect(hasCode(e, 'E_ARG')).toBe(true);
    }
  });
});

describe('scoreAtK', () => {
  it('averages the best score of the first k attempts; a trial won early keeps its winning score', () => {
    // Worked by hand: task 1 0.5 -> 0.5 -> 1 (won at 3); task 2 won at once (1); task 3 0.75, 0.25, 0.
    const trials = [{ episodeScores: [0.5, 0.5, 1] }, { episodeScores: [1] }, { episodeScores: [0.75, 0.25, 0] }];
    expect(scoreAtK(trials, 3)).toEqual([(0.5 + 1 + 0.75) / 3, (0.5 + 1 + 0.75) / 3, (1 + 1 + 0.75) / 3]);
    // An environment that does not score (any null), or no trials: none.
    expect(scoreAtK([{ episodeScores: [0.5, null] }], 2)).toBeNull();
    expect(scoreAtK([], 3)).toBeNull();
  });
});

describe('formatPassAtKTable', () => {
  it('prints pass@k in percent with one decimal, one line per method and per type', () => {
    const text = formatPassAtKTable([
      { method: 'lamer', env: 'minesweeper', tasks: 128, passAtK: [0.441, 0.664, 0.744] },
      { method: 'gigpo', env: 'minesweeper', tasks: 128, passAtK: [0.52, 0.549, 0.551], byType: { cool: [0.5, 0.5, 1] } },
    ]);
    expect(text.split('\n')).toEqual([
      'method  env          tasks  pass@1  pass@2  pass@3',
      'lamer   minesweeper    128    44.1    66.4    74.4',
      'gigpo   minesweeper    128    52.0    54.9    55.1',
      '  cool                        50.0    50.0   100.0',
    ]);
  });

  it('lists task types under an ID and an OOD line when the types are labelled, with their task counts', () => {
    // ID: heat (2 tasks, first wins at 0 and never) and look (1 task, won at 1): pass@k over the 3 ID tasks by hand.
    const text = formatPassAtKTable([
      {
        method: 'random',
        env: 'alfworld',
        tasks: 4,
        passAtK: [0.25, 0.5],
        byType: { heat: [0.5, 0.5], look: [0, 1], cool: [0, 0] },
        tasksByType: { heat: 2, look: 1, cool: 1 },
        typeSplits: { heat: 'ID', look: 'ID', cool: 'OOD' },
        bySplit: { ID: [1 / 3, 2 / 3], OOD: [0, 0] },
      },
    ]);
    expect(text.split('\n')).toEqual([
      'method    env       tasks  pass@1  pass@2',
      'random    alfworld      4    25.0    50.0',
      '  ID                    3    33.3    66.7',
      '    heat                2    50.0    50.0',
      '    look                1     0.0   100.0',
      '  OOD                   1     0.0     0.0',
      '    cool                1     0.0     0.0',
    ]);
  });
});
