// Public surface of returns and advantages (re-exported by src/index.ts).

export { computeAdvantages } from './advantages.js';
export type { AdvantageResult } from './reference.js';
export { DEFAULT_ADVANTAGE_OPTIONS, resolveAdvantageOptions } from './options.js';
export type { AdvantageOptions, Backend, Estimator, NormMode, ResolvedAdvantageOptions, ReturnsFormula, StepGrouping } from './options.js';
export { computeGae } from './gae.js';
export type { GaeInput, GaeResult } from './gae.js';
export { expandToTokens } from './tokens.js';
export { similarityRatio } from './similarity.js';
export {
  AnchorInterner,
  PHASE_PLAY,
  PHASE_REFLECT,
  REFLECTION_ANCHOR,
  RowTableBuilder,
  internAnchors,
  rowTableFromColumns,
  validateRowColumns,
} from '../rollout/rows.js';
export type { Phase, Row, RowColumns, RowTable } from '../rollout/rows.js';
