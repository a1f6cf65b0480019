// The native backend of computeAdvantages. Placeholder until the addon bridge (src/native) is ready.

import { LamerError } from '../errors.js';
import type { RowColumns } from '../rollout/rows.js';
import type { ResolvedAdvantageOptions } from './options.js';
import type { AdvantageResult } from './reference.js';

export function nativeAdvantages(
  _columns: Omit<RowColumns, 'anchor'>,
  _stepKey: Int32Array,
  _options: ResolvedAdvantageOptions,
): AdvantageResult {
  throw new LamerError('E_NATIVE', "the native advantage kernel is not built yet; pass backend: 'reference'");
}
