// Public API of the rollout: the policy boundary, one LaMer trial, the batch runner, scripted policies and the chance players. The row
// table (rows.ts) is already public through src/algo/index.ts, so it is not exported twice.
export { EVAL_SAMPLING, TRAIN_SAMPLING, policyForTrial } from './policy.js';
export type { FinishReason, GenerateRequest, GenerateResult, PolicyClient, PolicySource, SamplingOptions, TrialPolicyFactory, TrialView } from './policy.js';
export { NO_ACTION, resolveTrialConfig, runTrial } from './trial.js';
export { abortable } from '../util/abort.js';
export { deriveSeed } from '../util/seed.js';
export type { ResolvedTrialConfig, TrialConfig, TrialInput, TrialResult, TrialRow } from './trial.js';
export { runRollout } from './runner.js';
export type { EnvFactory, RolloutBatch, RolloutOptions, RolloutProgress, RolloutStats, TrialSummary } from './runner.js';
export { ScriptedPolicy, SimulatedBatchEngine, charCodeIds, scriptedPolicy, scriptedResult, simulateBatchedEngine, withExpertReflections } from './scripted.js';
export type { BatchedEngineOptions, BatchedEngineStats, ScriptedPolicyOptions } from './scripted.js';
export { NO_ADMISSIBLE_ACTION, RandomPolicy, randomPolicy } from './random.js';
export type { RandomPolicyOptions } from './random.js';
