// Types of the train concern's raw addon exports (native/train/binding.cpp). Only src/train/ uses them.
import { addon } from '../native/addon.js';
import type { NativeTensor } from '../native/types.js';
import type { NativeModel } from '../model/native.js';

/** Rows flattened for the addon: row r is ids[sum(lengths[..r]) ..][..lengths[r]]; its first starts[r] ids are the
 * prompt. Per-token columns hold one value per response token, rows concatenated. */
export interface NativeTrainBatch {
  ids: Int32Array;
  lengths: Int32Array;
  starts: Int32Array;
  advantages?: Float32Array;
  oldLogprobs?: Float32Array;
  refLogprobs?: Float32Array;
  returns?: Float32Array;
  oldValues?: Float32Array;
}

export interface NativeStepOptions {
  objective?: 'policy' | 'sft';
  clipLow?: number;
  clipHigh?: number;
  dualClip?: number;
  aggregation?: string;
  entropyCoef?: number;
  klType?: string;
  klCoef?: number;
  valueClip?: number;
  valueCoef?: number;
  temperature?: number;
  microBatchTokens?: number;
  maxGradNorm?: number;
  lr?: number;
  update?: boolean;
  withGrad?: boolean;
  returnGrads?: boolean;
  chunked?: boolean;
  chunkBytes?: number;
  gradientCheckpointing?: boolean;
}

export interface NativeStepResult {
  metrics: Record<string, number>;
  /** The training forward's log-prob of every response token, rows concatenated. */
  logprobs: Float32Array;
  grads?: Record<string, NativeTensor>;
}

export interface NativeTrainer {
  readonly stepCount: number;
  readonly hasValueHead: boolean;
  step(batch: NativeTrainBatch, options: NativeStepOptions): Promise<NativeStepResult>;
  values(batch: NativeTrainBatch, microBatchTokens: number): Promise<Float32Array>;
  save(path: string, metadata: Record<string, string>): Promise<void>;
  load(path: string): Promise<void>;
  dispose(): void;
}

export interface NativeTrainerOptions {
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  valueHead: boolean;
}

interface TrainNative {
  NativeTrainer: new (model: NativeModel, options: NativeTrainerOptions) => NativeTrainer;
}

export function trainNative(): TrainNative {
  return addon() as unknown as TrainNative;
}
