// Jobs the CLI runs: one training run, or a comparison (one shared warm start, then each method trained from it at
// an equal episode budget and evaluated on the same held-out tasks), with eval.json and a pass@k table at the end.
// Every comparison also evaluates the chance players on the same tasks (SPEC §11), so its table says where chance is.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { makeDirs, readRegularFile } from '../util/fs.js';
import { join, resolve } from 'node:path';
import { compareWithFirst, formatComparison, type PairedComparison } from '../eval/compare.js';
import { formatInvalidTurns, formatReflectionChecks, formatScores } from '../eval/evaluate.js';
import { formatPassAtKTable } from '../eval/table.js';
import { formatDiversity } from '../eval/diversity.js';
import { CHANCE_METHODS, TRAINED_METHODS, isChanceMethod, type Method } from '../eval/methods.js';
import { entryMethod, entryName, validateConfig, variantConfig, variantOverrides, type CompareEntry, type TrainerConfig } from './config.js';
import { readableJson } from '../util/json.js';
import { LamerError, hasCode } from '../errors.js';
import { LOCK_FILE, claimRunFolder, type RunFolderClaim } from './run-lock.js';
import { RUN_JSON_MAX_BYTES, latestCheckpoint, listCheckpoints, removeStaleTemporaries, writeFileAtomic } from './checkpoint.js';
import type { EvalEvent, TrainerEvent } from './events.js';
import { createNativeRuntime } from './native-runtime.js';
import { isCheckpointDir } from '../model/policy.js';
import type { PolicyRuntime } from './runtime.js';
import { Trainer } from './trainer.js';
import { removeWarmStartSaves, WARM_START_SAVES } from './warm-start.js';
import type { DistContext } from './distributed.js';

export type RuntimeFactory = (config: TrainerConfig, runDir: string, dist?: DistContext) => Promise<PolicyRuntime>;

export interface JobOptions {
  /** Default: the native runtime. */
  runtime?: RuntimeFactory;
  resume?: boolean;
  /** Replace a run folder that already holds a run (default: refuse, naming --resume, --name and --force). */
  force?: boolean;
  signal?: AbortSignal;
  progress?: boolean;
  log?: (line: string) => void;
  /** Called with every event of every run. */
  onEvent?: (event: TrainerEvent, method: string) => void;
  /** Data parallel: this process is one rank of the group (see src/train/distributed.ts); rank 0 writes the folder. */
  dist?: DistContext;
}

/**
 * A method's final evaluation as eval.json holds it: the evaluation event without its type and iteration, and without
 * what the clock decided (its wall time and seconds, which metrics.jsonl keeps), so that scoring the same checkpoints
 * again writes the same file; a variant's under the variant's name (`method`), with the method it varies (`variantOf`).
 */
export type EvalSummary = Omit<EvalEvent, 'type' | 'iteration' | 'method' | 'wallTime' | 'seconds' | 'breakdown'> & { method: string; variantOf?: Method };

export function evalSummary({
  type: _type,
  iteration: _iteration,
  wallTime: _wall,
  seconds: _seconds,
  breakdown: _breakdown,
  ...summary
}: EvalEvent): EvalSummary {
  return summary;
}

export interface JobResult {
  runDir: string;
  results: EvalSummary[];
  /** The pass@k table, followed (for a comparison) by the paired differences of the first method with each other. */
  table: string;
  /** The first method against each other one, on the same held-out tasks (empty for a single run). */
  comparisons: PairedComparison[];
}

async function runOne(config: TrainerConfig, options: JobOptions): Promise<EvalSummary | undefined> {
  const trainer = new Trainer(config, { runtime: options.runtime, progress: options.progress, log: options.log, dist: options.dist });
  let last: EvalEvent | undefined;
  for await (const event of trainer.run({ resume: options.resume, signal: options.signal })) {
    options.onEvent?.(event, config.method);
    if (event.type === 'eval') last = event;
  }
  return last && evalSummary(last);
}

/** The entries a comparison evaluates: the config's list, then the chance rows it does not list already. */
export function comparisonMethods(compare: readonly CompareEntry[]): CompareEntry[] {
  return [...compare, ...CHANCE_METHODS.filter((m) => !compare.includes(m))];
}

function describeRun(method: Method, iterations: number): string {
  if (TRAINED_METHODS.includes(method)) return `training ${iterations} iterations`;
  if (isChanceMethod(method)) return '(chance row: random player, no model)';
  return '(prompting baseline: evaluation only)';
}

/** Runs a config: a single method, or the comparison its `compare` field lists (with the chance rows). */
export async function runJob(config: TrainerConfig, options: JobOptions): Promise<JobResult> {
  const runDir = resolve(config.runsDir, config.name);
  const dist = options.dist && options.dist.size > 1 ? options.dist : undefined;
  const main = dist?.isMain ?? true;
  const log = options.log ?? ((l: string) => process.stderr.write(l + '\n'));
  // Rank 0 claims the folder before anything is read or written in it (one writer per run folder), and every rank
  // stops when it could not.
  let claim: RunFolderClaim | undefined;
  let refused: string | null = null;
  if (main) {
    try {
      claim = claimRunFolder(runDir);
    } catch (e) {
      if (!dist || !hasCode(e, 'E_LOCKED')) throw e;
      refused = (e as Error).message;
    }
  }
  if (dist) refused = (await dist.gather(refused))[0];
  if (refused !== null) throw new LamerError('E_LOCKED', refused);
  if (claim?.tookOver) log(`[job] ${runDir}: took over the lock of process ${claim.tookOver.pid} (${claim.tookOver.command}), which is no longer running`);
  try {
    // Rank 0 looks at the folder (and may replace it); every rank follows what it found.
    let existing = main ? existingRun(runDir) : undefined;
    if (dist) existing = (await dist.gather(existing ?? null))[0] ?? undefined;
    if (existing === 'finished' && options.resume) {
      // Nothing to continue: the results as they are, and no file touched.
      log(`[job] ${runDir} has finished already (eval.json); nothing to resume`);
      return { runDir, ...summarizeEvaluations(readFinished(runDir), config) };
    }
    if (existing && !options.resume) {
      if (!options.force) {
        throw new LamerError(
          'E_EXISTS',
          `${runDir} already holds a ${existing} run; continue it with --resume, give this one another name with --name NAME, or replace it with --force`,
        );
      }
      // Everything but the lock this job holds.
      if (main) for (const entry of readdirSync(runDir)) if (entry !== LOCK_FILE) rmSync(join(runDir, entry), { recursive: true, force: true });
    }
    if (main) {
      makeDirs(runDir);
      removeStaleTemporaries(runDir, 1);
    }
    await dist?.barrier();
    try {
      return await runJobIn(runDir, config, options);
    } finally {
      if (main) removeStaleTemporaries(runDir, 1);
    }
  } finally {
    claim?.release();
  }
}

async function runJobIn(runDir: string, config: TrainerConfig, options: JobOptions): Promise<JobResult> {
  const dist = options.dist && options.dist.size > 1 ? options.dist : undefined;
  const main = dist?.isMain ?? true;
  const log = main ? (options.log ?? ((l: string) => process.stderr.write(l + '\n'))) : () => {};
  const results: EvalSummary[] = [];
  // The job's resolved config beside its results (a single run's Trainer writes the same file itself).
  if (main && config.compare) writeFileAtomic(join(runDir, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  if (!config.compare) {
    const r = await runOne(config, options);
    if (r) results.push(r);
  } else {
    // One warm start shared by every method, so the comparison starts from the same weights.
    let modelPath = config.model.path;
    // Every method that runs the model starts from the warm start: the trained ones and the prompting baselines
    // (e.g. `reflexion`, the warm start frozen); only a job of chance rows alone has no use for it.
    const needsWarmStart = config.sft.trials > 0 && config.sft.steps > 0 && config.compare.some((m) => !isChanceMethod(entryMethod(m)));
    if (needsWarmStart) {
      const warmDir = join(runDir, 'warm-start');
      if (!(options.resume && isCheckpointDir(warmDir))) {
        const trainer = new Trainer({ ...config, compare: undefined }, { runtime: options.runtime, progress: options.progress, log, dist: options.dist });
        const runtime = await (options.runtime ?? createNativeRuntime)(trainer.config, runDir, options.dist);
        try {
          await runtime.broadcast?.();
          const losses = await trainer.warmStart(runtime, options.signal, options.resume);
          log(`[job] warm start: loss ${losses[0]?.toFixed(4)} -> ${losses.at(-1)?.toFixed(4)}; saving ${warmDir}`);
          if (main) {
            await runtime.save(warmDir);
            removeWarmStartSaves(runDir);
          }
          // The methods load the warm start from the folder: every rank waits until rank 0 wrote it.
          await dist?.barrier();
        } finally {
          await runtime.dispose();
        }
      } else if (main) {
        removeWarmStartSaves(runDir); // left by a stop between saving the warm start and removing them
      }
      modelPath = warmDir;
    }
    for (const entry of comparisonMethods(config.compare)) {
      const [name, method] = [entryName(entry), entryMethod(entry)];
      const from = typeof entry === 'string' ? undefined : entry.from;
      const fromModel = from === undefined ? undefined : latestCheckpoint(join(runDir, from, 'checkpoints'));
      if (from !== undefined && fromModel === undefined) {
        throw new LamerError(
          'E_CHECKPOINT',
          `${runDir}/${from}: no checkpoint for variant '${name}' to evaluate (set train.checkpointEvery so that ${from} saves one)`,
        );
      }
      const sub = validateConfig(
        variantConfig(
          {
            ...config,
            compare: undefined,
            method,
            name: join(config.name, name),
            model: { ...config.model, path: fromModel ?? modelPath },
            sft: { ...config.sft, trials: 0 },
          },
          entry,
        ),
        typeof entry === 'string' ? 'config' : `variant '${name}'`,
      );
      const what = from !== undefined ? `${method} of ${from}'s final model` : `${method} with ${variantOverrides(entry).join(', ') || 'no change'}`;
      log(`[job] ${name}: ${describeRun(method, sub.train.iterations)}${name === method ? '' : ` (${what})`}`);
      const r = await runOne(sub, options);
      // A variant's evaluation is recorded under its name, so tables and comparisons tell it from its method.
      if (r) results.push(name === method ? r : { ...r, method: name, variantOf: method });
    }
  }
  const summary = summarizeEvaluations(results, config);
  if (main) {
    writeFileAtomic(join(runDir, 'eval.json'), readableJson(results));
    if (summary.comparisons.length > 0) writeFileAtomic(join(runDir, 'compare.json'), readableJson(summary.comparisons));
  }
  return { runDir, ...summary };
}

/** The pass@k table and the paired comparisons of a job's final evaluations. */
export function summarizeEvaluations(results: EvalSummary[], config: TrainerConfig): Omit<JobResult, 'runDir'> {
  const comparisons = compareWithFirst(results, config.trial.episodes, { seed: config.seed });
  const table = [
    formatPassAtKTable(
      results.map((r) => ({
        method: r.method,
        env: r.env,
        passAtK: r.passAtK,
        tasks: r.tasks,
        // Per task type only where the environment says which types are in distribution (ALFWorld).
        ...(r.typeSplits ? { byType: r.byType, tasksByType: r.tasksByType, typeSplits: r.typeSplits, bySplit: r.bySplit } : {}),
      })),
    ),
    ...comparisons.map(formatComparison),
    ...results.flatMap((r) => (r.reflectionChecks ? [formatReflectionChecks(r.method, r.reflectionChecks)] : [])),
    ...results.flatMap((r) => (r.scoreAtK ? [formatScores(r.method, r.scoreAtK)] : [])),
    ...results.flatMap((r) => (r.turns ? [formatInvalidTurns(r.method, r.turns)] : [])),
    ...results.flatMap((r) => (r.diversity ? [formatDiversity(r.method, r.diversity)] : [])),
  ].join('\n');
  return { results, table, comparisons };
}

/** 'finished' when the folder holds a job's eval.json, 'started' when it holds any part of a run, else undefined. */
export function existingRun(runDir: string): 'finished' | 'started' | undefined {
  if (!existsSync(runDir)) return undefined;
  if (existsSync(join(runDir, 'eval.json'))) return 'finished';
  // Temporaries of a killed write do not make a run: metrics, a complete checkpoint, a saved warm start or its saves do.
  const parts = (dir: string) =>
    existsSync(join(dir, 'metrics.jsonl')) ||
    listCheckpoints(join(dir, 'checkpoints')).length > 0 ||
    isCheckpointDir(join(dir, 'warm-start')) ||
    existsSync(join(dir, WARM_START_SAVES));
  if (parts(runDir)) return 'started';
  const methods = readdirSync(runDir, { withFileTypes: true }).filter((e) => e.isDirectory());
  return methods.some((e) => parts(join(runDir, e.name))) ? 'started' : undefined;
}

function readFinished(runDir: string): EvalSummary[] {
  const path = join(runDir, 'eval.json');
  try {
    const results = JSON.parse(readRegularFile(path, 'E_CHECKPOINT', RUN_JSON_MAX_BYTES)) as EvalSummary[];
    if (!Array.isArray(results)) throw new Error('expected a list of evaluations');
    return results;
  } catch (e) {
    throw new LamerError('E_CHECKPOINT', `${path}: cannot be read as a finished job's results (${(e as Error).message}); remove it to resume the run`);
  }
}
