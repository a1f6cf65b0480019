// Held-out evaluation (SPEC §6, §7): one trial per evaluation task, N episodes, evaluation sampling, and pass@1..N.
// Task seeds come from the evaluation split only, so a training seed can never be scored as held out; where the
// environment names its tasks' content (Environment.taskKey), a task count gives that many distinct tasks, so a small
// task space does not score the same board twice as if it were two.

import type { MemoryMode } from '../agent/memory.js';
import { EVAL_SEEDS, SELECT_SEEDS, TRAIN_SEEDS, seedSplitOf, taskSeed } from '../envs/common/seeds.js';
import { distinctTaskSeeds, taskListHash, type TaskListHash } from '../envs/common/task-lists.js';
import type { PromptStyle, RefusedLast, TaskTypeSplit } from '../envs/types.js';
import { LamerError } from '../errors.js';
import { EVAL_SAMPLING, type PolicySource, type SamplingOptions } from '../rollout/policy.js';
import { withExpertReflections } from '../rollout/scripted.js';
import { runRollout, type EnvFactory, type RolloutProgress, type RolloutStats, type TrialSummary } from '../rollout/runner.js';
import { evalTrialMode, isChanceMethod, type Method } from './methods.js';
import { attemptDiversity, type AttemptDiversity } from './diversity.js';
import { randomPolicy } from '../rollout/random.js';
import { passAtK, passAtKByGroup, scoreAtK } from './passk.js';
import { trialTranscripts, type TrialTranscript } from './transcripts.js';

export interface EvaluateOptions {
  /** The model's policy; not read for the chance methods (`random`, `random-memory`), which play without one. */
  policy?: PolicySource;
  env: EnvFactory;
  /** A count (the first n distinct tasks of the evaluation split) or explicit evaluation-split seeds. */
  tasks: number | readonly number[];
  /**
   * `eval` (default): held-out tasks. `select`: a count of distinct training-split tasks from a range no training
   * rollout or demonstration draws (SELECT_SEED_INDEX), for choosing defaults on tasks other than the evaluation's.
   */
  split?: EvalSplit;
  /**
   * With a task count: the index of the first task in the split's sequence of distinct tasks (default 0), so that a
   * set of tasks nothing else has scored can be drawn (e.g. a confirmation set far from the first tasks).
   */
  offset?: number;
  method: Method;
  /** N: episodes (attempts) per task. Default 3. */
  episodes?: number;
  memoryMode?: MemoryMode;
  style?: PromptStyle;
  maxTurns?: number;
  window?: number;
  /** Mark refused actions in the prompts' action lists (TrialConfig.markRefused). */
  markRefused?: boolean;
  /** Name a refused last action again at the play prompt's end (TrialConfig.refusedLast). */
  refusedLast?: RefusedLast;
  /** Overrides of the evaluation sampling (temperature 0.7, top-p 0.8, top-k 20). */
  sampling?: Partial<SamplingOptions>;
  concurrency?: number;
  seed?: number;
  signal?: AbortSignal;
  onProgress?: (progress: RolloutProgress) => void;
  /**
   * Who writes the reflections of reflecting methods: `model` (default) the policy, `expert` the environment's
   * scripted expert (the policy still plays every turn), which measures how well the policy acts on right memory.
   */
  reflections?: ReflectionSource;
  /**
   * Data parallel: this process plays tasks i with i mod size = rank (each under its index in the whole list, so with
   * the sampling seeds one process would use), and `gather` (an all-gather over the ranks, in rank order) brings every
   * rank's trials together: each rank returns the result of the whole evaluation.
   */
  shard?: EvalShard;
}

export interface EvalShard {
  rank: number;
  size: number;
  gather<T>(value: T): Promise<T[]>;
}

export type ReflectionSource = 'model' | 'expert';

/** Which tasks an evaluation scores: held-out ones, or training-split ones for model selection (SPEC §11). */
export type EvalSplit = 'eval' | 'select';

/** What an evaluation scored: which split, which tasks of it, and a content hash of the task list (SPEC §11). */
export interface TaskSet extends TaskListHash {
  split: EvalSplit;
  /** Index of the first task in the split's sequence of distinct tasks; null for an explicit list of seeds. */
  offset: number | null;
  count: number;
}

/** "held-out tasks 0-255 (development set)", "model-selection tasks 0-127", "held-out tasks 4096-4607". */
export function describeTaskSet(set: Pick<TaskSet, 'split' | 'offset' | 'count'>): string {
  const kind = set.split === 'select' ? 'model-selection' : 'held-out';
  if (set.offset === null) return `${set.count} ${kind} tasks (given seeds)`;
  const range = `${kind} tasks ${set.offset}-${set.offset + set.count - 1}`;
  // The first evaluation tasks are what every evaluation scores by default, and so what choices have been made on.
  return set.split === 'eval' && set.offset === 0 ? `${range} (development set)` : range;
}

/** A task set read from a record (eval.json, metrics.jsonl) if it is well formed, else undefined. */
export function readTaskSet(value: unknown): TaskSet | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const t = value as Record<string, unknown>;
  const count = t.count;
  const offset = t.offset;
  if (t.split !== 'eval' && t.split !== 'select') return undefined;
  if (!(offset === null || (Number.isInteger(offset) && (offset as number) >= 0))) return undefined;
  if (!Number.isInteger(count) || (count as number) < 1) return undefined;
  if (typeof t.hash !== 'string' || !/^[0-9a-f]{64}$/.test(t.hash) || (t.by !== 'content' && t.by !== 'seed')) return undefined;
  return { split: t.split, offset: offset as number | null, count: count as number, hash: t.hash, by: t.by };
}

/**
 * Index in the training split of the first model-selection task (SELECT_SEEDS). Where the environment splits content
 * (MineSweeper), these seeds draw model-selection content only, which neither the evaluation nor the demonstrations
 * and training rollouts draw: choices made on these tasks see no evaluation task and no board the model was trained on.
 */
export const SELECT_SEED_INDEX = SELECT_SEEDS.start - TRAIN_SEEDS.start;

export interface EvalResult {
  method: Method;
  /** Environment name. */
  env: string;
  /** pass@1..pass@N as fractions. */
  passAtK: number[];
  /** Where the environment scores its episodes (WebShop): the mean best score of the first k attempts, k = 1..N. */
  scoreAtK?: number[];
  tasks: number;
  byType: Record<string, number[]>;
  tasksByType: Record<string, number>;
  /** Where the environment tells (Environment.taskTypeSplit): each type's ID or OOD, and pass@k over each. */
  typeSplits?: Record<string, TaskTypeSplit>;
  bySplit?: Partial<Record<TaskTypeSplit, number[]>>;
  trials: TrialSummary[];
  stats: RolloutStats;
  /** Reflections the environment could check (Environment.checkReflection) and how many stated the facts right. */
  reflectionChecks: ReflectionChecks;
  /** Actions answered (play turns) and how many of them the environment could not parse into a valid action. */
  turns: TurnCounts;
  /** How varied each task's attempts are, and how often an attempt repeats the action that ended a failed one. */
  diversity: AttemptDiversity;
  /** Who wrote the reflections. */
  reflections: ReflectionSource;
  /** The tasks scored: split, first task, count and content hash. */
  taskSet: TaskSet;
  /** Per trial, in task order: every prompt and response, and the reflections (for reading, not for scoring). */
  transcripts: TrialTranscript[];
}

export interface ReflectionChecks {
  checked: number;
  correct: number;
}

export interface TurnCounts {
  played: number;
  invalid: number;
}

/** Play turns of the transcripts and the invalid ones (the response parsed into no valid action). */
export function countTurns(transcripts: readonly TrialTranscript[]): TurnCounts {
  let played = 0;
  let invalid = 0;
  for (const t of transcripts) {
    for (const e of t.episodes) {
      for (const turn of e.turns) {
        played++;
        if (!turn.valid) invalid++;
      }
    }
  }
  return { played, invalid };
}

/** "lamer: score@1..3 38.2 / 47.5 / 52.0 (the mean best episode score of the first k attempts, out of 100)". */
export function formatScores(method: string, scores: readonly number[]): string {
  return `${method}: score@1..${scores.length} ${scores.map((s) => (100 * s).toFixed(1)).join(' / ')} (the mean best episode score of the first k attempts, out of 100)`;
}

/** "lamer: 7 of 2322 actions invalid (0.3%)". */
export function formatInvalidTurns(method: string, t: TurnCounts): string {
  const share = t.played > 0 ? ((100 * t.invalid) / t.played).toFixed(1) : '0.0';
  return `${method}: ${t.invalid} of ${t.played} actions invalid (${share}%)`;
}

const checkedPercent = (c: ReflectionChecks): string => `${((100 * c.correct) / c.checked).toFixed(1)}%`;

/** "16 of 196 (8.2%)". */
export function formatCheckedShare(c: ReflectionChecks): string {
  return `${c.correct} of ${c.checked} (${checkedPercent(c)})`;
}

/** "lamer: 16 of 196 checkable reflections state the failed episode's facts right (8.2%)". */
export function formatReflectionChecks(method: string, c: ReflectionChecks): string {
  return `${method}: ${c.correct} of ${c.checked} checkable reflections state the failed episode's facts right (${checkedPercent(c)})`;
}

/** Counts the checkable reflections of trials and the correct ones. */
export function countReflectionChecks(trials: ReadonlyArray<{ reflectionsCorrect: ReadonlyArray<boolean | undefined> }>): ReflectionChecks {
  let checked = 0;
  let correct = 0;
  for (const t of trials) {
    for (const c of t.reflectionsCorrect) {
      if (c === undefined) continue;
      checked++;
      if (c) correct++;
    }
  }
  return { checked, correct };
}

/**
 * Evaluation task seeds: for a count, tasks [offset, offset + count) of the split's sequence of distinct tasks (a seed
 * whose task repeats an earlier one by content is skipped where `env` makes environments that name it,
 * Environment.taskKey), so sets at disjoint offsets share no task; or the given seeds after checking their split.
 */
export function evalTaskSeeds(tasks: number | readonly number[], env?: EnvFactory, split: EvalSplit = 'eval', offset = 0): number[] {
  if (split !== 'eval' && split !== 'select') {
    throw new LamerError('E_ARG', `evaluate option split: expected eval or select, found ${JSON.stringify(split)}`);
  }
  if (typeof tasks !== 'number' && split === 'select') {
    throw new LamerError('E_ARG', 'evaluate option tasks: the select split takes a task count, not seeds');
  }
  if (typeof tasks === 'number') {
    if (!Number.isInteger(tasks) || tasks < 1) {
      throw new LamerError('E_ARG', `evaluate option tasks: expected a positive task count, found ${tasks}`);
    }
    if (!Number.isInteger(offset) || offset < 0) {
      throw new LamerError('E_ARG', `evaluate option offset: expected the index of the first task (an integer >= 0), found ${offset}`);
    }
    const nth = (i: number): number => (split === 'eval' ? taskSeed('eval', i) : taskSeed('train', SELECT_SEED_INDEX + i));
    const length = split === 'eval' ? EVAL_SEEDS.end - EVAL_SEEDS.start : SELECT_SEEDS.end - SELECT_SEEDS.start;
    return distinctTaskSeeds(nth, tasks, env, { offset, length, what: `evaluate option tasks: ${split === 'eval' ? 'held-out' : 'model-selection'}` });
  }
  if (offset !== 0) throw new LamerError('E_ARG', 'evaluate option offset: explicit seeds take no offset');
  if (!Array.isArray(tasks) || tasks.length === 0) {
    throw new LamerError('E_ARG', 'evaluate option tasks: expected a task count or a non-empty array of seeds');
  }
  for (const seed of tasks) {
    if (seedSplitOf(seed) !== 'eval') {
      throw new LamerError('E_ARG', `evaluate option tasks: seed ${seed} is not in the evaluation split; use taskSeed('eval', i) for held-out tasks`);
    }
  }
  return tasks.slice();
}

/** The policy that plays an evaluation: the chance player of a chance method, else the model's (with expert reflections). */
function evalPolicy(options: EvaluateOptions, reflections: ReflectionSource): PolicySource {
  if (isChanceMethod(options.method)) {
    // Seeded like the model's sampling, so a chance row is reproducible and a new seed is a new draw of it.
    return randomPolicy({ memory: options.method === 'random-memory', seed: options.seed ?? 0 });
  }
  if (!options.policy) throw new LamerError('E_ARG', `evaluate option policy: method ${options.method} needs the model's policy`);
  return reflections === 'expert' ? withExpertReflections(options.policy, { style: options.style }) : options.policy;
}

/** ID before OOD, whatever order the tasks came in. */
function orderedSplits(bySplit: Record<string, number[]>): Partial<Record<TaskTypeSplit, number[]>> {
  const out: Partial<Record<TaskTypeSplit, number[]>> = {};
  for (const s of ['ID', 'OOD'] as const) if (bySplit[s]) out[s] = bySplit[s];
  return out;
}

/** Runs one trial per evaluation task with the method's trial mode and reports pass@1..N. */
export async function evaluate(options: EvaluateOptions): Promise<EvalResult> {
  const mode = evalTrialMode(options.method);
  const split = options.split ?? 'eval';
  const offset = options.offset ?? 0;
  const seeds = evalTaskSeeds(options.tasks, options.env, split, offset);
  const taskSet: TaskSet = { split, offset: typeof options.tasks === 'number' ? offset : null, count: seeds.length, ...taskListHash(seeds, options.env) };
  const reflections = options.reflections ?? 'model';
  if (reflections !== 'model' && reflections !== 'expert') {
    throw new LamerError('E_ARG', `evaluate option reflections: expected model or expert, found ${JSON.stringify(reflections)}`);
  }
  if (reflections === 'expert' && !mode.reflect) {
    throw new LamerError(
      'E_ARG',
      `evaluate option reflections: expert reflections need a method that reflects (lamer or reflexion); ${options.method} attempts each episode without memory`,
    );
  }
  const policy = evalPolicy(options, reflections);
  const episodes = options.episodes ?? 3;
  let envName: string | undefined;
  const env: EnvFactory = () => {
    const e = options.env();
    envName = e.name;
    return e;
  };
  const shard = options.shard && options.shard.size > 1 ? options.shard : undefined;
  const mine = shard ? seeds.map((_, i) => i).filter((i) => i % shard.size === shard.rank) : undefined;
  const batch = await runRollout({
    policy,
    env,
    tasks: mine ? mine.map((i) => seeds[i]) : seeds,
    ...(mine ? { groups: mine } : {}),
    trialsPerTask: 1,
    trial: {
      episodes,
      reflect: mode.reflect,
      promptVariant: mode.promptVariant,
      memoryMode: options.memoryMode,
      style: options.style,
      maxTurns: options.maxTurns,
      window: options.window,
      markRefused: options.markRefused,
      refusedLast: options.refusedLast,
      sampling: { ...EVAL_SAMPLING, ...options.sampling },
    },
    concurrency: options.concurrency,
    seed: options.seed,
    signal: options.signal,
    onProgress: options.onProgress,
  });
  let trials = batch.trials;
  let transcripts = trialTranscripts(batch);
  let stats = batch.stats;
  if (shard) {
    // Every rank's trials back in task order: rank r's j-th trial is task r + j * size.
    const parts = await shard.gather({ trials, transcripts, stats, env: envName });
    // JSON turns the unchecked reflections (undefined) into null: back to undefined.
    trials = seeds.map((_, i) => {
      const t = parts[i % shard.size].trials[Math.floor(i / shard.size)];
      return { ...t, reflectionsCorrect: t.reflectionsCorrect.map((c) => (c === null ? undefined : c)) };
    });
    transcripts = seeds.map((_, i) => parts[i % shard.size].transcripts[Math.floor(i / shard.size)]);
    stats = { ...stats };
    for (const key of Object.keys(stats) as (keyof RolloutStats)[]) {
      stats[key] = key === 'wallMs' ? Math.max(...parts.map((p) => p.stats[key])) : parts.reduce((sum, p) => sum + p.stats[key], 0);
    }
    envName ??= parts.find((p) => p.env)?.env;
  }
  const summary = passAtK(trials, episodes);
  const scores = scoreAtK(trials, episodes);
  // In- and out-of-distribution types, where the environment names them.
  const probe = options.env();
  const typeSplits: Record<string, TaskTypeSplit> | undefined = probe.taskTypeSplit
    ? Object.fromEntries(Object.keys(summary.byType).map((t) => [t, probe.taskTypeSplit!(t)]))
    : undefined;
  const bySplit = typeSplits ? passAtKByGroup(trials, (t) => (t.taskType === undefined ? undefined : typeSplits[t.taskType]), episodes) : undefined;
  return {
    method: options.method,
    env: envName ?? 'unknown',
    passAtK: summary.passAtK,
    ...(scores === null ? {} : { scoreAtK: scores }),
    tasks: summary.tasks,
    byType: summary.byType,
    tasksByType: summary.tasksByType,
    ...(typeSplits ? { typeSplits, bySplit: orderedSplits(bySplit!) } : {}),
    trials,
    stats,
    reflectionChecks: countReflectionChecks(trials),
    turns: countTurns(transcripts),
    diversity: attemptDiversity(transcripts),
    reflections,
    taskSet,
    transcripts,
  };
}
