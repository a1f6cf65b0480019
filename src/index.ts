// Public API of lamer, for embedding the trainer in Node tools.
export { Tensor, liveTensorCount } from './tensor.js';
export type { DType, DeviceName, TensorOptions, TensorSource, TypedArrayFor } from './tensor.js';
export { LamerError, hasCode } from './errors.js';
export type { ErrorCode } from './errors.js';
export { Rng } from './util/rng.js';

// Environments (SPEC §8): the interface, createEnv/createExpert, and each environment.
export * from './envs/index.js';

// Returns and advantages (SPEC §3, §4) and the row table they read.
export * from './algo/index.js';
