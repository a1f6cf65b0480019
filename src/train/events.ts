// The typed events a training run produces. `Trainer.run()` yields them; the run folder's metrics.jsonl holds one
// per line; `lamer report` draws them.
import type { TrainingMemory } from './runtime.js';
import type { ReflectionChecks, TurnCounts, TaskSet } from '../eval/evaluate.js';
import type { AttemptDiversity } from '../eval/diversity.js';

export interface IterationEvent {
  type: 'iteration';
  method: string;
  iteration: number;
  /** Processes that played and trained this iteration together (1 without data parallelism). */
  worldSize: number;
  /** Mean undiscounted episode reward of the iteration's rollouts. */
  reward: number;
  /** Share of trials won in any episode (training pass@N). */
  successRate: number;
  /** Share of rows whose response parsed into a valid action or reflection. */
  validRatio: number;
  entropy: number;
  loss: number;
  clipFraction: number;
  approxKl: number;
  gradNorm: number;
  /** Learning rate of the iteration's last optimizer step (absent when no step was taken). */
  lr?: number;
  /** Rows (model calls) and response tokens of the iteration. */
  rows: number;
  tokens: number;
  /** Prompt tokens of the rows: the update runs the model over promptTokens + tokens. */
  promptTokens: number;
  /**
   * Tokens the update's forwards computed (rank 0's): padding included, and a prefix that rows share computed once
   * (train.sharePrefix), so well below promptTokens + tokens when sharing pays. Absent from runtimes that do not count.
   */
  updateTokens?: number;
  /** The rollout's prompt tokens taken from the engine's prefix cache, and those it computed (absent without an
   * engine): reused / (reused + prefilled) is the cache's hit rate. */
  promptTokensReused?: number;
  promptTokensPrefilled?: number;
  /** Generated plus trained tokens per second over the whole iteration. */
  tokensPerSecond: number;
  rolloutSeconds: number;
  updateSeconds: number;
  seconds: number;
  /** CPU seconds this process spent in the rollout and in the update (every thread): cpu / wall seconds is how many
   * cores a phase kept busy. */
  rolloutCpuSeconds?: number;
  updateCpuSeconds?: number;
  /**
   * The rollout's reflections whose facts the environment could check, and the right ones (absent when none were
   * checked): a reflection skill that RL wears down shows here before it shows in pass@k.
   */
  reflectionChecks?: ReflectionChecks;
  /** The update was skipped (non-finite loss); the reason is in `note`. */
  skipped?: boolean;
  note?: string;
  /**
   * Bytes rank 0 holds for training after the update: parameters, gradients at the last update (released after
   * it), AdamW's state; with ZeRO (optim.zero) its shard's share.
   */
  memory?: TrainingMemory;
}

export interface EvalEvent {
  type: 'eval';
  method: string;
  iteration: number;
  env: string;
  tasks: number;
  /**
   * What was scored: the split, the first task, the count and a content hash of the task list. Every evaluation this
   * build runs records it; a record without it (an earlier build's) cannot be paired with another.
   */
  taskSet?: TaskSet;
  /** pass@1..pass@N, fractions in [0, 1]. */
  passAtK: number[];
  byType?: Record<string, number[]>;
  /** Tasks per type. */
  tasksByType?: Record<string, number>;
  /** Each type in distribution (trained on) or out of distribution, where the environment tells; pass@k over each. */
  typeSplits?: Record<string, 'ID' | 'OOD'>;
  bySplit?: Partial<Record<'ID' | 'OOD', number[]>>;
  /** Per task, in task order: the 0-based attempt of the first win, -1 when no attempt won (for paired comparisons). */
  firstWin?: number[];
  /** Reflections whose facts the environment could check, and the correct ones (absent when none were checked). */
  reflectionChecks?: ReflectionChecks;
  /** Actions answered and how many were invalid (absent in an earlier build's records). */
  turns?: TurnCounts;
  /** Attempts' entropy and repeats of a failed attempt's last action (src/eval/diversity.ts; absent in earlier records). */
  diversity?: AttemptDiversity;
  /** Present when the environment's scripted expert wrote the reflections (eval.reflections: expert). */
  reflections?: 'expert';
}

export interface CheckpointEvent {
  type: 'checkpoint';
  iteration: number;
  path: string;
}

export interface LogEvent {
  type: 'log';
  level: 'info' | 'warn';
  message: string;
}

export type TrainerEvent = IterationEvent | EvalEvent | CheckpointEvent | LogEvent;
