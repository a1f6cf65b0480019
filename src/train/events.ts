// The typed events a training run produces. `Trainer.run()` yields them; the run folder's metrics.jsonl holds one
// per line; `lamer report` draws them.
import type { TrainingMemory } from './runtime.js';
import type { ReflectionChecks, TurnCounts, TaskSet } from '../eval/evaluate.js';
import type { AttemptDiversity } from '../eval/diversity.js';
import type { LogprobAgreement } from './agreement.js';

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
  /** When the event was written (seconds since the epoch). */
  wallTime?: number;
  /** Where the iteration's `seconds` went (rank 0's): see TimeBreakdown. */
  breakdown?: TimeBreakdown;
  /** The rollout engine's batches: mean live rows per decode step over its slots, the same over the rows waiting
   * work could have filled, and the share of prompt tokens its prefix cache served. */
  engine?: { occupancy: number; demandOccupancy: number; cacheHitRate: number };
  /** CPU seconds of this process (user + system, every thread) over the iteration's wall seconds times the cores it
   * may use: 1 is every core busy the whole time. */
  cpuBusy?: number;
  /** The process's peak resident memory so far (bytes). */
  peakRssBytes?: number;
  /** On a CUDA device: the caching allocator's bytes after the update (allocated, reserved) and the peak allocated. */
  cuda?: { allocated: number; reserved: number; peakAllocated: number };
  /** The update's first step: its log-probs of the sampled tokens of its rows (before any change to the weights)
   * against the ones the engine sampled with (src/train/agreement.ts). */
  agreement?: LogprobAgreement;
}

/**
 * Seconds of a span's parts, each measured apart (src/util/timing.ts), and `unaccounted`: the span's wall seconds
 * minus their sum. The rollout's: `prefill`, `decode` and `engineOther` (the engine's native calls), `engineResults`
 * (handing tokens back, stop strings), `tokenize` (chat template, tokenizer), `environment` (reset, step, restart,
 * parsing and checking reflections), `playPrompts` and `reflectionPrompts` (building prompts). The update's:
 * `advantages`, `engineRelease`, `stage`, `gae` (PPO), `forwardBackward`, `reference` (the KL reference's forwards),
 * `optimizer` (clip and AdamW), `stepOther` (the step calls' copies), `memoryQuery`, `recordUpdate`
 * (LAMER_RECORD_UPDATES). Parts a span did not use are absent.
 */
export type TimeBreakdown = Record<string, number>;

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
  /** Where the environment scores episodes (WebShop): the mean best score of the first k attempts, k = 1..N, in [0, 1]. */
  scoreAtK?: number[];
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
  /** When the event was written (seconds since the epoch). */
  wallTime?: number;
  /** Wall seconds of the evaluation, and where they went (TimeBreakdown). */
  seconds?: number;
  breakdown?: TimeBreakdown;
}

export interface CheckpointEvent {
  type: 'checkpoint';
  iteration: number;
  path: string;
  /** Wall seconds of writing it. */
  seconds?: number;
}

export interface LogEvent {
  type: 'log';
  level: 'info' | 'warn';
  message: string;
}

export type TrainerEvent = IterationEvent | EvalEvent | CheckpointEvent | LogEvent;
