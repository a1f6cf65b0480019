// What the trainer needs from a model: sampling (the engine, behind PolicyClient), the policy update, the
// supervised warm-start step, and saving/loading of weights and optimizer state. The trainer loop depends on this
// interface only, so it is tested with a light stand-in and runs unchanged over the native policy.
import type { MoveContrast, PolicySource } from '../rollout/policy.js';
import type { TrainerConfig } from './config.js';
import type { LogprobAgreement } from './agreement.js';

/** Rows of one rollout, ready for the policy update. */
export interface UpdateBatch {
  promptIds: Int32Array[];
  responseIds: Int32Array[];
  /** Per-row advantage (the same for every response token of the row). */
  advantages: Float32Array;
  /** Sampling log-probs per response token (old log-probs). */
  oldLogprobs: Float32Array[];
  /** Per-row cross-episode return G (SPEC §3): PPO's critic learns it and GAE spreads it over the response. */
  rowReturns?: Float32Array;
  /**
   * Per-row group (task) id, rows in ascending group order. Data-parallel ranks place their rows in the iteration's
   * global row order by it, so that mini-batches are the ones one process would form.
   */
  groups?: Int32Array;
}

export interface UpdateMetrics {
  loss: number;
  clipFraction: number;
  approxKl: number;
  entropy: number;
  gradNorm: number;
  /** Learning rate of the last step taken (absent when none was). */
  lr?: number;
  /** Optimizer steps taken (one per mini-batch); 0 when every step was skipped. */
  steps: number;
  /** Mini-batches whose loss or gradient was not finite, so their step was skipped. */
  skipped: number;
  tokens: number;
  /** Tokens the update's forwards computed on this rank: padding included, a prefix shared by rows once
   * (train.sharePrefix). Absent where the runtime does not count them. */
  computedTokens?: number;
  /** Bytes this rank holds for training after the update (the native optimizer's count). */
  memory?: TrainingMemory;
  /** The first step's log-probs of its rows' sampled tokens (before any update) against the engine's. */
  agreement?: LogprobAgreement;
}

/** The engine's cumulative counts: prompt tokens taken from its prefix cache and computed, and its decode steps, the
 * rows they decoded, the rows they could have decoded (min(slots, requests waiting or live)) and its slots. */
export interface EngineCounts {
  reused: number;
  prefilled: number;
  decodeSteps?: number;
  rowSteps?: number;
  demandSteps?: number;
  slots?: number;
}

/** Bytes one rank holds for training: every parameter, the gradients at the last update, AdamW's state. */
export interface TrainingMemory {
  parameters: number;
  gradients: number;
  optimizerState: number;
}

/** Demonstrations for supervised cross-entropy on the response tokens only; the runtime applies the chat template. */
export interface SupervisedBatch {
  /** Prompt texts (the user message). */
  prompts: string[];
  /** Response texts to imitate. */
  responses: string[];
  /**
   * Per row, refused and admissible responses at its state, or null: with sft.unlikelihood > 0 each refused one adds
   * an unlikelihood row (src/train/unlikelihood.ts).
   */
  contrast?: (MoveContrast | null)[];
  /**
   * States without a move to imitate, each with refused and admissible responses: only unlikelihood rows
   * (sft.mistakeTrials: the model's own refused moves).
   */
  negatives?: { prompt: string; contrast: MoveContrast }[];
}

export interface PolicyRuntime {
  /** The device the policy runs on and why, for the run's first log line. */
  describe?(): string;
  /** Sampling over the current weights: one client the engine batches, or a per-trial factory. */
  client(): PolicySource;
  /**
   * Drops state carried from one phase to the next that could change results at the floating-point level (the
   * engine's prefix cache). Called at the start of every rollout and evaluation.
   */
  resetCaches?(): void;
  /** The engine's cumulative counts (EngineCounts; absent without an engine): the prefix cache's reuse and the decode
   * steps' occupancy between two readings. */
  engineCounts?(): EngineCounts;
  /** The CUDA caching allocator's bytes where the policy runs on CUDA (absent or null elsewhere). */
  cudaMemory?(): { allocated: number; reserved: number; peakAllocated: number } | null;
  /** One epoch over the batch in mini-batches of `config.optim.miniBatchRows`, one optimizer step each. */
  update(batch: UpdateBatch, config: TrainerConfig): Promise<UpdateMetrics>;
  /** One supervised step; returns the mean token cross-entropy before the step. */
  supervised(batch: SupervisedBatch, config: TrainerConfig): Promise<{ loss: number; tokens: number }>;
  /** Data parallel: every rank's weights become rank 0's (before the first iteration of a run that does not resume). */
  broadcast?(): Promise<void>;
  /** Writes weights (Hugging Face layout) and optimizer state into `dir`. */
  save(dir: string): Promise<void>;
  /**
   * Data parallel, on every rank but 0 while rank 0 runs save(): its part of a collective save (ZeRO: this rank's
   * shard of the optimizer state goes to rank 0, which writes it).
   */
  saveFromRank?(): Promise<void>;
  /** Reads what save() wrote. */
  restore(dir: string): Promise<void>;
  /**
   * The warm start's state for resuming it (sft.checkpointEvery): the weights and the warm start's optimizer state
   * into `dir`. Data parallel: every rank calls it, rank 0 with the folder and the others with null.
   */
  saveSupervised?(dir: string | null): Promise<void>;
  /** Reads what saveSupervised() wrote: the weights and the warm start's optimizer state. */
  restoreSupervised?(dir: string): Promise<void>;
  dispose(): Promise<void>;
}
