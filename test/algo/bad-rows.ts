// Bad row tables rejected with E_ROWS naming the column or row, for one backend: test/algo/rows.test.ts runs the cases
// on the TS validation (reference backend), test/native/algo/rows.test.ts on the native kernel's own checks.

import { describe, expect, it } from 'vitest';
import { computeAdvantages } from '../../src/algo/index.js';
import type { AdvantageOptions } from '../../src/algo/index.js';
import { RowTableBuilder } from '../../src/rollout/rows.js';
import type { RowTable } from '../../src/rollout/rows.js';
import { tableOf } from './helpers.js';

/** The error `fn` throws; fails the test when it throws none. */
export function thrown(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('expected an error, none was thrown');
}

export function expectRowsError(fn: () => unknown, ...mentions: string[]): void {
  const e = thrown(fn);
  expect(e).toBeInstanceOf(Error);
  expect(e.code, e.message).toBe('E_ROWS');
  for (const m of mentions) expect(e.message).toContain(m);
}

// Two trials of group 0: trial 0 has two episodes with a reflection between them, trial 1 one episode.
export const good = (): RowTable =>
  tableOf([
    [0, 0, 0, 0, 'play', 0, 1, 'a'],
    [0, 0, 0, 1, 'play', 1, 1, 'b'],
    [0, 0, 1, 0, 'reflect', 0, 1, 'reflection'],
    [0, 0, 1, 0, 'play', 1, 1, 'a'],
    [0, 1, 0, 0, 'play', 0, 1, 'a'],
  ]);

/** A copy of the good table with some columns replaced, bypassing the builder's checks. */
export function withColumns(patch: Partial<Record<keyof RowTable, unknown>>): RowTable {
  return { ...good(), ...patch } as RowTable;
}

/** The bad-table cases on one backend. */
export function badRowCases(backend: 'reference' | 'native'): void {
  const run = (table: RowTable, options: AdvantageOptions = {}) => computeAdvantages(table, { backend, ...options });
  describe(backend, () => {
    it('accepts the good table, and an empty one', () => {
      expect(run(good()).advantage.length).toBe(5);
      const empty = run(new RowTableBuilder().build());
      expect([empty.episodeReward.length, empty.stepReturn.length, empty.advantage.length]).toEqual([0, 0, 0]);
    });
    it('columns of different lengths', () => {
      const t = good();
      expectRowsError(() => run(withColumns({ reward: t.reward.subarray(0, 4) })), "'reward'");
      expectRowsError(() => run(withColumns({ turn: new Int32Array(6) })), "'turn'");
    });
    it('an episode index going backwards inside a trial', () => {
      const episode = Int32Array.from([0, 0, 1, 0, 0]);
      expectRowsError(() => run(withColumns({ episode })), "'episode'", 'row 3', 'backwards');
    });
    it('non-finite rewards', () => {
      for (const bad of [NaN, Infinity, -Infinity]) {
        const reward = Float32Array.from([0, 1, 0, bad, 0]);
        expectRowsError(() => run(withColumns({ reward })), "'reward'", 'row 3');
      }
    });
    it('a reward on a reflect row', () => {
      expectRowsError(() => run(withColumns({ reward: Float32Array.from([0, 1, 2, 1, 0]) })), "'reward'", 'row 2');
    });
    it('bad phase and valid values', () => {
      expectRowsError(() => run(withColumns({ phase: Uint8Array.from([0, 0, 2, 0, 0]) })), "'phase'", 'row 2');
      expectRowsError(() => run(withColumns({ valid: Uint8Array.from([1, 1, 1, 7, 1]) })), "'valid'", 'row 3');
    });
    it("a trial's rows not contiguous", () => {
      // trial 0, trial 1, then trial 0 again
      const trial = Int32Array.from([0, 0, 1, 0, 0]);
      const phase = new Uint8Array(5);
      const episode = new Int32Array(5);
      const turn = Int32Array.from([0, 1, 0, 2, 3]);
      expectRowsError(() => run(withColumns({ trial, phase, episode, turn })), "'trial'", 'row 3', 'contiguous');
    });
    it('turns not increasing inside an episode, and a reflection inside an episode', () => {
      expectRowsError(() => run(withColumns({ turn: Int32Array.from([0, 0, 0, 0, 0]) })), "'turn'", 'row 1');
      const episode = Int32Array.from([0, 0, 0, 0, 0]);
      const turn = Int32Array.from([0, 1, 0, 2, 0]);
      expectRowsError(() => run(withColumns({ episode, turn })), "'phase'", 'row 3');
    });
    it('unknown options and bad option values name the option', () => {
      expectRowsError(() => run(good(), { gamma_step: 0.9 } as never), "'gamma_step'");
      expectRowsError(() => run(good(), { gammaStep: 1.5 }), "'gammaStep'");
      expectRowsError(() => run(good(), { gammaTraj: NaN }), "'gammaTraj'");
      expectRowsError(() => run(good(), { mode: 'zscore' as never }), "'mode'");
      expectRowsError(() => run(good(), { estimator: 'ppo' as never }), "'estimator'");
      expectRowsError(() => run(good(), { eps: 0 }), "'eps'");
      expectRowsError(() => run(good(), { invalidPenalty: -1 }), "'invalidPenalty'");
      expectRowsError(() => run(good(), { normByStd: 'yes' as never }), "'normByStd'");
    });
  });
}
