// computeAdvantages: the one entry point for returns and advantages of a rollout. The native backend (default) runs
// the C++ kernel over the table's typed arrays; the reference backend runs the TS code the tests trust.

import { LamerError } from '../errors.js';
import type { RowTable } from '../rollout/rows.js';
import { validateRowColumns } from '../rollout/rows.js';
import type { AdvantageOptions, ResolvedAdvantageOptions } from './options.js';
import { resolveAdvantageOptions } from './options.js';
import type { AdvantageResult } from './reference.js';
import { referenceAdvantages } from './reference.js';
import { similarityClusters } from './similarity.js';
import { nativeAdvantages } from './native.js';

/**
 * Per-row `episodeReward` (undiscounted reward of the row's episode), `stepReturn` (G, SPEC §3) and `advantage`
 * (SPEC §4; the same value for every response token of the row) of a rollout. Throws `E_ROWS` naming the column and
 * row of a malformed table, or the option that is unknown or out of range; `E_NATIVE` when the default native backend
 * is asked for and the addon is not built (`npm run setup`, or pass `backend: 'reference'`).
 */
export function computeAdvantages(table: RowTable, options: AdvantageOptions = {}): AdvantageResult {
  const resolved = resolveAdvantageOptions(options);
  if (table === null || typeof table !== 'object' || !(table.group instanceof Int32Array)) {
    throw new LamerError('E_ROWS', 'computeAdvantages: expected a RowTable (see RowTableBuilder / rowTableFromColumns)');
  }
  if (resolved.backend === 'reference') {
    validateRowColumns(table);
    const clusters = stepClusters(table, resolved);
    return referenceAdvantages(table, resolved, clusters);
  }
  // The kernel validates the rows itself (same checks, same messages), so the table is not walked twice here; only
  // the anchor ids, which the kernel can't relate to the strings, are checked for length.
  if (!(table.anchorId instanceof Int32Array) || table.anchorId.length !== table.group.length) {
    throw new LamerError(
      'E_ROWS',
      `row table: column 'anchorId' has ${table.anchorId?.length ?? 'no'} rows but column 'group' has ` +
        `${table.group.length}; build tables with RowTableBuilder or rowTableFromColumns`,
    );
  }
  if (resolved.stepGrouping === 'similarity' && table.anchor?.length !== table.group.length) {
    validateRowColumns(table); // names the anchor column's problem
  }
  const clusters = stepClusters(table, resolved);
  return nativeAdvantages({ ...table, stepKey: clusters ?? table.anchorId }, resolved);
}

function stepClusters(table: RowTable, options: ResolvedAdvantageOptions): Int32Array | undefined {
  if (options.estimator !== 'gigpo' || options.stepGrouping !== 'similarity') return undefined;
  return similarityClusters(table.group, table.anchor, options.similarityThreshold);
}
