// Small builders shared by the algo tests.

import { RowTableBuilder } from '../../src/rollout/rows.js';
import type { RowTable } from '../../src/rollout/rows.js';

/** A row as written in a test: [group, trial, episode, turn, phase, reward, valid, anchor]. */
export type TestRow = [number, number, number, number, 'play' | 'reflect', number, 0 | 1, string];

export function tableOf(rows: TestRow[]): RowTable {
  const builder = new RowTableBuilder();
  for (const [group, trial, episode, turn, phase, reward, valid, anchor] of rows) {
    builder.push({ group, trial, episode, turn, phase, reward, valid, won: 0, anchor });
  }
  return builder.build();
}

/** Asserts two arrays agree element-wise within `tol` (absolute, scaled up for large magnitudes). */
export function maxRelativeGap(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const gap = Math.abs(actual[i] - expected[i]) / Math.max(1, Math.abs(expected[i]));
    if (!(gap <= worst)) worst = Number.isNaN(gap) ? Infinity : gap;
  }
  return worst;
}
