// The native kernel's own checks of the row table: the bad tables of test/algo/bad-rows.ts rejected with E_ROWS
// naming the column or row, as the TS validation rejects them in test/algo/rows.test.ts.

import { describe, expect, it } from 'vitest';
import { computeAdvantages } from '../../../src/algo/index.js';
import { LamerError } from '../../../src/errors.js';
import { badRowCases, thrown, withColumns } from '../../algo/bad-rows.js';

describe('bad rows', () => {
  badRowCases('native');

  it('errors are LamerErrors on the TS side and coded Errors from native', () => {
    const reward = Float32Array.from([0, 1, 0, NaN, 0]);
    expect(thrown(() => computeAdvantages(withColumns({ reward }), { backend: 'reference' }))).toBeInstanceOf(LamerError);
    const native = thrown(() => computeAdvantages(withColumns({ reward }), { backend: 'native' }));
    expect(native.code).toBe('E_ROWS');
    expect(native.message).toContain('NaN');
  });
});
