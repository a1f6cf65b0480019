// Re-scoring a finished comparison job on other tasks, its models unchanged: each method's final model (a trained
// method's last checkpoint, a prompting baseline's starting model, no model for a chance row) is evaluated as the job
// evaluated it (the method's own config and sampling seed) on the tasks asked for, and the results are written as a job
// folder of their own (config.json, eval.json, compare.json, each method's transcripts), which `lamer compare` and the
// results script read like any job's. This is how a setting chosen on one set of tasks is confirmed on tasks nothing
// has scored (SPEC §11) without training again.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LamerError } from '../errors.js';
import { describeTaskSet } from '../eval/evaluate.js';
import { isChanceMethod, TRAINED_METHODS, type Method } from '../eval/methods.js';
import { transcriptJsonLines } from '../eval/transcripts.js';
import { makeDirs, readRegularFile } from '../util/fs.js';
import { readableJson } from '../util/json.js';
import { RUN_JSON_MAX_BYTES, latestCheckpoint, writeFileAtomic } from './checkpoint.js';
import { validateConfig, type TrainerConfig } from './config.js';
import { evalSummary, existingRun, summarizeEvaluations, type EvalSummary, type JobResult } from './job.js';
import { createNativeRuntime } from './native-runtime.js';
import { LOCK_FILE, claimRunFolder } from './run-lock.js';
import type { RuntimeFactory } from './job.js';
import { Trainer, TRANSCRIPTS_FILE } from './trainer.js';
import { readTrainerState } from './trainer-state.js';

export interface RescoreOptions {
  /** The tasks to score (default: the job's own). */
  split?: 'eval' | 'select';
  offset?: number;
  tasks?: number;
  /** The folder the results go to (a job folder of their own; never the job's). */
  out: string;
  /** Replace `out` when it holds results already. */
  force?: boolean;
  runtime?: RuntimeFactory;
  progress?: boolean;
  log?: (line: string) => void;
}

function readJson(path: string, what: string): unknown {
  try {
    return JSON.parse(readRegularFile(path, 'E_ARG', RUN_JSON_MAX_BYTES));
  } catch (e) {
    throw new LamerError('E_ARG', `${path}: cannot read ${what} (${(e as Error).message})`);
  }
}

/**
 * The model an entry of a finished job ended with (`name`: its folder, the method's or a variant's name): its last
 * checkpoint when trained, else what it started from.
 */
function finalModel(jobDir: string, name: string, method: Method, config: TrainerConfig): string | undefined {
  if (isChanceMethod(method)) return undefined;
  if (TRAINED_METHODS.includes(method)) {
    const ckpt = latestCheckpoint(join(jobDir, name, 'checkpoints'));
    if (!ckpt) throw new LamerError('E_ARG', `${jobDir}/${name}: no checkpoint to re-score (the job's ${name} run did not finish)`);
    return ckpt;
  }
  if (!config.model.path) throw new LamerError('E_ARG', `${jobDir}/${name}/config.json: names no model (model.path) to re-score`);
  return config.model.path;
}

/** The iteration a checkpoint holds (its trainer state, read as a resumed run reads it). */
function checkpointIteration(ckpt: string): number {
  return readTrainerState(ckpt).iteration;
}

/** Evaluates every method of the finished comparison job in `jobDir` on other tasks and writes the results to `out`. */
export async function rescoreJob(jobDir: string, options: RescoreOptions): Promise<JobResult> {
  const dir = resolve(jobDir);
  const out = resolve(options.out);
  if (out === dir || out.startsWith(dir + '/')) throw new LamerError('E_ARG', `re-score: the results go to a folder of their own, not into the job ${dir}`);
  if (!existsSync(join(dir, 'eval.json'))) throw new LamerError('E_ARG', `${dir}: no eval.json; re-score a comparison job that has finished`);
  const finished = readJson(join(dir, 'eval.json'), "the job's results") as EvalSummary[];
  if (!Array.isArray(finished) || finished.length === 0) throw new LamerError('E_ARG', `${dir}/eval.json: expected a non-empty list of evaluations`);
  const log = options.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const claim = claimRunFolder(out);
  try {
    if (existingRun(out)) {
      if (!options.force) throw new LamerError('E_EXISTS', `${out} already holds results; name another folder or replace them with --force`);
      for (const entry of readdirSync(out)) if (entry !== LOCK_FILE) rmSync(join(out, entry), { recursive: true, force: true });
    }
    const scored = (c: TrainerConfig): TrainerConfig['eval'] => ({
      ...c.eval,
      ...(options.split !== undefined ? { split: options.split } : {}),
      ...(options.offset !== undefined ? { offset: options.offset } : {}),
      ...(options.tasks !== undefined ? { tasks: options.tasks } : {}),
    });
    const results: EvalSummary[] = [];
    let first: TrainerConfig | undefined;
    for (const { method } of finished) {
      const path = join(dir, method, 'config.json');
      if (!existsSync(path)) throw new LamerError('E_ARG', `${dir}/${method}: no config.json; re-score a comparison job's folder`);
      const own = validateConfig(readJson(path, `${method}'s config`), path);
      const model = finalModel(dir, method, own.method, own);
      const config = validateConfig({ ...own, eval: scored(own), runsDir: out, name: method, model: { ...own.model, ...(model ? { path: model } : {}) } });
      first ??= config;
      log(
        `[rescore] ${method}: ${model ?? 'no model (chance row)'} on ${describeTaskSet({ split: config.eval.split, offset: config.eval.offset, count: config.eval.tasks })}`,
      );
      makeDirs(join(out, method));
      const trainer = new Trainer(config, { progress: options.progress, log });
      const runtime = isChanceMethod(config.method) ? null : await (options.runtime ?? createNativeRuntime)(config, trainer.runDir);
      try {
        // Under the iteration the model was trained to (0 for a model not trained in the job), as the job recorded it.
        const iteration = TRAINED_METHODS.includes(own.method) ? checkpointIteration(model!) : 0;
        const event = await trainer.evaluate(runtime, iteration, undefined, {
          onTranscripts: (ts) => writeFileAtomic(join(out, method, TRANSCRIPTS_FILE), transcriptJsonLines(ts, { method, iteration })),
        });
        writeFileAtomic(join(out, method, 'config.json'), JSON.stringify(config, null, 2) + '\n');
        // A variant keeps its name (and the method it varies), as the job recorded it.
        results.push(method === own.method ? evalSummary(event) : { ...evalSummary(event), method, variantOf: own.method });
      } finally {
        await runtime?.dispose();
      }
    }
    // The job's config with the tasks re-scored on, for the seed and settings readers look up.
    const job = existsSync(join(dir, 'config.json')) ? (readJson(join(dir, 'config.json'), "the job's config") as TrainerConfig) : first!;
    writeFileAtomic(join(out, 'config.json'), JSON.stringify({ ...job, eval: scored(validateConfig(job)) }, null, 2) + '\n');
    const summary = summarizeEvaluations(results, first!);
    writeFileAtomic(join(out, 'eval.json'), readableJson(results));
    if (summary.comparisons.length > 0) writeFileAtomic(join(out, 'compare.json'), readableJson(summary.comparisons));
    return { runDir: out, ...summary };
  } finally {
    claim.release();
  }
}
