// `lamer compare RUN_DIR...`: reads the final evaluations of several runs (e.g. the seeds of `lamer train --seeds 0-4`)
// from their folders and prints pass@k per method and run, the paired task bootstrap inside each run, and across runs
// the mean difference with a Student-t interval over the runs. The table comes from the run folders alone, so nothing
// is pooled by hand.
import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { compareRuns, formatRunsComparison, type RunEvaluation } from '../../eval/across-runs.js';
import { readTaskSet } from '../../eval/evaluate.js';
import { LamerError } from '../../errors.js';
import { RUN_JSON_MAX_BYTES, writeFileAtomic } from '../../train/checkpoint.js';
import { ensureParentDir, readRegularFile } from '../../util/fs.js';
import { readableJson } from '../../util/json.js';
import { parseCommandLine } from '../args.js';
import type { Command } from '../command.js';

const usage = `usage: lamer compare RUN_DIR... [--a METHOD] [--resamples N] [--json FILE]

Reads RUN_DIR/eval.json of each run (the final evaluation of every method; a comparison job writes it) and prints:
pass@k per method and run with the mean over runs; for METHOD (default: each run's first method) against every other
method that all runs evaluated, the paired bootstrap over each run's tasks, and across runs the mean of the
runs' differences (pass@N and the gain pass@1->N) with a 95% Student-t interval on runs - 1 degrees of freedom.
Every run must have been scored on the same tasks (eval.json records each evaluation's split, first task, count and
task hash); runs scored on different tasks, or without that record, stop it with E_TASKS.
  --a          the method compared with the others
  --resamples  bootstrap resamples per run (default 2000)
  --json       also write the comparison as JSON`;

/** A run folder's final evaluation (eval.json) and, where its config says, its seed. */
export function readRunEvaluation(dir: string): RunEvaluation {
  const path = join(dir, 'eval.json');
  if (!existsSync(path)) {
    throw new LamerError('E_ARG', `${dir}: no eval.json; pass run folders whose job has finished (e.g. runs/default-seed0)`);
  }
  let results: RunEvaluation['results'];
  const text = readRegularFile(path, 'E_ARG', RUN_JSON_MAX_BYTES);
  try {
    results = JSON.parse(text) as RunEvaluation['results'];
  } catch (e) {
    throw new LamerError('E_ARG', `${path}: not valid JSON (${(e as Error).message})`);
  }
  if (!Array.isArray(results) || results.length === 0 || results.some((r) => typeof r?.method !== 'string' || !Array.isArray(r.passAtK))) {
    throw new LamerError('E_ARG', `${path}: expected a non-empty list of evaluations with method and passAtK`);
  }
  // What each evaluation scored, as recorded (a malformed record counts as none, which comparisons refuse).
  results = results.map((r) => {
    const { taskSet, ...rest } = r;
    const read = readTaskSet(taskSet);
    return read ? { ...rest, taskSet: read } : rest;
  });
  // A comparison job keeps its resolved config in its folder (and each method's in its subfolder); a single run keeps
  // it in the folder itself.
  let seed: number | undefined;
  for (const config of [join(dir, 'config.json'), join(dir, results[0].method, 'config.json')]) {
    if (!existsSync(config)) continue;
    let parsed: { seed?: unknown } | null;
    const text = readRegularFile(config, 'E_ARG', RUN_JSON_MAX_BYTES);
    try {
      parsed = JSON.parse(text) as { seed?: unknown } | null;
    } catch (e) {
      throw new LamerError('E_ARG', `${config}: not valid JSON (${(e as Error).message})`);
    }
    const value = parsed?.seed;
    if (typeof value === 'number') {
      seed = value;
      break;
    }
  }
  return { run: basename(resolve(dir)), ...(seed !== undefined ? { seed } : {}), results };
}

export const command: Command = {
  name: 'compare',
  summary: 'compare methods over several runs (seeds): per-run paired bootstrap, across-run t-intervals',
  usage,
  async run(argv) {
    const parsed = parseCommandLine('compare', usage, argv, {
      a: { type: 'string' },
      resamples: { type: 'string' },
      json: { type: 'string' },
    });
    if (!parsed) return 2;
    const { values, positionals: dirs } = parsed;
    if (dirs.length === 0) {
      console.error(`lamer compare: name at least one run folder\n\n${usage}`);
      return 2;
    }
    const resamples = values.resamples === undefined ? undefined : Number(values.resamples);
    if (resamples !== undefined && !(Number.isInteger(resamples) && resamples > 0)) {
      console.error(`lamer compare: --resamples expects a positive integer, found ${values.resamples}\n\n${usage}`);
      return 2;
    }
    if (values.json) ensureParentDir(values.json);
    const comparison = compareRuns(dirs.map(readRunEvaluation), { a: values.a, resamples });
    console.log(formatRunsComparison(comparison));
    if (values.json) {
      writeFileAtomic(values.json, readableJson(comparison));
      console.log(`wrote ${values.json}`);
    }
    return 0;
  },
};
