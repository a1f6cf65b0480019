// `lamer eval`: pass@1..N of a checkpoint on held-out tasks, for one or more methods' trial modes.
import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { compareWithFirst, formatComparison } from '../../eval/compare.js';
import { describeTaskSet, formatInvalidTurns, formatReflectionChecks, formatScores } from '../../eval/evaluate.js';
import { evalTrialMode, isChanceMethod, isMethod, type Method } from '../../eval/methods.js';
import { formatPassAtKTable } from '../../eval/table.js';
import { formatDiversity } from '../../eval/diversity.js';
import { loadConfig } from '../../train/config.js';
import { RUN_JSON_MAX_BYTES, writeFileAtomic } from '../../train/checkpoint.js';
import { ensureParentDir, readRegularFile } from '../../util/fs.js';
import { readableJson } from '../../util/json.js';
import { createNativeRuntime } from '../../train/native-runtime.js';
import { evalSummary } from '../../train/job.js';
import { rescoreJob } from '../../train/rescore.js';
import { LamerError } from '../../errors.js';
import { Trainer } from '../../train/trainer.js';
import { joinRunGroup } from '../../train/distributed.js';
import type { EvalEvent } from '../../train/events.js';
import { transcriptJsonLines, type TrialTranscript } from '../../eval/transcripts.js';
import { parseCommandArgs } from '../args.js';
import type { Command } from '../command.js';

const usage = `usage: lamer eval [--model DIR] [--config NAME|FILE] [--method M ...] [--tasks N] [--split eval|select] [--offset I] [--expert-reflections] [--set FIELD=VALUE ...] [--json FILE]
       lamer eval --run JOB_DIR --out DIR [--tasks N] [--split eval|select] [--offset I] [--force]

Evaluates the checkpoint in DIR on held-out tasks (seeds disjoint from training) with each method's trial mode:
lamer and reflexion reflect between attempts; gigpo, grpo, ppo, react and zero-shot get N independent attempts.
random and random-memory are the chance rows and need no model: a uniform draw among the admissible actions, and
the same never repeating an action that ended an earlier attempt in failure.
Prints pass@1..pass@N (and per task type where the environment has types).
  --model    a Hugging Face checkpoint folder (a run's checkpoints/ckpt-N works too); needed unless every method
             is a chance row
  --config   environment, prompts, N and sampling (default: the run config saved beside a run's checkpoint,
             runs/NAME/checkpoints/../config.json, else default)
  --method   repeatable; default the config's method
  --tasks    number of held-out tasks (default: config eval.tasks)
  --split    eval (default): the held-out tasks; select: as many distinct training-split tasks that no training
             rollout or demonstration draws, where settings are compared before they become defaults
  --offset   index of the first task scored in the split's sequence of distinct tasks (default: config eval.offset,
             0: the first tasks, the development set); a set far beyond the tasks used so far is one nothing has
             scored (a confirmation set)
  --expert-reflections
             also evaluate each reflecting method with the environment's scripted expert writing the
             reflections (the model still plays): how well the model acts on memory that is right
  --json     also write the results as JSON
  --transcripts
             write every trial as one JSON line: method, task, each episode's prompts, responses and rewards,
             and the reflection written after it
  --run      re-score a finished comparison job (e.g. runs/default-seed0) on other tasks, its models unchanged:
             each method's final model (a trained method's last checkpoint, the warm start for reflexion, none
             for the chance rows) evaluated with that method's own config and sampling seed; the results go to
             --out as a job folder of their own (config.json, eval.json, compare.json, transcripts), which
             \`lamer compare\` reads like any job's
  --out      where --run writes (refused if it holds results, unless --force)`;

/** The config.json a training run saved beside the checkpoint folder `model` (runs/NAME/checkpoints/ckpt-N). */
export function runConfigBeside(model: string): string | undefined {
  const dir = resolve(model);
  for (const runDir of [join(dir, '..', '..'), dir]) {
    const path = join(runDir, 'config.json');
    if (basename(join(dir, '..')) !== 'checkpoints' && runDir !== dir) continue;
    if (!existsSync(path)) continue;
    // A named pipe or device here is refused (E_CHECKPOINT naming it), not read; text that is not JSON is no run config.
    const text = readRegularFile(path, 'E_CHECKPOINT', RUN_JSON_MAX_BYTES);
    try {
      const c = JSON.parse(text) as Record<string, unknown>;
      // A run config (not a model's config.json, which a checkpoint folder also holds).
      if (c && typeof c === 'object' && 'env' in c && 'method' in c && 'trial' in c) return path;
    } catch {
      // not JSON: not a run config
    }
  }
  return undefined;
}

export const command: Command = {
  name: 'eval',
  summary: 'pass@1..N of a checkpoint on held-out tasks (LaMer, RL baselines, prompting baselines)',
  usage,
  async run(argv) {
    const values = parseCommandArgs('eval', usage, argv, {
      model: { type: 'string' },
      config: { type: 'string' },
      method: { type: 'string', multiple: true },
      tasks: { type: 'string' },
      split: { type: 'string' },
      offset: { type: 'string' },
      set: { type: 'string', multiple: true, default: [] },
      json: { type: 'string' },
      transcripts: { type: 'string' },
      'expert-reflections': { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
      run: { type: 'string' },
      out: { type: 'string' },
      force: { type: 'boolean', default: false },
    });
    if (!values) return 2;
    if (values.run !== undefined || values.out !== undefined) return rescore(values);
    // A run's checkpoint is evaluated with the run's own config unless --config says otherwise.
    const saved = values.config === undefined && values.model ? runConfigBeside(values.model) : undefined;
    values.config ??= saved ?? 'default';
    console.error(`lamer eval: config ${values.config}${saved ? " (the run's own, beside the checkpoint)" : ''}`);
    const overrides = [...(values.set ?? []), 'compare=null', 'sft.trials=0'];
    if (values.model) overrides.push(`model.path=${values.model}`);
    if (values.tasks) overrides.push(`eval.tasks=${values.tasks}`);
    if (values.split) overrides.push(`eval.split=${values.split}`);
    if (values.offset) overrides.push(`eval.offset=${values.offset}`);
    const base = loadConfig(values.config!, overrides);
    const methods = values.method?.length ? values.method : [base.method];
    // Unknown names are left to the config's validation, which says what is allowed.
    if (!values.model && methods.some((m) => !(isMethod(m) && isChanceMethod(m)))) {
      console.error(`lamer eval: --model DIR is required (only the chance rows random and random-memory play without a model)\n\n${usage}`);
      return 2;
    }
    // Output folders are made before the evaluation, so a wrong path fails at once, not after minutes of work.
    for (const file of [values.json, values.transcripts]) if (file) ensureParentDir(file);
    // Each method as the config says, then (with --expert-reflections) each reflecting one again with expert reflections.
    const runs: string[][] = [];
    for (const method of methods) {
      runs.push([`method=${method}`]);
      if (values['expert-reflections'] && base.eval.reflections !== 'expert' && evalTrialMode(method as Method).reflect) {
        runs.push([`method=${method}`, 'eval.reflections=expert']);
      }
    }
    // Under torchrun: the ranks split every evaluation's tasks and gather them; rank 0 prints and writes.
    const { dist, device } = joinRunGroup(loadConfig(values.config!, overrides).model.device);
    if (device) overrides.push(`model.device=${device}`);
    const main = dist?.isMain ?? true;
    const print = (line: string) => {
      if (main) console.log(line);
    };
    const results: EvalEvent[] = [];
    let lines = '';
    for (const run of runs) {
      const config = loadConfig(values.config!, [...overrides, ...run]);
      const trainer = new Trainer(config, { runtime: createNativeRuntime, progress: !values.quiet, dist });
      // The chance rows load no model.
      const runtime = isChanceMethod(config.method) ? null : await createNativeRuntime(config, trainer.runDir, dist);
      try {
        let trials: TrialTranscript[] = [];
        const r = await trainer.evaluate(runtime, 0, undefined, { onTranscripts: (ts) => (trials = ts) });
        results.push(r);
        if (values.transcripts) lines += transcriptJsonLines(trials, { method: r.method, ...(r.reflections ? { reflections: r.reflections } : {}) });
      } finally {
        await runtime?.dispose();
      }
    }
    // Rows with expert reflections are named apart from the same method's own.
    const labelled = results.map((r) => ({ ...r, method: r.reflections === 'expert' ? `${r.method} (expert reflections)` : r.method }));
    await dist?.close();
    if (!main) return 0;
    // What was scored, from the records (every method of this call scored the same tasks).
    const scored = results[0]?.taskSet;
    if (scored) print(`pass@k on ${describeTaskSet(scored)} (task hash ${scored.hash.slice(0, 12)})`);
    print(
      formatPassAtKTable(
        labelled.map((r) => ({
          method: r.method,
          env: r.env,
          passAtK: r.passAtK,
          tasks: r.tasks,
          byType: r.byType,
          tasksByType: r.tasksByType,
          typeSplits: r.typeSplits,
          bySplit: r.bySplit,
        })),
      ),
    );
    // Every method ran on the same held-out tasks: the first against each other one, paired by task.
    for (const c of compareWithFirst(labelled, base.trial.episodes, { seed: base.seed })) console.log(formatComparison(c));
    for (const r of labelled) if (r.reflectionChecks && r.reflections !== 'expert') console.log(formatReflectionChecks(r.method, r.reflectionChecks));
    for (const r of labelled) if (r.scoreAtK) console.log(formatScores(r.method, r.scoreAtK));
    for (const r of labelled) if (r.turns) console.log(formatInvalidTurns(r.method, r.turns));
    for (const r of labelled) if (r.diversity) console.log(formatDiversity(r.method, r.diversity));
    if (values.json) {
      writeFileAtomic(values.json, readableJson(results.map(evalSummary)));
      console.log(`wrote ${values.json}`);
    }
    if (values.transcripts) {
      writeFileAtomic(values.transcripts, lines);
      console.log(`wrote ${values.transcripts} (${results.reduce((n, r) => n + r.tasks, 0)} trials)`);
    }
    return 0;
  },
};

/** `lamer eval --run JOB --out DIR`: a finished job's models scored on other tasks (src/train/rescore.ts). */
async function rescore(values: {
  run?: string;
  out?: string;
  tasks?: string;
  split?: string;
  offset?: string;
  force?: boolean;
  quiet?: boolean;
  model?: string;
  method?: string[];
  config?: string;
  set?: string[];
  json?: string;
  transcripts?: string;
}): Promise<number> {
  const conflicting = (['model', 'method', 'config', 'json', 'transcripts'] as const).filter(
    (k) => values[k] !== undefined && !(Array.isArray(values[k]) && values[k].length === 0),
  );
  if (!values.run || !values.out || conflicting.length > 0 || (values.set?.length ?? 0) > 0) {
    console.error(
      `lamer eval: --run JOB_DIR and --out DIR go together${conflicting.length || values.set?.length ? `, without ${[...conflicting, ...(values.set?.length ? ['set'] : [])].map((k) => `--${k}`).join(', ')} (the job's own models and configs are scored)` : ''}\n\n${usage}`,
    );
    return 2;
  }
  const number = (flag: string, text: string | undefined, min: number): number | undefined => {
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!Number.isInteger(n) || n < min)
      throw new LamerError('E_ARG', `lamer eval: --${flag} expects an integer of at least ${min}, found ${JSON.stringify(text)}`);
    return n;
  };
  if (values.split !== undefined && values.split !== 'eval' && values.split !== 'select') {
    console.error(`lamer eval: --split expects eval or select, found ${JSON.stringify(values.split)}\n\n${usage}`);
    return 2;
  }
  const result = await rescoreJob(values.run, {
    out: values.out,
    tasks: number('tasks', values.tasks, 1),
    offset: number('offset', values.offset, 0),
    ...(values.split ? { split: values.split as 'eval' | 'select' } : {}),
    force: values.force,
    progress: !values.quiet,
  });
  const scored = result.results[0]?.taskSet;
  if (scored) console.log(`pass@k on ${describeTaskSet(scored)} (task hash ${scored.hash.slice(0, 12)})`);
  console.log(result.table);
  console.log(`wrote ${result.runDir} (eval.json, compare.json, each method's transcripts.jsonl)`);
  return 0;
}
