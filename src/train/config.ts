// The trainer's one typed config object (SPEC §2-§7 defaults), validated at the door. Configs are YAML files in
// configs/ (a file may `extends:` another by name), overridden from the command line with `--set a.b=c`.
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, parseDocument } from 'yaml';
import { z } from 'zod';
import { LamerError } from '../errors.js';
import { readRegularFile } from '../util/fs.js';

import { METHODS, METHOD_SPECS, TRAINED_METHODS, type Method } from '../eval/methods.js';
import { LORA_MODULES } from '../model/lora.js';
import { PRESET_NAMES, TOKENIZER_CHOICES } from '../model/presets.js';
import { lossSchema, optimSchema } from './options.js';
import { advantageConfigSchema } from '../algo/options.js';
import { engineOptionsSchema } from '../engine/options.js';
import { ENV_NAMES, PAPER_PROMPT_ENVS } from '../envs/registry.js';
import { PROMPT_STYLES, type PromptStyle } from '../envs/types.js';
import { TASK_BLOCKS, TASK_BLOCK_SIZE } from '../envs/common/seeds.js';

const positiveInt = z.number().int().positive();
const unitInterval = z.number().min(0).max(1);

const loraSchema = z
  .object({
    r: positiveInt.max(4096).default(16).describe('rank of the adapter'),
    alpha: z.number().positive().nullable().default(null).describe('scale numerator: the update is (alpha / r) B A (null: 2 r)'),
    dropout: z.number().min(0).lt(1).default(0).describe('dropout on the adapter input in training forwards'),
    targets: z
      .union([z.literal('all-linear'), z.array(z.enum(LORA_MODULES)).min(1)])
      .default('all-linear')
      .describe(`the projections adapted on every layer: all-linear, or a list of ${LORA_MODULES.join(', ')}`),
    rslora: z.boolean().default(false).describe('rank-stabilised scale alpha / sqrt(r)'),
    merged: z
      .boolean()
      .default(false)
      .describe('generate from merged copies W + (alpha / r) B A: faster rollouts for a compute-dtype copy of every adapted weight'),
  })
  .strict();

const modelSchema = z
  .object({
    /** A Hugging Face checkpoint folder; when absent, `init` creates one in the run folder. */
    path: z.string().min(1).optional().describe('a Hugging Face checkpoint folder (Qwen3, Qwen2, Llama); absent: init creates a model in the run folder'),
    init: z
      .object({
        preset: z
          .enum(PRESET_NAMES)
          .default('small')
          .describe('size of the created model: tiny (hidden 64, 2 layers), mini (hidden 128, 2 layers) or small (hidden 256, 4 layers)'),
        tokenizer: z
          .enum(TOKENIZER_CHOICES)
          .default('compact')
          .describe(
            'compact (one token per grid cell, for models trained from scratch), compact-sokoban (also one token per Sokoban symbol and move), ' +
              'compact-alfworld (also one token per ALFWorld object or receptacle name with its number), compact-webshop (also one ' +
              "token per word of WebShop's generated catalog and pages and per product id of its default catalog) or qwen3",
          ),
        seed: z.number().int().nonnegative().nullable().default(null).describe("seed of the created model's random weights (null: the run seed)"),
      })
      .strict()
      .default({ preset: 'small', tokenizer: 'compact', seed: null })
      .describe('the model created when no path is given'),
    /** `auto`: CUDA when the addon has CUDA and sees a GPU, else the CPU (the run's first log line says which). */
    device: z
      .string()
      .regex(/^(auto|cpu|cuda(:\d+)?)$/, "expected 'auto', 'cpu', 'cuda' or 'cuda:N'")
      .default('auto')
      .describe('auto (CUDA when the addon has it and sees a GPU), cpu, cuda or cuda:N'),
    dtype: z
      .enum(['float32', 'bfloat16'])
      .nullable()
      .default(null)
      .describe("compute dtype of the forward (null: the device's, float32 on the CPU and bfloat16 on CUDA)"),
    /**
     * `compact` prompts for tiny models trained from scratch; `full` for pretrained LLMs; `paper` LaMer's own templates,
     * read from the LaMer checkout named by env.options.lamerSource (all four environments).
     */
    promptStyle: z
      .enum(PROMPT_STYLES as [PromptStyle, ...PromptStyle[]])
      .default('compact')
      .describe("compact prompts for small models trained from scratch, full prompts for pretrained LLMs, paper: LaMer's templates (env.options.lamerSource)"),
    enableThinking: z.boolean().default(false).describe('let a Qwen3 chat template open a thinking block'),
    /**
     * Train a LoRA adapter instead of every weight (docs/lora.md): the base frozen in the compute dtype, A and B in
     * fp32 with AdamW. Checkpoints are then peft adapter folders. null: full training.
     */
    lora: loraSchema.nullable().default(null).describe('a LoRA adapter to train instead of every weight (null: full training); e.g. --set model.lora.r=64'),
    /** A peft adapter folder loaded over the model (model.path or the preset) to train further or evaluate. */
    adapter: z.string().min(1).nullable().default(null).describe('a peft LoRA adapter folder loaded over the model, to train further or evaluate'),
  })
  .strict();

const envSchema = z
  .object({
    /** `custom`: an Environment of your own, given to the Trainer as `options.env`. */
    name: z.enum([...ENV_NAMES, 'custom']).describe(`the environment: ${ENV_NAMES.join(', ')}, or custom (an Environment passed to the Trainer)`),
    /** Passed to createEnv (sizes, limits); validated by the environment itself. */
    options: z.record(z.string(), z.unknown()).default({}).describe('options passed to the environment (board size, turn limit, ...)'),
    /** Options that differ at evaluation (e.g. ALFWorld's 30 turns and out-of-distribution split). */
    evalOptions: z.record(z.string(), z.unknown()).default({}).describe('options that differ at evaluation'),
  })
  .strict();

const trialSchema = z
  .object({
    /** N: episodes per trial (LaMer). Single-episode methods train with 1 and evaluate with N attempts. */
    episodes: positiveInt.default(3).describe('N: episodes per trial (attempts at evaluation)'),
    memory: z
      .enum(['reflection_only', 'history_only', 'history_and_reflection'])
      .default('reflection_only')
      .describe('what later episodes see of earlier ones: reflections, trajectories, or both'),
    /** Steps of the current episode shown in full in the play prompt. */
    historyWindow: positiveInt.default(7).describe('steps of the current episode shown in full in the play prompt'),
    /** Mark refused actions where prompts list the episode's actions (TrialConfig.markRefused). */
    markRefused: z.boolean().default(false).describe("mark actions the environment refused in the prompts' action lists (compact: ' no', full: ' (refused)')"),
    /** With markRefused: a refused last action named again, or flagged, at the play prompt's end (TrialConfig.refusedLast). */
    refusedLast: z
      .union([z.boolean(), z.literal('flag')])
      .default(false)
      .describe("with markRefused: at the play prompt's end, name a refused last action again (true) or say only that it was refused ('flag')"),
  })
  .strict();

const rolloutSchema = z
  .object({
    tasksPerIteration: positiveInt.default(16).describe('tasks per training iteration'),
    /** Trials per task for LaMer; single-episode methods use groupSize x episodes for an equal episode budget. */
    groupSize: positiveInt.default(8).describe('trials per task for LaMer (single-episode methods: groupSize x episodes)'),
    temperature: z.number().positive().default(1.0).describe('sampling temperature of training rollouts'),
    topP: z.number().gt(0).max(1).default(1.0).describe('nucleus sampling cut of training rollouts (1: none)'),
    topK: z.number().int().nonnegative().default(0).describe('top-k cut of training rollouts (0: none)'),
    maxPromptTokens: positiveInt.default(2048).describe('longest prompt, in tokens'),
    maxResponseTokens: positiveInt.default(1024).describe('longest response, in tokens'),
    /**
     * Which block of training tasks the iterations draw, in order (iteration i plays the block's tasks
     * (i - 1) x tasksPerIteration onwards); two blocks share no task seed. null: the run seed.
     */
    taskSeed: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .default(null)
      .describe('block of training tasks the iterations draw (null: the run seed); two blocks share no task'),
    /** Generation slots run together by the engine (continuous batching): the engine's own option and default. */
    slots: engineOptionsSchema.shape.slots,
  })
  .strict();

const trainSchema = z
  .object({
    iterations: positiveInt.default(300).describe('training iterations'),
    evalEvery: z.number().int().nonnegative().default(10).describe('evaluate every this many iterations (0: at the end only)'),
    checkpointEvery: z.number().int().nonnegative().default(10).describe('checkpoint every this many iterations (0: at the end only)'),
    /**
     * The update computes a prefix shared by several rows once (the run's rules, a task's first prompt, a trial's
     * memory): each micro-batch is a prefix tree of its rows. Exact: the loss and gradients of padded rows. `auto` is
     * on but with LoRA dropout above 0; `off` pads every row to its micro-batch's longest.
     */
    sharePrefix: z
      .enum(['auto', 'off'])
      .default('auto')
      .describe('compute prompt prefixes shared by rows once in the update (auto: on, off with LoRA dropout); off: padded rows'),
    /** Every scalar of metrics.jsonl also goes to a TensorBoard event file in the run folder, as it happens. */
    tensorboard: z.boolean().default(true).describe('write TensorBoard event files beside metrics.jsonl'),
    /**
     * The update's first step compares its log-probs of the sampled tokens with the engine's (the iteration's
     * `agreement`); a k3 estimate above this logs a warning (0: never).
     */
    agreementWarnKl: z
      .number()
      .nonnegative()
      .default(1e-3)
      .describe("warn when the trainer's and the engine's log-probs of the sampled tokens differ by more than this KL (k3 estimate)"),
  })
  .strict();

const evalSchema = z
  .object({
    tasks: positiveInt.default(128).describe('held-out tasks evaluated'),
    temperature: z.number().nonnegative().default(0.7).describe('sampling temperature at evaluation'),
    topP: z.number().gt(0).max(1).default(0.8).describe('nucleus sampling cut at evaluation'),
    topK: z.number().int().nonnegative().default(20).describe('top-k cut at evaluation'),
    /**
     * Who writes the reflections of reflecting methods at evaluation: the model, or the environment's scripted expert
     * (the model still plays), which shows how well the model acts on memory that states the right facts.
     */
    reflections: z.enum(['model', 'expert']).default('model').describe("who writes reflections at evaluation: the model, or the environment's scripted expert"),
    /**
     * Which tasks are scored: `eval` the held-out tasks (evaluation content); `select` training-split tasks that no
     * training rollout or demonstration draws, on which settings are compared before they become defaults (SPEC §11).
     */
    split: z.enum(['eval', 'select']).default('eval').describe('eval: held-out tasks; select: training-split tasks no rollout draws, for choosing settings'),
    /**
     * Index of the first task scored in the split's sequence of distinct tasks. 0 scores the first `tasks` (the
     * development set, which every evaluation scores by default); a set that nothing else has scored (a confirmation
     * set) starts far beyond it. Sets of one split at disjoint ranges share no task.
     */
    offset: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe("index of the first task scored in the split's sequence of distinct tasks (0: the development set)"),
  })
  .strict();

const sftSchema = z
  .object({
    /** Expert trials used as demonstrations (with scripted reflections) before RL; 0 skips the warm start. */
    trials: z.number().int().nonnegative().default(0).describe('scripted expert trials used as demonstrations (0: no warm start)'),
    /** Probability that the demonstrating expert makes a random move, so failed episodes and reflections occur. */
    noise: unitInterval.default(0.3).describe('probability of a random move by the demonstrating expert'),
    /**
     * The share of the demonstrator's random moves that are actions the environment refuses. ALFWorld's generated
     * games: the room's current place again, the task's object taken from where it is not, the last command repeated
     * ("Nothing happens."). WebShop: a product id this page does not list (one bought or opened before), a requested
     * option value the product does not offer, the last click repeated. A model's own mistakes lead to such states;
     * without them the demonstrations never show recovering.
     */
    refusedMoves: unitInterval
      .default(0)
      .describe("ALFWorld, WebShop: share of the demonstrator's random moves that the environment refuses, so recovering is shown"),
    /**
     * Environment options that differ for the demonstration games (merged over env.options). A model trained from
     * scratch knows only what its warm start showed, where a pretrained one brings knowledge of the world: ALFWorld's
     * `taskTypes: [1, 2, 3, 4, 5, 6]` here shows every task type before RL trains on types 1-4 alone, so that the
     * out-of-distribution types test what RL transfers rather than whether a command was ever seen.
     */
    envOptions: z.record(z.string(), z.unknown()).default({}).describe('environment options that differ for the demonstration games (merged over env.options)'),
    steps: z.number().int().nonnegative().default(200).describe('supervised steps on all demonstration rows'),
    /**
     * Steps on the reflection rows alone before the `steps` on all rows. A model trained from scratch on the mixed
     * rows learns the reflection format but not to copy the mine and the safe cells out of the trajectory (reflections
     * stay wrong after hundreds of mixed steps); a first phase on the reflections alone teaches it to copy, and the
     * mixed phase that follows keeps it.
     */
    reflectSteps: z.number().int().nonnegative().default(0).describe('supervised steps on the reflection rows alone, first'),
    /**
     * Ends the reflection-only phase early once the mean loss of its last 10 steps is at or below this value (the
     * loss falls steeply when the model starts to copy); null runs all `reflectSteps`.
     */
    reflectUntilLoss: z
      .number()
      .positive()
      .nullable()
      .default(null)
      .describe('end the reflection-only phase once its mean loss reaches this (null: run all its steps)'),
    /**
     * How the MineSweeper demonstrator guesses when nothing is proven safe: `random`, or `ordered` (the first
     * candidate cell in reading order), which makes the same board get the same guess in every episode unless the
     * memory names that cell as a mine, so the demonstrations show the remembered mine being avoided.
     */
    guess: z.enum(['random', 'ordered']).default('random').describe('how the MineSweeper demonstrator guesses: random, or ordered (reading order)'),
    /**
     * Trials played per demonstration task (default: rollout.groupSize). A scripted player that guesses in reading
     * order plays a task the same way every time, so 1 spreads the same trials over as many distinct boards.
     */
    trialsPerTask: positiveInt.nullable().default(null).describe('demonstration trials per task (null: rollout.groupSize)'),
    /**
     * Times more each turn right after a refused move is repeated (the demonstrator recovering; sft.refusedMoves makes
     * such turns). A model trained from scratch that never learns to recover repeats the refused action until the
     * episode's turns run out.
     */
    recoveryWeight: z.number().int().positive().default(1).describe('times more each turn right after a refused move is repeated'),
    /**
     * Times more each WebShop turn on a product page that lacks a requested option value, where the browser clicks only
     * the requested values that are offered and buys. A model trained from scratch copies the request's values and
     * clicks one the page refuses (most of its refused actions), then repeats it.
     */
    checkWeight: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe('WebShop: times more each turn on a product page lacking a requested option value (the browser clicks only what is offered)'),
    /**
     * ALFWorld, WebShop: weight of the unlikelihood rows. At each of the demonstrator's own turns, every move a model
     * plausibly makes there that the environment refuses (the kinds sft.refusedMoves draws from) becomes a row whose
     * loss is -log(1 - p) on its first token that no admissible move continues with (unlikelihood training), weighted
     * this much against a demonstrated token's cross-entropy. Imitation alone shows what to do, never what the page
     * refuses: a model trained from scratch copies a requested value the product lacks and repeats it. 0: none.
     */
    unlikelihood: z
      .number()
      .nonnegative()
      .default(0)
      .describe("ALFWorld, WebShop: weight of the unlikelihood loss on refused moves at the demonstrator's states (0: none)"),
    /**
     * ALFWorld, WebShop: after the warm start's steps, the model itself plays this many trials on demonstration tasks
     * (rollout sampling), and each of its moves the environment refused becomes an unlikelihood row at the state it was
     * made (weight sft.unlikelihood); then sft.mistakeSteps more steps train on the demonstrations and these rows. The
     * scripted players' states are not the model's: a model that refuses a click repeats it at states it reached by its
     * own choice, which no demonstration shows. 0: none.
     */
    mistakeTrials: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe("ALFWorld, WebShop: the model's own trials after the warm start, whose refused moves become unlikelihood rows"),
    mistakeSteps: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe("supervised steps on the demonstrations and the unlikelihood rows of the model's own refused moves"),
    /**
     * Rounds of the model's own trials (sft.mistakeTrials): each round plays sft.mistakeTrials trials with the model as
     * the previous round left it, on the demonstration tasks after the previous round's, adds their refused moves to
     * those found before, and trains sft.mistakeSteps steps on the demonstrations and all of them. The states a model
     * refuses at move as it learns; a later round finds the ones it reaches now (as DAgger iterates). 1: one round.
     */
    mistakeRounds: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe("ALFWorld, WebShop: rounds of the model's own trials and their steps (sft.mistakeTrials, sft.mistakeSteps)"),
    /**
     * ALFWorld, WebShop: at each refused move of the model's own trials (sft.mistakeTrials), the move the memory player
     * makes at that state (from the model's episode and what its failed episodes showed) becomes a demonstration row,
     * repeated this many times, beside the unlikelihood row: what to do instead at a state only the model reaches, as
     * DAgger labels the learner's states. 0: none.
     */
    mistakeLabels: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe("ALFWorld, WebShop: times the demonstrator's move at each of the model's own refused states is repeated (0: none)"),
    /**
     * WebShop: the share of warm-start rows drawn (each step, each row) whose product ids are swapped for other
     * catalog ids, one id always by the same one, in the prompt, the response and the row's refused and admissible
     * moves together (src/train/id-swap.ts), so that only an id read off the page is right. A tiny model otherwise
     * leans on the places it learned each id in and, on a request it never trained on, writes an id the results page
     * does not list. 0: none.
     */
    swapIds: z.number().min(0).max(1).default(0).describe('WebShop: share of warm-start rows whose product ids are swapped for other catalog ids (0: none)'),
    /**
     * WebShop: the share of warm-start rows drawn (each step, each row) whose option values are swapped for other values
     * of their kind (values that share an option on some product), one value always by the same one, in the prompt,
     * the response and the row's refused and admissible moves together (src/train/value-swap.ts), so that clicking the
     * requested value is right only where the page lists it. Most demonstration rows click a requested value on a
     * product that offers it; a tiny model trained on them clicks the requested value on a product that lacks it. Drawn
     * apart from sft.swapIds. 0: none.
     */
    swapValues: z
      .number()
      .min(0)
      .max(1)
      .default(0)
      .describe('WebShop: share of warm-start rows whose option values are swapped for other values of their kind (0: none)'),
    /** Times each row of a later episode (which reads the memory) is repeated. */
    memoryWeight: z.number().int().positive().default(3).describe('times each row that reads the memory is repeated'),
    /**
     * Times each reflection row is repeated. Reflections are few (only failed episodes write one) and a model trained
     * from scratch must learn to copy the mine and the safe cells out of the trajectory exactly.
     */
    reflectionWeight: z.number().int().positive().default(3).describe('times each reflection row is repeated'),
    /**
     * Which block of training tasks the demonstrations are played on (its first distinct tasks by content, one per
     * trialsPerTask trials); two blocks share no task seed, and no block shares one with the iterations'. null: the
     * run seed.
     */
    taskSeed: z.number().int().nonnegative().nullable().default(null).describe('block of training tasks the demonstrations are played on (null: the run seed)'),
    /**
     * Cut each scripted response after this many characters. The scripted players have no tokenizer; earlier builds
     * cut their answers at rollout.maxResponseTokens characters, which left long reflections without their closing
     * tag, so the next episode's memory held an empty note (the default job keeps that cut: its headline was
     * measured with it). null: never cut.
     */
    maxResponseChars: positiveInt
      .nullable()
      .default(null)
      .describe('cut each scripted demonstration response after this many characters (null: never; the default job pins 96)'),
    lr: z.number().positive().default(1e-3).describe('learning rate of the warm start'),
    batchRows: positiveInt.default(32).describe('rows per warm-start step'),
    /**
     * Warm-start steps between saves of its state into the run's `warm-start.partial` folder (the weights, the warm
     * start's optimizer state, the shuffles' position, the model's own refused moves so far), from which `--resume`
     * continues a warm start cut short with the same result as one never cut; a stop on a signal saves too. The folder
     * goes once the warm start ends. 0: no saves (a warm start cut short starts over).
     */
    checkpointEvery: z
      .number()
      .int()
      .nonnegative()
      .default(1000)
      .describe('warm-start steps between saves of its state, from which --resume continues it (0: none)'),
  })
  .strict();

/**
 * A named variant of a method in a comparison job: the method with some fields set otherwise (`{ name: lamer-traj0,
 * method: lamer, set: { advantage.gammaTraj: 0 } }`), trained from the job's one warm start and evaluated on its tasks
 * like every other entry; its records and tables carry its name. What makes the comparison one is fixed
 * (VARIANT_FIXED_FIELDS): the seed, the warm start and the model it starts from, and the tasks scored. A frozen
 * method's variant may instead evaluate an earlier trained entry's final model (`from`): `{ name: gigpo+reflect,
 * method: reflexion, from: gigpo }` plays GiGPO's policy in LaMer's trial, with reflections and memory.
 */
const variantSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z][a-z0-9+._-]{0,63}$/, 'a name of lowercase letters, digits and + . _ -, starting with a letter')
      .describe("the variant's name in records and tables (its run folder's too)"),
    method: z.enum(METHODS).describe('the method it varies'),
    set: z.record(z.string(), z.unknown()).default({}).describe('dotted config fields and their values, as --set takes them'),
    from: z
      .string()
      .optional()
      .describe("a frozen method's entry only: evaluate the final model of this earlier trained entry (gigpo+reflect: reflexion from gigpo)"),
  })
  .strict();

export type CompareEntry = TrainerConfig['compare'] extends (infer E)[] | null | undefined ? E : never;

/** Fields (and their subfields) a variant may not set: what the entries of one comparison share. */
export const VARIANT_FIXED_FIELDS = ['name', 'method', 'compare', 'seed', 'runsDir', 'model', 'sft', 'eval.split', 'eval.offset', 'eval.tasks'] as const;

/** An entry's name: the method's own for a plain entry. */
export function entryName(entry: CompareEntry): string {
  return typeof entry === 'string' ? entry : entry.name;
}

/** An entry's method. */
export function entryMethod(entry: CompareEntry): Method {
  return typeof entry === 'string' ? entry : entry.method;
}

/** A variant's fields as --set takes them (`advantage.gammaTraj=0`); none for a plain entry. */
export function variantOverrides(entry: CompareEntry): string[] {
  return typeof entry === 'string' ? [] : Object.entries(entry.set).map(([field, value]) => `${field}=${JSON.stringify(value)}`);
}

/** The config an entry of a comparison runs: the job's, with the variant's fields set (as --set sets them). */
export function variantConfig(config: Record<string, unknown>, entry: CompareEntry): Record<string, unknown> {
  return applyOverrides(config, variantOverrides(entry));
}

export const configSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(200)
      .refine((n) => isRunName(n), {
        message: "a run folder's name: relative, at most 200 characters, without '.' or '..' parts, a NUL or a backslash (e.g. 'default' or 'exp/seed0')",
      })
      .default('run')
      .describe("the run folder's name (runsDir/name)"),
    /**
     * A seed varies what a replication varies (SPEC §11): the model's initial weights (model.init.seed), the
     * demonstration tasks (sft.taskSeed), the training tasks (rollout.taskSeed), sampling and shuffles, except where
     * the config pins one of those fields. The evaluation tasks are the same for every seed, so seeds pair.
     */
    seed: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe('seed of the run: initial weights, demonstration and training tasks (where not pinned), sampling, shuffles; not the evaluation tasks'),
    /** Where runs are written; the run folder is `${runsDir}/${name}`. */
    runsDir: z.string().min(1).default('runs').describe('where run folders are written'),
    method: z.enum(METHODS).default('lamer').describe(METHODS.join(', ')),
    /**
     * A comparison job (`lamer train` of the default config): one shared warm start, then each listed method trained
     * from it at an equal episode budget and evaluated on the same held-out tasks; `method` is ignored.
     */
    compare: z
      .array(z.union([z.enum(METHODS), variantSchema]))
      .min(1)
      .nullish()
      .describe('a comparison job: each listed method (or named variant of one) from one shared warm start (method is then ignored)'),
    model: modelSchema.default(modelSchema.parse({})).describe('the policy model'),
    env: envSchema.describe('the environment'),
    trial: trialSchema.default(trialSchema.parse({})).describe('the LaMer trial'),
    rollout: rolloutSchema.default(rolloutSchema.parse({})).describe('training rollouts'),
    advantage: advantageConfigSchema.default(advantageConfigSchema.parse({})).describe('returns and advantages'),
    loss: lossSchema.default(lossSchema.parse({})).describe('the policy loss'),
    optim: optimSchema.default(optimSchema.parse({})).describe('the optimizer'),
    train: trainSchema.default(trainSchema.parse({})).describe('the training loop'),
    eval: evalSchema.default(evalSchema.parse({})).describe('evaluation'),
    sft: sftSchema.default(sftSchema.parse({})).describe('the supervised warm start'),
    /**
     * Written by a run into its config.json: the code it ran (package version, git commit, whether tracked files
     * differed from it) and what its environments read (fidelity, data files and their SHA-256, prompt templates), for
     * training and for evaluation. Ignored when a config is read.
     */
    provenance: z
      .record(z.string(), z.unknown())
      .nullish()
      .describe('written by a run: its code (version, git commit) and what its environments read (files and their SHA-256); ignored when read'),
  })
  .strict();

export type TrainerConfig = z.infer<typeof configSchema>;
/** What a user writes: every field optional except the environment's name. */
export type TrainerConfigInput = z.input<typeof configSchema>;

const configsDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'configs');

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const s = JSON.stringify(value);
  return s && s.length > 60 ? `${s.slice(0, 57)}...` : (s ?? String(value));
}

function getPath(obj: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = obj;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}

/** What the run seed decides where the config leaves a field null. */
export interface RunSeeds {
  /** Seed of a created model's weights (model.init.seed). */
  init: number;
  /** Block of training tasks of the iterations (rollout.taskSeed). */
  rolloutTasks: number;
  /** Block of training tasks of the demonstrations (sft.taskSeed). */
  demonstrationTasks: number;
}

export function runSeeds(c: TrainerConfig): RunSeeds {
  return { init: c.model.init.seed ?? c.seed, rolloutTasks: c.rollout.taskSeed ?? c.seed, demonstrationTasks: c.sft.taskSeed ?? c.seed };
}

/** The task blocks a config uses must exist and hold its tasks: a run that would fail after its warm start fails here. */
function checkTaskBlocks(c: TrainerConfig): string[] {
  const seeds = runSeeds(c);
  const problems: string[] = [];
  const block = (field: string, value: number) => {
    if (value < TASK_BLOCKS) return;
    const pinned = field === 'rollout.taskSeed' ? c.rollout.taskSeed : c.sft.taskSeed;
    problems.push(
      pinned === null
        ? `field 'seed': ${c.seed} also picks the run's block of ${field === 'rollout.taskSeed' ? 'training' : 'demonstration'} tasks (${field}), and there are ${TASK_BLOCKS}; use a seed below ${TASK_BLOCKS} or pin ${field} to a block in [0, ${TASK_BLOCKS})`
        : `field '${field}': expected a block in [0, ${TASK_BLOCKS}); found ${value}`,
    );
  };
  const trains = TRAINED_METHODS.includes(c.method) || (c.compare ?? []).some((m) => TRAINED_METHODS.includes(entryMethod(m)));
  if (trains) {
    block('rollout.taskSeed', seeds.rolloutTasks);
    if (c.train.iterations * c.rollout.tasksPerIteration > TASK_BLOCK_SIZE) {
      problems.push(
        `fields 'train.iterations' x 'rollout.tasksPerIteration': ${c.train.iterations} x ${c.rollout.tasksPerIteration} tasks is more than a block of training tasks holds (${TASK_BLOCK_SIZE})`,
      );
    }
  }
  if (c.sft.trials > 0) block('sft.taskSeed', seeds.demonstrationTasks);
  return problems;
}

/** `paper` prompts need an environment that has them and a LaMer checkout to read them from, and mark no refused action. */
function checkPaperPrompts(c: TrainerConfig): string[] {
  if (c.model.promptStyle !== 'paper') return [];
  const problems: string[] = [];
  if (c.trial.markRefused) {
    problems.push(
      "field 'trial.markRefused': LaMer's templates (model.promptStyle 'paper') have no mark for a refused action; use promptStyle 'full' or 'compact', or set trial.markRefused false",
    );
  }
  if (c.env.name === 'custom') return problems;
  if (!(PAPER_PROMPT_ENVS as readonly string[]).includes(c.env.name)) {
    problems.push(`field 'model.promptStyle': 'paper' (LaMer's templates) is available for ${PAPER_PROMPT_ENVS.join(', ')}, not ${c.env.name}; use 'full'`);
    return problems;
  }
  const source = { ...c.env.options, ...c.env.evalOptions }.lamerSource;
  if (typeof source !== 'string' || source.length === 0) {
    problems.push(
      "field 'model.promptStyle': 'paper' reads LaMer's prompt templates from a LaMer checkout; set env.options.lamerSource to a clone of " +
        'github.com/mlbio-epfl/LaMer (e.g. --set env.options.lamerSource=/path/to/LaMer)',
    );
  }
  return problems;
}

/** A refused last action is named again only where actions are known as refused. */
function checkRefusedLast(c: TrainerConfig): string[] {
  if (!c.trial.refusedLast || c.trial.markRefused) return [];
  return [
    "field 'trial.refusedLast': it names a refused last action again, and actions are marked as refused only with trial.markRefused; set trial.markRefused true too, or trial.refusedLast false",
  ];
}

/** Entry names are unique, a variant is not named as a method, sets no shared field, and makes a valid config. */
function checkVariants(c: TrainerConfig, input: unknown): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const entry of c.compare ?? []) {
    const name = entryName(entry);
    if (seen.has(name)) problems.push(`field 'compare': '${name}' is listed twice; give each entry its own name`);
    seen.add(name);
    if (typeof entry === 'string') continue;
    if ((METHODS as readonly string[]).includes(name)) {
      problems.push(`field 'compare': variant '${name}' is named as a method; name it after what it varies (e.g. ${entry.method}-traj0)`);
    }
    for (const field of Object.keys(entry.set)) {
      const fixed = VARIANT_FIXED_FIELDS.find((f) => field === f || field.startsWith(`${f}.`));
      if (fixed) problems.push(`field 'compare': variant '${name}' sets '${field}', which every entry of a comparison shares (${fixed})`);
    }
    if (entry.from !== undefined) {
      const source = (c.compare ?? []).slice(0, (c.compare ?? []).indexOf(entry)).find((e) => entryName(e) === entry.from);
      if (METHOD_SPECS[entry.method].play !== 'frozen') {
        problems.push(`field 'compare': variant '${name}' evaluates '${entry.from}' (from), so its method must be a frozen one (reflexion, react, zero-shot)`);
      } else if (source === undefined || !TRAINED_METHODS.includes(entryMethod(source))) {
        problems.push(`field 'compare': variant '${name}' evaluates '${entry.from}' (from), which is not a trained entry listed before it`);
      }
    }
    if (problems.length > 0) continue;
    try {
      const base = isPlainObject(input) ? { ...input, compare: undefined, method: entry.method } : {};
      validateConfig(variantConfig(base, entry), `variant '${name}'`);
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  return problems;
}

/** sft.mistakeTrials needs the unlikelihood weight its rows take, steps to train them, and a scripted environment. */
function checkMistakes(c: TrainerConfig): string[] {
  const { mistakeTrials, mistakeSteps, mistakeLabels, mistakeRounds, unlikelihood } = c.sft;
  if (mistakeTrials === 0 && mistakeSteps === 0) {
    const out: string[] = [];
    if (mistakeLabels > 0) out.push("'sft.mistakeLabels' needs 'sft.mistakeTrials' and 'sft.mistakeSteps' > 0 (the model's own trials it labels)");
    if (mistakeRounds > 1) out.push("'sft.mistakeRounds' needs 'sft.mistakeTrials' and 'sft.mistakeSteps' > 0 (the trials each round plays)");
    return out;
  }
  const out: string[] = [];
  if (mistakeTrials === 0 || mistakeSteps === 0) out.push("'sft.mistakeTrials' and 'sft.mistakeSteps' go together: set both above 0, or both to 0");
  if (unlikelihood === 0 && mistakeLabels === 0) {
    out.push("'sft.mistakeTrials' needs 'sft.unlikelihood' > 0 or 'sft.mistakeLabels' > 0 (the weight of the rows it makes)");
  }
  if (c.env.name !== 'alfworld' && c.env.name !== 'webshop')
    out.push(`'sft.mistakeTrials' is for ALFWorld and WebShop (refused moves); env.name is '${c.env.name}'`);
  return out;
}

/** Validates a config object; the error names every wrong field, what was expected and what was found. */
export function validateConfig(input: unknown, source = 'config'): TrainerConfig {
  const r = configSchema.safeParse(input);
  if (r.success) {
    const problems = [
      ...checkTaskBlocks(r.data),
      ...checkPaperPrompts(r.data),
      ...checkVariants(r.data, input),
      ...checkMistakes(r.data),
      ...checkRefusedLast(r.data),
      ...(r.data.sft.swapIds > 0 && r.data.env.name !== 'webshop'
        ? [`'sft.swapIds' swaps WebShop's product ids; env.name is '${r.data.env.name}': set sft.swapIds=0`]
        : []),
      ...(r.data.sft.swapValues > 0 && r.data.env.name !== 'webshop'
        ? [`'sft.swapValues' swaps WebShop's option values; env.name is '${r.data.env.name}': set sft.swapValues=0`]
        : []),
    ];
    if (problems.length > 0) throw new LamerError('E_CONFIG', `${source}: ${problems.join('; ')}`);
    return r.data;
  }
  const lines = r.error.issues.map((issue) => {
    const field = issue.path.length ? issue.path.join('.') : '(top level)';
    if (issue.code === 'unrecognized_keys') {
      const where = issue.path.length ? `${field}.` : '';
      return `unknown field ${issue.keys.map((k) => `'${where}${k}'`).join(', ')}`;
    }
    return `field '${field}': ${issue.message}; found ${describe(getPath(input, issue.path))}`;
  });
  throw new LamerError('E_CONFIG', `${source}: ${lines.join('; ')}`);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Deep merge: objects merge key by key, everything else (arrays included) is replaced. */
export function mergeConfig(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? mergeConfig(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}

// Keys that would reach an object's prototype when merged: a config never has them, and silently dropping them hid
// what the user wrote.
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Throws E_CONFIG naming the first forbidden key in `value` (a parsed YAML value), with its path. */
function checkKeys(value: unknown, where: string, path: string[] = []): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => checkKeys(v, where, [...path, String(i)]));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const k of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(k)) throw new LamerError('E_CONFIG', `${where}: field '${[...path, k].join('.')}' is not allowed (not a config field)`);
    checkKeys((value as Record<string, unknown>)[k], where, [...path, k]);
  }
}

/** A YAML text as a value: errors and warnings (an unknown tag, a duplicate key) are refused, never read as data. */
function parseStrictYaml(text: string, where: string): unknown {
  const doc = parseDocument(text, { uniqueKeys: true });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw new LamerError('E_CONFIG', `${where}: not valid YAML: ${problem.message.split('\n')[0]}`);
  const value = doc.toJS() as unknown;
  checkKeys(value, where);
  return value;
}

/** Resolves a config name (`default`, `minesweeper-lamer`) or a path to a YAML file. */
export function configPath(nameOrPath: string): string {
  if (nameOrPath.endsWith('.yaml') || nameOrPath.endsWith('.yml') || nameOrPath.includes('/')) {
    return isAbsolute(nameOrPath) ? nameOrPath : resolve(nameOrPath);
  }
  return join(configsDir, `${nameOrPath}.yaml`);
}

/**
 * A run folder's name stays inside runsDir and names a folder of its own: relative, no '.'/'..' or empty parts (so
 * neither `runs/` itself, which `--force` would empty, nor anything outside it), no NUL or backslash, 200 characters
 * at most.
 */
export function isRunName(name: string): boolean {
  if (name.length === 0 || name.length > 200 || name.startsWith('/') || /[\0\\]/.test(name)) return false;
  return name.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

/** A config file's size limit: a YAML config is a few kilobytes. */
const MAX_CONFIG_BYTES = 1 << 20;

/** Reads a YAML config and the chain of configs it extends, merged (unvalidated). */
export function readConfigFile(nameOrPath: string, seen: string[] = []): Record<string, unknown> {
  const path = configPath(nameOrPath);
  if (seen.includes(path)) throw new LamerError('E_CONFIG', `config ${path}: 'extends' forms a cycle (${[...seen, path].join(' -> ')})`);
  if (!existsSync(path)) {
    throw new LamerError('E_CONFIG', `config '${nameOrPath}' not found (looked for ${path}); named configs live in ${configsDir}`);
  }
  let doc: unknown;
  try {
    // A regular file of bounded size: a named pipe would block forever, a device would be read without end.
    doc = parseStrictYaml(readRegularFile(path, 'E_CONFIG', MAX_CONFIG_BYTES), `config ${path}`);
  } catch (e) {
    if (e instanceof LamerError) throw e;
    throw new LamerError('E_CONFIG', `config ${path}: not valid YAML: ${(e as Error).message}`);
  }
  if (doc == null) doc = {};
  if (!isPlainObject(doc)) throw new LamerError('E_CONFIG', `config ${path}: expected a mapping at the top level`);
  const { extends: parent, ...rest } = doc;
  if (parent === undefined) return rest;
  if (typeof parent !== 'string') throw new LamerError('E_CONFIG', `config ${path}: field 'extends' must be a config name`);
  return mergeConfig(readConfigFile(parent, [...seen, path]), rest);
}

/** Applies `a.b=c` overrides; values are read as YAML scalars (numbers, booleans, lists, strings). */
export function applyOverrides(config: Record<string, unknown>, overrides: readonly string[]): Record<string, unknown> {
  let out = config;
  for (const o of overrides) {
    const eq = o.indexOf('=');
    if (eq <= 0) throw new LamerError('E_CONFIG', `--set '${o}': expected FIELD=VALUE, e.g. optim.lr=1e-5`);
    const keys = o.slice(0, eq).split('.');
    if (keys.some((k) => k.length === 0)) throw new LamerError('E_CONFIG', `--set '${o}': empty field name`);
    const forbidden = keys.find((k) => FORBIDDEN_KEYS.has(k));
    if (forbidden) throw new LamerError('E_CONFIG', `--set '${o}': '${forbidden}' is not a config field`);
    let value: unknown;
    try {
      value = parseYaml(o.slice(eq + 1));
      checkKeys(value, `--set '${o}'`);
    } catch (e) {
      if (e instanceof LamerError) throw e;
      value = o.slice(eq + 1);
    }
    const patch: Record<string, unknown> = {};
    let cur = patch;
    keys.forEach((k, i) => {
      if (i === keys.length - 1) cur[k] = value;
      else cur = cur[k] = {} as Record<string, unknown>;
    });
    out = mergeConfig(out, patch);
  }
  return out;
}

/** Loads, overrides and validates: the one way a trainer config is made from files and flags. */
export function loadConfig(nameOrPath: string, overrides: readonly string[] = []): TrainerConfig {
  const file = readConfigFile(nameOrPath);
  if (overrides.length === 0) return validateConfig(file, configPath(nameOrPath));
  // A value the file alone accepts and the overrides break is blamed on the overrides, not on the file.
  let fileValid = true;
  try {
    validateConfig(file, configPath(nameOrPath));
  } catch {
    fileValid = false;
  }
  return validateConfig(applyOverrides(file, overrides), fileValid ? `${configPath(nameOrPath)} with --set ${overrides.join(' ')}` : configPath(nameOrPath));
}
