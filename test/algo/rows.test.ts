// The row table: interning by exact text, and bad input rejected with E_ROWS naming the column or row by the TS
// validation (reference backend); the native kernel's own checks meet the same cases in test/native/algo/rows.test.ts.

import { describe, expect, it } from 'vitest';
import { computeAdvantages } from '../../src/algo/index.js';
import { RowTableBuilder, internAnchors, rowTableFromColumns } from '../../src/rollout/rows.js';
import { badRowCases, expectRowsError, good } from './bad-rows.js';

describe('interning', () => {
  it('gives equal strings one id and different strings different ids, in order of first appearance', () => {
    const { anchorId, anchors } = internAnchors(['x', 'y', 'x', 'x ', 'X', 'y']);
    expect(Array.from(anchorId)).toEqual([0, 1, 0, 2, 3, 1]);
    expect(anchors).toEqual(['x', 'y', 'x ', 'X']);
  });
  it('the builder and rowTableFromColumns agree', () => {
    const built = good();
    const fromColumns = rowTableFromColumns({ ...built });
    expect(Array.from(fromColumns.anchorId)).toEqual(Array.from(built.anchorId));
    expect(built.anchors).toEqual(['a', 'b', 'reflection']);
  });
  it('the builder grows past its initial capacity and keeps every row', () => {
    const b = new RowTableBuilder();
    for (let i = 0; i < 1000; i++) {
      b.push({ group: 0, trial: i, episode: 0, turn: 0, phase: 'play', reward: i, valid: true, won: false, anchor: `s${i % 7}` });
    }
    const t = b.build();
    expect(t.length).toBe(1000);
    expect(t.reward[999]).toBe(999);
    expect(t.anchors.length).toBe(7);
  });
});

describe('bad rows', () => {
  it('the builder rejects bad values as they are pushed', () => {
    const row = { group: 0, trial: 0, episode: 0, turn: 0, phase: 'play' as const, reward: 0, valid: 1, won: 0, anchor: 'a' };
    expectRowsError(() => new RowTableBuilder().push({ ...row, phase: 'think' as never }), "'phase'", 'row 0');
    expectRowsError(() => new RowTableBuilder().push({ ...row, reward: NaN }), "'reward'");
    expectRowsError(() => new RowTableBuilder().push({ ...row, group: 1.5 }), "'group'");
    expectRowsError(() => new RowTableBuilder().push({ ...row, valid: 2 }), "'valid'");
    expectRowsError(() => new RowTableBuilder().push({ ...row, anchor: 3 as never }), "'anchor'");
  });

  it('rowTableFromColumns rejects columns of different lengths', () => {
    const t = good();
    expectRowsError(() => rowTableFromColumns({ ...t, reward: t.reward.subarray(1) }), "'reward'", '4 rows', '5');
    expectRowsError(() => rowTableFromColumns({ ...t, anchor: t.anchor.slice(1) }), "'anchor'");
  });

  badRowCases('reference');

  it('an unknown backend is named', () => {
    expectRowsError(() => computeAdvantages(good(), { backend: 'gpu' as never }), "'backend'");
  });
});
