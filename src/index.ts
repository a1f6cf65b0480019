// Public API of lamer, for embedding the trainer in Node tools.
export { Tensor, liveTensorCount } from './tensor.js';
export type { DType, DeviceName, TensorOptions, TensorSource, TypedArrayFor } from './tensor.js';
export { LamerError, hasCode } from './errors.js';
export type { ErrorCode } from './errors.js';
export { Rng } from './util/rng.js';

// The policy model: Hugging Face Qwen3 / Qwen2 / Llama checkpoints in the native addon, tokenizer, chat template.
export * from './model/index.js';

// The generation engine: KV cache, seeded sampling, continuous batching across concurrent generate() calls.
export { Engine, EngineClient } from './engine/index.js';
export type { EngineOptions, EngineRequest, EngineResult, EngineStats, EngineClientOptions } from './engine/index.js';

// Environments (SPEC §8): the interface, createEnv/createExpert, and each environment.
export * from './envs/index.js';

// Returns and advantages (SPEC §3, §4) and the row table they read.
export * from './algo/index.js';

// Rollouts: the policy boundary, LaMer trials (reflection, memory, restart), the concurrent batch runner.
export * from './rollout/index.js';
export * from './agent/index.js';

// Evaluation: pass@k on held-out tasks and the prompting baselines' trial modes.
export * from './eval/index.js';

// Trainer: configuration, the loop, the native runtime, jobs, checkpoints and events.
export { Trainer, rolloutSummary } from './train/trainer.js';
export type { TrainerOptions, RunOptions } from './train/trainer.js';
export { createNativeRuntime } from './train/native-runtime.js';
export type { PolicyRuntime, UpdateBatch, UpdateMetrics, SupervisedBatch } from './train/runtime.js';
export { runJob } from './train/job.js';
export type { JobOptions, JobResult, EvalSummary } from './train/job.js';
export { configSchema, loadConfig, validateConfig, applyOverrides, mergeConfig } from './train/config.js';
export type { TrainerConfig, TrainerConfigInput } from './train/config.js';
export type { TrainerEvent, IterationEvent, EvalEvent, CheckpointEvent, LogEvent, TimeBreakdown } from './train/events.js';
export { EventFileWriter, RunEventWriter, eventScalars, writeRunEvents } from './train/tensorboard.js';
export type { Scalar } from './train/tensorboard.js';
export { logprobAgreement } from './train/agreement.js';
export { serve } from './serve/server.js';
export type { LamerServer, ServeOptions } from './serve/server.js';
export type { LogprobAgreement } from './train/agreement.js';
// Data parallelism on c10d process groups (torchrun's variables, or `lamer train --nproc`).
export { DistContext, distSettingsFromEnv, DEFAULT_DIST_TIMEOUT_MS } from './train/distributed.js';
export type { DistSettings } from './train/distributed.js';

// The train step (SPEC §5): AdamW state, PPO/GRPO policy loss, supervised warm-start steps.
export { Optimizer, optimizerOptionsFromConfig, stepOptionsFromConfig } from './train/optimizer.js';
export { lrAt } from './train/schedule.js';
export type { Aggregation, KlType, LossAndGrad, LrSchedule, OptimizerOptions, PolicyLossOptions, StepOptions, TrainMetrics } from './train/optimizer.js';
export type { SftRow, TrainRow } from './train/batch.js';
