// Public API of lamer, for embedding the trainer in Node tools.
export { Tensor, liveTensorCount } from './tensor.js';
export type { DType, DeviceName, TypedArrayFor } from './tensor.js';
export { LamerError } from './errors.js';
export type { ErrorCode } from './errors.js';
