// The training loop (SPEC §2-§7): rollout -> advantages -> update, evaluation every k iterations, atomic
// checkpoints, exact resume. `Trainer.run()` is an async iterator of typed events; every event is also appended
// to the run folder's metrics.jsonl.
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { makeDirs, readJsonLines } from '../util/fs.js';
import { join, resolve } from 'node:path';
import { computeAdvantages } from '../algo/index.js';
import { estimatorOptions } from '../algo/options.js';
import { createEnv } from '../envs/registry.js';
import { blockTaskSeed } from '../envs/common/seeds.js';
import type { Environment } from '../envs/types.js';
import { LamerError } from '../errors.js';
import { countReflectionChecks, evaluate, formatCheckedShare } from '../eval/evaluate.js';
import { transcriptJsonLines, type TrialTranscript } from '../eval/transcripts.js';
import { TRAINED_METHODS, evalTrialMode, isChanceMethod, methodEstimator, trainRolloutShape } from '../eval/methods.js';
import { runRollout, type RolloutBatch } from '../rollout/runner.js';
import { deriveSeed } from '../util/seed.js';
import { Progress } from '../util/progress.js';
import { runSeeds, validateConfig, type TrainerConfig, type TrainerConfigInput } from './config.js';
import { checkpointName, cleanInterruptedCheckpoints, latestCheckpoint, removeStaleTemporaries, saveCheckpoint, writeFileAtomic } from './checkpoint.js';
import { removeWarmStartSaves, WARM_START_SAVES, warmStart } from './warm-start.js';
import type { EvalEvent, IterationEvent, TimeBreakdown, TrainerEvent } from './events.js';
import { createNativeRuntime } from './native-runtime.js';
import { claimRunFolder } from './run-lock.js';
import {
  RUN_CONFIG_FILE,
  STATE_FILE,
  checkResumedModel,
  checkpointFileHashes,
  modelIdentity,
  readTrainerState,
  type ModelIdentity,
  type TrainerState,
} from './trainer-state.js';
import { codeVersion } from './code-version.js';
import type { DistContext } from './distributed.js';
import type { EngineCounts, PolicyRuntime, UpdateMetrics } from './runtime.js';
import { RunEventWriter } from './tensorboard.js';
import { partsSince, timeBook, type TimeParts } from '../util/timing.js';

export interface TrainerOptions {
  /** Creates the model runtime for a config; default: the native policy, engine and optimizer. */
  runtime?: (config: TrainerConfig, runDir: string, dist?: DistContext) => Promise<PolicyRuntime>;
  /**
   * Data parallel (src/train/distributed.ts): this process is one rank. It plays its share of each iteration's tasks
   * and of each evaluation, the train steps reduce over the ranks, and only rank 0 writes the run folder or logs.
   */
  dist?: DistContext;
  /** A custom environment (config env.name 'custom'): called for each trial; `evaluation` selects held-out settings. */
  env?: (evaluation: boolean) => Environment;
  /** Progress bars on stderr (default true). */
  progress?: boolean;
  /** Where plain log lines go (default stderr). */
  log?: (line: string) => void;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Continue from the run folder's latest checkpoint, if there is one. */
  resume?: boolean;
  /** Stop after this iteration (for tests and staged runs); default config.train.iterations. */
  untilIteration?: number;
}

/** The trainer's state in a checkpoint (src/train/trainer-state.ts). */
export { STATE_FILE };
/** The latest evaluation's transcripts, one JSON line per trial (method, iteration, task, episodes). */
export const TRANSCRIPTS_FILE = 'transcripts.jsonl';
/** Mean undiscounted reward per played episode, share of trials won, share of valid rows. */
export function rolloutSummary(batch: RolloutBatch): { reward: number; successRate: number; validRatio: number } {
  return summaryOfSums(rolloutSums(batch));
}

/** What an iteration's rollout adds up to: the sums data-parallel ranks add together before the summary is taken. */
interface RolloutSums {
  /** Undiscounted reward summed over the played episodes, and the episodes. */
  reward: number;
  episodes: number;
  /** Trials won in any episode, and the trials. */
  won: number;
  trials: number;
  /** Valid rows, and the rows. */
  valid: number;
  rows: number;
  responseTokens: number;
  promptTokens: number;
  /** Reflections the environment could check, and the right ones. */
  checked: number;
  correct: number;
}

/** The order in which the sums travel in one all-reduce. */
const SUM_FIELDS = [
  'reward',
  'episodes',
  'won',
  'trials',
  'valid',
  'rows',
  'responseTokens',
  'promptTokens',
  'checked',
  'correct',
] as const satisfies readonly (keyof RolloutSums)[];

function rolloutSums(batch: RolloutBatch): RolloutSums {
  const t = batch.table;
  const episodes = new Map<string, number>();
  let valid = 0;
  for (let i = 0; i < t.length; i++) {
    valid += t.valid[i];
    if (t.phase[i] !== 0) continue;
    const key = `${t.group[i]}:${t.trial[i]}:${t.episode[i]}`;
    episodes.set(key, (episodes.get(key) ?? 0) + t.reward[i]);
  }
  let reward = 0;
  for (const r of episodes.values()) reward += r;
  const checks = countReflectionChecks(batch.trials);
  return {
    reward,
    episodes: episodes.size,
    won: batch.trials.filter((tr) => tr.won.some(Boolean)).length,
    trials: batch.trials.length,
    valid,
    rows: t.length,
    responseTokens: batch.responseIds.reduce((s, r) => s + r.length, 0),
    promptTokens: batch.promptIds.reduce((s, p) => s + p.length, 0),
    checked: checks.checked,
    correct: checks.correct,
  };
}

/** The sums of every rank, added (one all-reduce). */
async function sumOverRanks(sums: RolloutSums, dist: DistContext): Promise<RolloutSums> {
  const total = await dist.sum(SUM_FIELDS.map((k) => sums[k]));
  return Object.fromEntries(SUM_FIELDS.map((k, i) => [k, total[i]])) as unknown as RolloutSums;
}

function summaryOfSums(s: RolloutSums): { reward: number; successRate: number; validRatio: number } {
  return { reward: s.episodes ? s.reward / s.episodes : 0, successRate: s.trials ? s.won / s.trials : 0, validRatio: s.rows ? s.valid / s.rows : 0 };
}

export class Trainer {
  readonly config: TrainerConfig;
  readonly runDir: string;
  readonly #options: TrainerOptions;

  constructor(config: TrainerConfig | TrainerConfigInput, options: TrainerOptions = {}) {
    this.config = validateConfig(config);
    this.runDir = resolve(this.config.runsDir, this.config.name);
    this.#options = options;
  }

  get checkpointsDir(): string {
    return join(this.runDir, 'checkpoints');
  }

  /** True unless this process is a rank other than 0 of a data-parallel run (those neither write nor log). */
  get #main(): boolean {
    return this.#options.dist?.isMain ?? true;
  }

  get #silent(): boolean {
    return this.#options.progress === false || !this.#main;
  }

  #log(line: string): void {
    if (!this.#main) return;
    (this.#options.log ?? ((l: string) => process.stderr.write(l + '\n')))(line);
  }

  #emit(event: TrainerEvent): TrainerEvent {
    if (event.type === 'iteration' || event.type === 'eval') event.wallTime ??= Date.now() / 1000;
    if (this.#main) {
      appendFileSync(join(this.runDir, 'metrics.jsonl'), JSON.stringify(event) + '\n');
      this.#tensorboard?.write(event);
    }
    return event;
  }

  /** The run folder's TensorBoard event file (train.tensorboard), opened with the run. */
  #tensorboard: RunEventWriter | null = null;

  /** Writes a file of the run folder (rank 0 only). */
  #write(name: string, text: string): void {
    if (this.#main) writeFileAtomic(join(this.runDir, name), text);
  }

  #env(evaluation = false): () => Environment {
    const custom = this.#options.env;
    if (custom) return () => custom(evaluation);
    const { name, options, evalOptions } = this.config.env;
    if (name === 'custom') throw new LamerError('E_CONFIG', "env.name is 'custom': pass the environment as the Trainer's `env` option");
    const opts = evaluation ? { ...options, ...evalOptions } : options;
    return () => createEnv(name, opts as never);
  }

  /**
   * What the run was made with, written into config.json: the code (package version, git commit and whether tracked
   * files differed from it: codeVersion) and what the run's environments read (Environment.provenance: fidelity, data
   * files and their SHA-256, prompt templates) for training and evaluation, null where they say nothing; logged.
   */
  #provenance(): Record<string, unknown> {
    const code = codeVersion();
    const train = this.#env()().provenance?.();
    const evaluation = this.#env(true)().provenance?.();
    if (train !== undefined || evaluation !== undefined) {
      const same = JSON.stringify(train) === JSON.stringify(evaluation);
      this.#log(
        `[${this.config.method}] env ${this.config.env.name}: ${describeProvenance(train)}${same ? '' : `; at evaluation ${describeProvenance(evaluation)}`}`,
      );
    }
    return { code, train: train ?? null, eval: evaluation ?? null };
  }

  /**
   * Keeps only the metrics of iterations up to `iteration` (a resumed run rewrites what came after), without the
   * evaluation of `iteration` itself when `evalPending` (the resumed run evaluates it again). Returns what was kept.
   */
  #truncateMetrics(iteration: number, evalPending: boolean): TrainerEvent[] {
    const path = join(this.runDir, 'metrics.jsonl');
    if (!existsSync(path)) return [];
    // Lines a kill tore are dropped.
    const kept = (readJsonLines(path, 'E_CHECKPOINT').values as TrainerEvent[]).filter(
      (e) => !('iteration' in e) || e.iteration < iteration || (e.iteration === iteration && !(evalPending && e.type === 'eval')),
    );
    writeFileAtomic(path, kept.map((e) => JSON.stringify(e) + '\n').join(''));
    return kept;
  }

  /**
   * The supervised warm start from scripted demonstrations (config.sft): `sft.reflectSteps` steps on the reflection
   * rows alone, then `sft.steps` on all rows. Returns the loss of each step. It saves its state into the run's
   * WARM_START_SAVES folder every sft.checkpointEvery steps; `resume` continues from there.
   */
  async warmStart(runtime: PolicyRuntime, signal?: AbortSignal, resume = false): Promise<number[]> {
    return warmStart(this.config, runtime, {
      dist: this.#options.dist,
      silent: this.#silent,
      log: (line) => this.#log(line),
      signal,
      checkpointDir: join(this.runDir, WARM_START_SAVES),
      resume,
    });
  }

  /**
   * Held-out evaluation of the current policy with the config's method (pass@1..N). `onTranscripts` receives every
   * trial's prompts, responses and reflections. A chance method (random, random-memory) plays without a model, so its
   * runtime may be null.
   */
  async evaluate(
    runtime: PolicyRuntime | null,
    iteration: number,
    signal?: AbortSignal,
    options: { onTranscripts?: (transcripts: TrialTranscript[]) => void } = {},
  ): Promise<EvalEvent> {
    const c = this.config;
    if (runtime === null && !isChanceMethod(c.method)) {
      throw new LamerError('E_ARG', `Trainer.evaluate: method ${c.method} plays with the model, so it needs a runtime`);
    }
    const t0 = performance.now();
    const book0 = timeBook.snapshot();
    runtime?.resetCaches?.();
    const expert = c.eval.reflections === 'expert' && evalTrialMode(c.method).reflect;
    const dist = this.#options.dist;
    const progress = new Progress({
      label: `eval ${c.method}${expert ? ' (expert reflections)' : ''}`,
      total: dist ? dist.shard(c.eval.tasks).length : c.eval.tasks,
      unit: 'tasks',
      silent: this.#silent,
    });
    const result = await evaluate({
      policy: runtime?.client(),
      env: this.#env(true),
      tasks: c.eval.tasks,
      split: c.eval.split,
      offset: c.eval.offset,
      method: c.method,
      episodes: c.trial.episodes,
      memoryMode: c.trial.memory,
      style: c.model.promptStyle,
      window: c.trial.historyWindow,
      markRefused: c.trial.markRefused,
      refusedLast: c.trial.refusedLast,
      sampling: { temperature: c.eval.temperature, topP: c.eval.topP, topK: c.eval.topK, maxNewTokens: c.rollout.maxResponseTokens },
      seed: deriveSeed(c.seed, 0xe7a1),
      reflections: expert ? 'expert' : 'model',
      ...(dist && dist.size > 1 ? { shard: { rank: dist.rank, size: dist.size, gather: <T>(v: T) => dist.gather(v) } } : {}),
      signal,
      onProgress: (p) => {
        if (p.trialsDone > progress.done) progress.tick(p.trialsDone - progress.done);
      },
    });
    const seconds = (performance.now() - t0) / 1000;
    options.onTranscripts?.(result.transcripts);
    const checks = result.reflectionChecks;
    const right = checks.checked > 0 ? `; reflections right ${checks.correct}/${checks.checked}` : '';
    progress.finish(`pass@k ${result.passAtK.map((p) => (100 * p).toFixed(1)).join('/')}${right}`);
    return {
      type: 'eval',
      method: c.method,
      iteration,
      env: result.env,
      tasks: result.tasks,
      taskSet: result.taskSet,
      passAtK: result.passAtK,
      ...(result.scoreAtK ? { scoreAtK: result.scoreAtK } : {}),
      byType: result.byType,
      tasksByType: result.tasksByType,
      ...(result.typeSplits ? { typeSplits: result.typeSplits, bySplit: result.bySplit } : {}),
      firstWin: result.trials.map((t) => t.wonEpisode),
      ...(checks.checked > 0 ? { reflectionChecks: checks } : {}),
      turns: result.turns,
      diversity: result.diversity,
      ...(expert ? { reflections: 'expert' as const } : {}),
      seconds,
      breakdown: breakdownOf(book0, seconds),
    };
  }

  /** One training iteration: rollout, advantages, update. */
  async iterate(runtime: PolicyRuntime, iteration: number, signal?: AbortSignal): Promise<IterationEvent> {
    const c = this.config;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const book0 = timeBook.snapshot();
    runtime.resetCaches?.();
    const engine0 = runtime.engineCounts?.();
    const shape = trainRolloutShape(c.method, c.trial.episodes, c.rollout.groupSize);
    const block = runSeeds(c).rolloutTasks;
    const allTasks = Array.from({ length: c.rollout.tasksPerIteration }, (_, j) =>
      blockTaskSeed('rollout', block, (iteration - 1) * c.rollout.tasksPerIteration + j),
    );
    // Data parallel: this rank's tasks (each task's whole group), under their indices in the whole list.
    const dist = this.#options.dist;
    const mine = dist && dist.size > 1 ? dist.shard(allTasks.length) : undefined;
    const tasks = mine ? mine.map((j) => allTasks[j]) : allTasks;
    const total = tasks.length * shape.trialsPerTask;
    const progress = new Progress({ label: `iter ${iteration} rollout`, total, unit: 'trials', silent: this.#silent });
    const batch = await runRollout({
      policy: runtime.client(),
      env: this.#env(),
      tasks,
      ...(mine ? { groups: mine } : {}),
      trialsPerTask: shape.trialsPerTask,
      trial: {
        episodes: shape.episodes,
        reflect: shape.reflect,
        memoryMode: c.trial.memory,
        promptVariant: shape.promptVariant,
        style: c.model.promptStyle,
        window: c.trial.historyWindow,
        markRefused: c.trial.markRefused,
        refusedLast: c.trial.refusedLast,
        sampling: { temperature: c.rollout.temperature, topP: c.rollout.topP, topK: c.rollout.topK, maxNewTokens: c.rollout.maxResponseTokens },
      },
      seed: deriveSeed(c.seed, iteration),
      signal,
      onProgress: (p) => {
        if (p.trialsDone > progress.done) progress.tick(p.trialsDone - progress.done);
      },
    });
    progress.finish();
    const t1 = performance.now();
    const cpu1 = process.cpuUsage();
    const engine1 = runtime.engineCounts?.();
    // The config's estimator options whole; a method that forces its estimator overrides the configured one.
    const adv = timeBook.time('advantages', () =>
      computeAdvantages(batch.table, { ...estimatorOptions(c.advantage), estimator: methodEstimator(c.method, c.advantage.estimator) }),
    );
    const update: UpdateMetrics = await runtime.update(
      {
        promptIds: batch.promptIds,
        responseIds: batch.responseIds,
        advantages: adv.advantage,
        oldLogprobs: batch.logprobs,
        rowReturns: adv.stepReturn,
        groups: Int32Array.from(batch.table.group),
      },
      c,
    );
    const t2 = performance.now();
    const cpu2 = process.cpuUsage();
    const breakdown = breakdownOf(book0, (t2 - t0) / 1000);
    const cuda = runtime.cudaMemory?.();
    const local = rolloutSums(batch);
    const sums = mine && dist ? await sumOverRanks(local, dist) : local;
    const summary = summaryOfSums(sums);
    const generated = sums.responseTokens;
    const event: IterationEvent = {
      type: 'iteration',
      method: c.method,
      iteration,
      worldSize: dist?.size ?? 1,
      ...summary,
      entropy: update.entropy,
      loss: update.loss,
      clipFraction: update.clipFraction,
      approxKl: update.approxKl,
      gradNorm: update.gradNorm,
      ...(update.lr !== undefined ? { lr: update.lr } : {}),
      ...(update.memory ? { memory: update.memory } : {}),
      rows: sums.rows,
      tokens: generated,
      promptTokens: sums.promptTokens,
      ...(update.computedTokens !== undefined ? { updateTokens: update.computedTokens } : {}),
      ...(engine0 && engine1 ? { promptTokensReused: engine1.reused - engine0.reused, promptTokensPrefilled: engine1.prefilled - engine0.prefilled } : {}),
      tokensPerSecond: (generated + update.tokens) / ((t2 - t0) / 1000),
      rolloutSeconds: (t1 - t0) / 1000,
      updateSeconds: (t2 - t1) / 1000,
      seconds: (t2 - t0) / 1000,
      rolloutCpuSeconds: cpuSeconds(cpu0, cpu1),
      updateCpuSeconds: cpuSeconds(cpu1, cpu2),
      breakdown,
      ...(engine0 && engine1 ? engineUse(engine0, engine1) : {}),
      cpuBusy: cpuSeconds(cpu0, cpu2) / (((t2 - t0) / 1000) * availableParallelism()),
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
      ...(cuda ? { cuda } : {}),
      ...(update.agreement ? { agreement: update.agreement } : {}),
    };
    const checks = { checked: sums.checked, correct: sums.correct };
    if (checks.checked > 0) event.reflectionChecks = checks;
    if (update.skipped > 0) {
      event.skipped = update.steps === 0;
      event.note = `${update.skipped} mini-batch step(s) skipped: non-finite loss or gradient`;
    }
    return event;
  }

  /** Evaluates, keeping the evaluation's transcripts in the run folder (transcripts.jsonl, the latest evaluation's). */
  async #evaluateAndKeep(runtime: PolicyRuntime | null, iteration: number, signal?: AbortSignal): Promise<EvalEvent> {
    const method = this.config.method;
    return this.evaluate(runtime, iteration, signal, {
      onTranscripts: (ts) => this.#write(TRANSCRIPTS_FILE, transcriptJsonLines(ts, { method, iteration })),
    });
  }

  /** The model the config describes (hashes of its base's files), worked out once per trainer. */
  #identity: Promise<ModelIdentity> | undefined;
  #modelIdentity(): Promise<ModelIdentity> {
    this.#identity ??= modelIdentity(this.config);
    return this.#identity;
  }

  /**
   * Saves checkpoint `iteration`: the runtime's files, then the trainer state with the model's identity and a hash of
   * every file saved. `evalPending`: the iteration's evaluation was cut short (a resumed run runs it first).
   */
  async #checkpoint(runtime: PolicyRuntime, iteration: number, evalPending = false): Promise<string> {
    // Every rank holds the same weights: rank 0 writes them. Sharded optimizer state (ZeRO) reaches it from the others.
    if (!this.#main) {
      await runtime.saveFromRank?.();
      return join(this.checkpointsDir, checkpointName(iteration));
    }
    const identity = await this.#modelIdentity();
    const saved = await saveCheckpoint(this.checkpointsDir, iteration, async (dir) => {
      await runtime.save(dir);
      const model = { ...identity, files: await checkpointFileHashes(dir) };
      const state: TrainerState = { iteration, method: this.config.method, seed: this.config.seed, evalPending, model };
      writeFileSync(join(dir, STATE_FILE), JSON.stringify(state, null, 2) + '\n');
      writeFileSync(join(dir, RUN_CONFIG_FILE), JSON.stringify(this.config, null, 2) + '\n');
    });
    // A checkpoint holds what the warm start led to: its saves are no longer needed.
    removeWarmStartSaves(this.runDir);
    return saved;
  }

  /**
   * The trainer state of checkpoint `latest`, checked before anything is loaded from it: the method, seed and an
   * iteration within the run (E_CONFIG, E_CHECKPOINT), then (rank 0, the others follow its verdict) the checkpoint's
   * files and the model the config describes against what was recorded at save (checkResumedModel).
   */
  async #resumedState(latest: string): Promise<TrainerState> {
    const c = this.config;
    const state = readTrainerState(latest);
    if (state.method !== c.method || state.seed !== c.seed) {
      throw new LamerError(
        'E_CONFIG',
        `cannot resume ${latest}: it was trained with method ${state.method} seed ${state.seed}, the config says ${c.method} seed ${c.seed}`,
      );
    }
    if (state.iteration > c.train.iterations) {
      throw new LamerError(
        'E_CHECKPOINT',
        `${join(latest, STATE_FILE)}: iteration ${state.iteration} is past the run's end (train.iterations is ${c.train.iterations}); ` +
          `resume with --set train.iterations=${state.iteration} or more, or start the run over with --force`,
      );
    }
    let refused: { code: string; message: string } | null = null;
    if (this.#main) {
      try {
        await checkResumedModel(latest, state, c, await this.#modelIdentity());
      } catch (e) {
        if (!(e instanceof LamerError)) throw e;
        refused = { code: e.code, message: e.message };
      }
    }
    const dist = this.#options.dist;
    if (dist && dist.size > 1) refused = (await dist.gather(refused))[0];
    if (refused) throw new LamerError(refused.code as LamerError['code'], refused.message);
    return state;
  }

  /** Trains (or, for prompting baselines, only evaluates), yielding events as they happen. */
  async *run(options: RunOptions = {}): AsyncGenerator<TrainerEvent> {
    // The run claims its folder first (one writer per run folder; inside a job's folder, the job holds it). Temporary
    // files of atomic writes cut short by a kill are removed when a run starts and when it ends.
    const claim = this.#main ? claimRunFolder(this.runDir) : undefined;
    if (claim?.tookOver) this.#log(`[${this.config.method}] ${this.runDir}: took over the lock of process ${claim.tookOver.pid}, which is no longer running`);
    try {
      if (this.#main) {
        makeDirs(this.runDir);
        removeStaleTemporaries(this.runDir);
        if (this.config.train.tensorboard) this.#tensorboard = new RunEventWriter(this.runDir);
      }
      try {
        yield* this.#run(options);
      } finally {
        this.#tensorboard?.close();
        this.#tensorboard = null;
        if (this.#main) removeStaleTemporaries(this.runDir);
      }
    } finally {
      claim?.release();
    }
  }

  async *#run(options: RunOptions): AsyncGenerator<TrainerEvent> {
    const c = this.config;
    const { signal } = options;
    this.#write('config.json', JSON.stringify({ ...c, provenance: this.#provenance() }, null, 2) + '\n');
    if (isChanceMethod(c.method)) {
      // A chance row loads no model: it is one evaluation of the random player on the held-out tasks.
      this.#write('metrics.jsonl', '');
      yield this.#emit(await this.#evaluateAndKeep(null, 0, signal));
      return;
    }
    const dist = this.#options.dist;
    const runtime = await (this.#options.runtime ?? createNativeRuntime)(c, this.runDir, dist);
    try {
      const device = runtime.describe?.();
      if (device) this.#log(`[${c.method}] device ${device}${dist ? `; rank 0 of ${dist.size} (${dist.settings.backend})` : ''}`);
      let start = 0;
      // Rank 0 reads which checkpoint to resume from, so that every rank restores the same one (from a folder they
      // all see).
      let latest = options.resume ? latestCheckpoint(this.checkpointsDir) : undefined;
      if (dist && dist.size > 1) latest = (await dist.gather(latest ?? null))[0] ?? undefined;
      // The evaluation of the resumed iteration: still owed (an interrupt cut it short), or the final one as recorded.
      let owed = false;
      let finalEval: EvalEvent | undefined;
      if (latest) {
        const state = await this.#resumedState(latest);
        if (this.#main) cleanInterruptedCheckpoints(this.checkpointsDir);
        await runtime.restore(latest);
        start = state.iteration;
        owed = state.evalPending === true;
        const kept = this.#main ? this.#truncateMetrics(start, owed) : [];
        if (!owed && start === c.train.iterations) {
          // The run had ended: its final evaluation is the result (a comparison job resumed after this method ended
          // reads it here); evaluated again only when the record lost it.
          let recorded = kept.findLast((e): e is EvalEvent => e.type === 'eval' && e.iteration === start);
          if (dist && dist.size > 1) recorded = (await dist.gather(recorded ?? null))[0] ?? undefined;
          if (recorded) finalEval = recorded;
          else owed = true;
        }
        yield this.#emit({ type: 'log', level: 'info', message: `resumed from ${latest} at iteration ${start}` });
      } else {
        this.#write('metrics.jsonl', '');
        // Every rank starts from rank 0's weights.
        await runtime.broadcast?.();
        if (TRAINED_METHODS.includes(c.method) && c.sft.trials > 0 && c.sft.steps > 0) {
          const losses = await this.warmStart(runtime, signal, options.resume);
          yield this.#emit({
            type: 'log',
            level: 'info',
            message: `warm start: ${losses.length} supervised steps, loss ${losses[0]?.toFixed(4)} -> ${losses.at(-1)?.toFixed(4)}`,
          });
        }
      }
      if (!TRAINED_METHODS.includes(c.method)) {
        yield this.#emit(await this.#evaluateAndKeep(runtime, 0, signal));
        return;
      }
      const last = Math.min(options.untilIteration ?? c.train.iterations, c.train.iterations);
      // Iterations completed, and the last one a checkpoint holds: an interrupted run saves the completed ones first.
      let completed = start;
      let saved = start;
      try {
        if (finalEval) yield finalEval;
        if (owed) {
          yield this.#emit(await this.#evaluateAndKeep(runtime, start, signal));
          owed = false;
        }
        for (let it = start + 1; it <= last; it++) {
          signal?.throwIfAborted();
          const event = await this.iterate(runtime, it, signal);
          completed = it;
          if (event.note) yield this.#emit({ type: 'log', level: 'warn', message: `iteration ${it}: ${event.note}` });
          const gap = event.agreement;
          if (gap && c.train.agreementWarnKl > 0 && gap.k3 > c.train.agreementWarnKl) {
            const message =
              `iteration ${it}: the trainer's log-probs of the sampled tokens differ from the engine's (KL ${gap.k3.toExponential(2)}, ` +
              `mean |diff| ${gap.meanAbs.toExponential(2)}, max ${gap.maxAbs.toExponential(2)} over ${gap.tokens} tokens; warning above ` +
              `train.agreementWarnKl ${c.train.agreementWarnKl}): the engine samples with other numerics or weights than the update ` +
              `trains (a lower-precision engine, a stale cache or graph), which biases every importance ratio`;
            this.#log(`[${c.method}] warning: ${message}`);
            yield this.#emit({ type: 'log', level: 'warn', message });
          }
          this.#log(
            `[${c.method}] iter ${it}/${c.train.iterations} reward ${event.reward.toFixed(3)} success ${(100 * event.successRate).toFixed(1)}% ` +
              `valid ${(100 * event.validRatio).toFixed(1)}%${event.reflectionChecks ? ` reflections right ${formatCheckedShare(event.reflectionChecks)}` : ''} ` +
              `loss ${event.loss.toFixed(4)} ${event.seconds.toFixed(1)}s`,
          );
          yield this.#emit(event);
          const isLast = it === c.train.iterations;
          owed = (c.train.evalEvery > 0 && it % c.train.evalEvery === 0) || isLast;
          if (owed) {
            yield this.#emit(await this.#evaluateAndKeep(runtime, it, signal));
            owed = false;
          }
          if ((c.train.checkpointEvery > 0 && it % c.train.checkpointEvery === 0) || isLast || it === last) {
            const t = performance.now();
            const path = await this.#checkpoint(runtime, it);
            yield this.#emit({ type: 'checkpoint', iteration: it, path, seconds: (performance.now() - t) / 1000 });
            saved = it;
          }
        }
      } catch (e) {
        // Interrupted (SIGINT, an abort signal): keep the iterations that completed, so --resume goes on from there,
        // with the evaluation an interrupt cut short marked as owed (the resumed run runs it first). The last iteration
        // is kept this way only when its final evaluation is owed.
        if (signal?.aborted && completed > saved && (completed < c.train.iterations || owed)) {
          const path = await this.#checkpoint(runtime, completed, owed);
          this.#emit({ type: 'checkpoint', iteration: completed, path });
          this.#log(`[${c.method}] interrupted: checkpoint of iteration ${completed} at ${path}; --resume continues from it`);
        }
        throw e;
      }
    } finally {
      await runtime.dispose();
    }
  }
}

/** One line of an environment's provenance: `key value` pairs, nested objects flattened, hashes cut to 12 digits. */
function describeProvenance(p: Record<string, unknown> | undefined): string {
  if (p === undefined) return 'no record';
  const parts: string[] = [];
  const walk = (prefix: string, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) walk(prefix ? `${prefix}.${k}` : k, x);
      return;
    }
    const text = typeof v === 'string' && /^[0-9a-f]{64}$/.test(v) ? v.slice(0, 12) : JSON.stringify(v);
    parts.push(`${prefix} ${text}`);
  };
  walk('', p);
  return parts.join(', ');
}

/** Where a span's `seconds` went: the parts the time book gained since `before`, and the rest as `unaccounted`. */
function breakdownOf(before: TimeParts, seconds: number): TimeBreakdown {
  const parts = partsSince(before, timeBook.snapshot());
  const measured = Object.values(parts).reduce((a, b) => a + b, 0);
  return { ...parts, unaccounted: seconds - measured };
}

/** The engine's batch occupancy and prefix-cache hit rate between two readings of its counts. */
function engineUse(a: EngineCounts, b: EngineCounts): { engine: NonNullable<IterationEvent['engine']> } | Record<string, never> {
  if (b.decodeSteps === undefined || a.decodeSteps === undefined || !b.slots) return {};
  const steps = b.decodeSteps - a.decodeSteps;
  const rows = (b.rowSteps ?? 0) - (a.rowSteps ?? 0);
  const demand = (b.demandSteps ?? 0) - (a.demandSteps ?? 0);
  const reused = b.reused - a.reused;
  const prompt = reused + b.prefilled - a.prefilled;
  return {
    engine: {
      occupancy: steps > 0 ? rows / (steps * b.slots) : 0,
      demandOccupancy: demand > 0 ? rows / demand : 0,
      cacheHitRate: prompt > 0 ? reused / prompt : 0,
    },
  };
}

/** CPU seconds (user and system, every thread of this process) between two process.cpuUsage() readings. */
function cpuSeconds(from: NodeJS.CpuUsage, to: NodeJS.CpuUsage): number {
  return (to.user - from.user + to.system - from.system) / 1e6;
}
