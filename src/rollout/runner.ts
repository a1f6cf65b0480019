// The rollout of one iteration: tasks x K trials, all started together (up to a concurrency bound) so the engine can
// batch their pending generate calls. Rows come back as the columnar RowTable of rows.ts, ordered by (group, trial)
// whatever order the trials finished in, so a rollout is reproducible from its seeds.

import { setMaxListeners } from 'node:events';
import type { Environment } from '../envs/types.js';
import { LamerError } from '../errors.js';
import type { FinishReason, MoveContrast, PolicySource } from './policy.js';
import { RowTableBuilder, type RowTable } from './rows.js';
import { resolveTrialConfig, runTrial, type TrialConfig, type TrialResult, type TrialRow } from './trial.js';
import { deriveSeed } from '../util/seed.js';

/** A fresh environment per trial: trials run concurrently, and an environment holds one task's state. */
export type EnvFactory = () => Environment;

export interface RolloutProgress {
  trialsDone: number;
  trialsTotal: number;
  rows: number;
}

export interface RolloutOptions {
  policy: PolicySource;
  env: EnvFactory;
  /** Task seeds, one group per seed (use `taskSeed` of envs/common/seeds.ts). */
  tasks: readonly number[];
  /** K: trials per task. They share the task seed and the group id. */
  trialsPerTask: number;
  trial: TrialConfig;
  /** Most trials in flight at once; default all of them (the engine bounds its own batch). */
  concurrency?: number;
  /** Base of the sampling seeds; each request's seed depends only on (seed, group, trial, call index). */
  seed?: number;
  /** Group ids are `groupOffset + task index` (default 0), so batches can be concatenated without clashes. */
  groupOffset?: number;
  /**
   * The group id of each task instead (distinct non-negative integers, one per task): a rank of a data-parallel run
   * plays its share of a task list under the tasks' indices in the whole list, so every trial samples with the
   * seeds it would have in one process.
   */
  groups?: readonly number[];
  signal?: AbortSignal;
  /** Called after every row and every finished trial. */
  onProgress?: (progress: RolloutProgress) => void;
}

/** Trial summary without its rows (the rows are in the table). */
export type TrialSummary = Omit<TrialResult, 'rows'>;

export interface RolloutBatch {
  table: RowTable;
  /** Per row, aligned with the table. */
  promptIds: Int32Array[];
  responseIds: Int32Array[];
  logprobs: Float32Array[];
  finishReason: FinishReason[];
  /** A scripted player's random move (GenerateResult.randomMove), which demonstrations leave out. */
  randomMove: boolean[];
  /** A scripted player's move where copying the request would be refused (GenerateResult.checkTurn). */
  checkTurn: boolean[];
  /** A scripted player's refused and admissible moves at the turn (GenerateResult.contrast), else null. */
  contrast: (MoveContrast | null)[];
  prompts: string[];
  responses: string[];
  /** One per trial, in (group, trial) order. */
  trials: TrialSummary[];
  stats: RolloutStats;
}

export interface RolloutStats {
  rows: number;
  playRows: number;
  reflectRows: number;
  trials: number;
  episodes: number;
  promptTokens: number;
  responseTokens: number;
  wallMs: number;
}

function argError(message: string): LamerError {
  return new LamerError('E_ARG', message);
}

function checkOptions(options: RolloutOptions): void {
  if (options === null || typeof options !== 'object') throw argError('runRollout: expected an options object');
  const { policy, env, tasks, trialsPerTask, concurrency, groupOffset } = options;
  if (typeof policy !== 'function' && (typeof policy !== 'object' || policy === null || typeof policy.generate !== 'function')) {
    throw argError('runRollout option policy: expected a PolicyClient (with generate) or a per-trial policy factory');
  }
  if (typeof env !== 'function') throw argError('runRollout option env: expected a function that creates an environment');
  if (!Array.isArray(tasks) || tasks.some((s) => !Number.isSafeInteger(s) || s < 0)) {
    throw argError('runRollout option tasks: expected an array of non-negative integer task seeds');
  }
  if (!Number.isInteger(trialsPerTask) || trialsPerTask < 1) {
    throw argError(`runRollout option trialsPerTask: expected a positive integer, found ${JSON.stringify(trialsPerTask)}`);
  }
  if (concurrency !== undefined && !(concurrency === Infinity || (Number.isInteger(concurrency) && concurrency >= 1))) {
    throw argError(`runRollout option concurrency: expected a positive integer, found ${JSON.stringify(concurrency)}`);
  }
  if (groupOffset !== undefined && (!Number.isInteger(groupOffset) || groupOffset < 0)) {
    throw argError(`runRollout option groupOffset: expected a non-negative integer, found ${JSON.stringify(groupOffset)}`);
  }
  if (options.seed !== undefined && !Number.isSafeInteger(options.seed)) {
    throw argError(`runRollout option seed: expected an integer, found ${JSON.stringify(options.seed)}`);
  }
  if (options.groups !== undefined) {
    const g = options.groups;
    if (!Array.isArray(g) || g.length !== tasks.length || g.some((x) => !Number.isSafeInteger(x) || x < 0) || new Set(g).size !== g.length) {
      throw argError('runRollout option groups: expected one distinct non-negative integer group id per task');
    }
    if (groupOffset !== undefined) throw argError('runRollout: give groups or groupOffset, not both');
  }
  const ids = ((options.groups ? Math.max(-1, ...options.groups) + 1 : tasks.length) + (groupOffset ?? 0)) * trialsPerTask;
  if (ids > 0x7fffffff) throw argError(`runRollout: ${ids} trials do not fit 32-bit trial ids`);
}

/** Runs every trial of the batch and collects rows, token arrays and per-trial results. */
export async function runRollout(options: RolloutOptions): Promise<RolloutBatch> {
  checkOptions(options);
  resolveTrialConfig(options.trial); // fail before any environment is built
  const started = performance.now();
  const { tasks, trialsPerTask: k } = options;
  const groupOffset = options.groupOffset ?? 0;
  const total = tasks.length * k;
  const concurrency = Math.min(options.concurrency ?? Infinity, Math.max(total, 1));

  // A failure in one trial stops the others at their next generate, instead of letting them run to the end unseen.
  const stop = new AbortController();
  const signal = options.signal === undefined ? stop.signal : AbortSignal.any([options.signal, stop.signal]);
  // Every pending generate listens for the abort; hundreds at once are expected, not a leak.
  setMaxListeners(0, signal);
  options.signal?.throwIfAborted();

  const results = new Array<TrialResult | undefined>(total);
  let next = 0;
  let trialsDone = 0;
  let rowCount = 0;
  const report = () => options.onProgress?.({ trialsDone, trialsTotal: total, rows: rowCount });
  const onRow = () => {
    rowCount++;
    report();
  };

  const worker = async () => {
    while (next < total && !signal.aborted) {
      const index = next++;
      const taskIndex = Math.floor(index / k);
      const group = options.groups ? options.groups[taskIndex] : groupOffset + taskIndex;
      // Trial ids are unique in the batch (and across batches with distinct group offsets).
      const trial = group * k + (index % k);
      results[index] = await runTrial({
        env: options.env(),
        policy: options.policy,
        seed: tasks[taskIndex],
        group,
        trial,
        config: options.trial,
        samplingSeed: options.seed === undefined ? undefined : deriveSeed(options.seed, group, trial),
        signal,
        onRow,
      });
      trialsDone++;
      report();
    }
  };

  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } catch (e) {
    stop.abort(e);
    throw e;
  }
  options.signal?.throwIfAborted();

  const builder = new RowTableBuilder();
  const batch: Omit<RolloutBatch, 'table' | 'stats'> = {
    promptIds: [],
    responseIds: [],
    logprobs: [],
    finishReason: [],
    randomMove: [],
    checkTurn: [],
    contrast: [],
    prompts: [],
    responses: [],
    trials: [],
  };
  const stats: RolloutStats = {
    rows: 0,
    playRows: 0,
    reflectRows: 0,
    trials: total,
    episodes: 0,
    promptTokens: 0,
    responseTokens: 0,
    wallMs: 0,
  };
  for (const result of results as TrialResult[]) {
    const { rows, ...summary } = result;
    batch.trials.push(summary);
    stats.episodes += summary.episodesPlayed;
    for (const row of rows) appendRow(builder, batch, stats, row);
  }
  stats.rows = builder.length;
  stats.wallMs = performance.now() - started;
  return { table: builder.build(), ...batch, stats };
}

function appendRow(builder: RowTableBuilder, batch: Omit<RolloutBatch, 'table' | 'stats'>, stats: RolloutStats, row: TrialRow): void {
  builder.push(row);
  batch.promptIds.push(row.promptIds);
  batch.responseIds.push(row.responseIds);
  batch.logprobs.push(row.logprobs);
  batch.finishReason.push(row.finishReason);
  batch.randomMove.push(row.randomMove);
  batch.checkTurn.push(row.checkTurn);
  batch.contrast.push(row.contrast);
  batch.prompts.push(row.prompt);
  batch.responses.push(row.response);
  if (row.phase === 'play') stats.playRows++;
  else stats.reflectRows++;
  stats.promptTokens += row.promptIds.length;
  stats.responseTokens += row.responseIds.length;
}
