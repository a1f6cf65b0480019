// The supervised warm start (config.sft): scripted demonstrations (src/train/demonstrations.ts) trained on for
// `sft.reflectSteps` steps on the reflection rows alone, then `sft.steps` steps on all rows, in seeded shuffles. In a
// data-parallel run every rank draws the same rows and trains on its share of them (one global batch).
//
// Every sft.checkpointEvery steps (and at each phase's end, after each round of the model's own trials, and on a stop
// by signal) it saves what the rest depends on into `checkpointDir`: the weights and the optimizer's state, the
// shuffle generator's state and the orders it shuffled, the losses so far and the model's own refused moves. A warm
// start resumed from there takes the steps it would have taken, so its weights equal those of one never cut short.
import { Progress } from '../util/progress.js';
import { Rng } from '../util/rng.js';
import { deriveSeed } from '../util/seed.js';
import type { TrainerConfig } from './config.js';
import { collectDemonstrations } from './demonstrations.js';
import type { DistContext } from './distributed.js';
import type { PolicyRuntime } from './runtime.js';
import type { MoveContrast } from '../rollout/policy.js';
import { collectMistakes, type Mistake } from './mistakes.js';
import { configIdSwap, swapRow } from './id-swap.js';
import { configValueSwap } from './value-swap.js';
import { LamerError } from '../errors.js';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readJsonFile } from '../util/fs.js';
import { RUN_JSON_MAX_BYTES, writeDirAtomic } from './checkpoint.js';

/** The folder of a run's warm-start saves (sft.checkpointEvery), inside the run's folder. */
export const WARM_START_SAVES = 'warm-start.partial';
const SAVED_STATE_FILE = 'warm-start.json';

/** Steps whose mean loss decides when the reflection-only phase has done its work (sft.reflectUntilLoss). */
const LOSS_WINDOW = 10;

export interface WarmStartOptions {
  dist?: DistContext;
  /** No progress bar. */
  silent?: boolean;
  log?: (line: string) => void;
  signal?: AbortSignal;
  /** Where the warm start saves its state every sft.checkpointEvery steps; none: no saves. */
  checkpointDir?: string;
  /** Continue from the state saved in `checkpointDir`, if there is one (else start). */
  resume?: boolean;
}

/** What decides a warm start's steps, as JSON values (as a save records them): a save resumes only under the same. */
function warmStartSettings(config: TrainerConfig): Record<string, unknown> {
  // sft.swapValues came after warm starts were saved without it: left out at its default, so that they resume.
  const { checkpointEvery: _, swapValues, ...rest } = config.sft;
  const sft = swapValues > 0 ? { ...rest, swapValues } : rest;
  return jsonCopy({
    seed: config.seed,
    model: config.model,
    env: config.env,
    trial: config.trial,
    rollout: config.rollout,
    optim: config.optim,
    sharePrefix: config.train.sharePrefix,
    sft,
  });
}

const jsonCopy = (value: object): Record<string, unknown> => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;

/** The dotted path of the first field where `a` and `b` differ, or null when they are equal (JSON values). */
function firstDifference(a: unknown, b: unknown, path = ''): string | null {
  if (a === b) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return path || '(all)';
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  for (const k of keys) {
    const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
    if (d !== null) return d;
  }
  return null;
}

const indexList = z.array(z.number().int().nonnegative());
const savedSchema = z.object({
  version: z.literal(1),
  settings: z.record(z.string(), z.unknown()),
  /** 0: the reflection rows alone; 1: all rows; 2 + r: round r of the model's own trials; past the last: done. */
  phase: z.number().int().nonnegative(),
  /** Steps done in the phase. */
  step: z.number().int().nonnegative(),
  /** Phase 2 + r: its round of trials was played (their refused moves are in `mistakes`). */
  played: z.boolean(),
  /** Steps the reflection-only phase took, once it ended. */
  reflectDone: z.number().int().nonnegative().nullable(),
  rng: z.array(z.number().int()).length(4),
  cursor: z.number().int().nonnegative(),
  reflections: indexList,
  all: indexList,
  /** The order the phase draws from (phases 2 + r draw from a list of their own). */
  order: indexList,
  losses: z.array(z.number()),
  mistakes: z.array(
    z.object({
      prompt: z.string(),
      contrast: z.object({ refused: z.array(z.string()).readonly(), admissible: z.array(z.string()).readonly() }),
      label: z.string().optional(),
    }),
  ),
});
type SavedWarmStart = z.infer<typeof savedSchema>;

/**
 * The state saved in `dir`, or null when there is none. E_CHECKPOINT when it cannot be read or was saved under other
 * settings (the field named), and what to do.
 */
function readSaved(dir: string, settings: Record<string, unknown>): SavedWarmStart | null {
  const path = join(dir, SAVED_STATE_FILE);
  if (!existsSync(path)) return null;
  const parsed = savedSchema.safeParse(readJsonFile(path, 'E_CHECKPOINT', RUN_JSON_MAX_BYTES));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LamerError(
      'E_CHECKPOINT',
      `${path}: not a warm-start state this build reads (${issue.path.join('.') || 'the file'}: ${issue.message}); remove ${dir} to start the warm start over`,
    );
  }
  const differs = firstDifference(settings, parsed.data.settings);
  if (differs !== null) {
    throw new LamerError(
      'E_CONFIG',
      `cannot resume the warm start saved in ${dir}: it ran with other settings (${differs} differs from the config's); ` +
        `resume with the settings it ran with, or remove ${dir} to start the warm start over`,
    );
  }
  return parsed.data;
}

/** Removes a run's warm-start saves (once what they lead to is saved: the warm start's weights, a checkpoint). */
export function removeWarmStartSaves(runDir: string): void {
  rmSync(join(runDir, WARM_START_SAVES), { recursive: true, force: true });
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);

/** Runs the warm start on `runtime`'s policy; returns the loss of each step (none when the config asks for none). */
export async function warmStart(config: TrainerConfig, runtime: PolicyRuntime, options: WarmStartOptions = {}): Promise<number[]> {
  const { sft } = config;
  const { dist, signal } = options;
  const log = options.log ?? (() => {});
  if (sft.trials === 0 || sft.steps === 0) return [];
  if (sft.mistakeTrials > 0 && dist && dist.size > 1) {
    // Every rank would have to play the same trials with the same samples; the phase runs in one process.
    throw new LamerError(
      'E_CONFIG',
      'sft.mistakeTrials runs in one process: set sft.mistakeTrials=0 for a data-parallel warm start, or warm-start with `lamer sft` first',
    );
  }
  const demos = await collectDemonstrations(config, signal);
  const settings = warmStartSettings(config);
  const dir = options.checkpointDir;
  const saving = sft.checkpointEvery > 0 && dir !== undefined && runtime.saveSupervised !== undefined && runtime.restoreSupervised !== undefined;
  const saved = saving && options.resume ? readSaved(dir, settings) : null;
  let reflections = Array.from({ length: demos.prompts.length }, (_, i) => i).filter((i) => demos.reflect[i]);
  let all = Array.from({ length: demos.prompts.length }, (_, i) => i);
  const reflectSteps = reflections.length > 0 ? sft.reflectSteps : 0;
  const contrasted = demos.contrast.filter((c) => c !== null);
  const swap = sft.swapIds > 0 ? configIdSwap(config) : null;
  const valueSwap = sft.swapValues > 0 ? configValueSwap(config) : null;
  log(
    `[sft] ${demos.prompts.length} demonstration rows (${reflections.length} reflections) from ${demos.trials} trials (${demos.won} won)` +
      (sft.reflectSteps > 0 && reflectSteps === 0 ? '; no reflections, so no reflection-only steps' : '') +
      (sft.unlikelihood > 0
        ? `; ${contrasted.length} of them with refused moves beside them (${contrasted.reduce((s, c) => s + c.refused.length, 0)} unlikelihood rows, weight ${sft.unlikelihood})`
        : '') +
      (sft.swapIds > 0 ? `; product ids swapped in ${(100 * sft.swapIds).toFixed(0)}% of the rows drawn` : '') +
      (sft.swapValues > 0 ? `; option values swapped in ${(100 * sft.swapValues).toFixed(0)}% of the rows drawn` : ''),
  );
  const ownRounds = sft.mistakeTrials > 0 ? sft.mistakeRounds : 0;
  const ownSteps = sft.mistakeSteps * ownRounds;
  let losses: number[] = [];
  let rng = new Rng(deriveSeed(config.seed, 0x5f7));
  // The model's own refused moves (sft.mistakeTrials), drawn after the demonstrations' rows: index D + j is mistake j
  // (its unlikelihood row), index D + M + k the k-th labelled one's demonstrator move (sft.mistakeLabels).
  let mistakes: Mistake[] = [];
  let labelled: Mistake[] = [];
  let reflectDone: number | null = null;
  // Where the warm start stands, for saving: the phase, its steps done, its order and the order's cursor.
  let at = { phase: 0, step: 0, played: false, order: reflections, cursor: reflections.length };
  if (saved) {
    await runtime.restoreSupervised!(dir!);
    rng = Rng.fromState(saved.rng);
    ({ reflections, all, losses, mistakes, reflectDone } = saved);
    labelled = mistakes.filter((m) => m.label !== undefined);
    at = { phase: saved.phase, step: saved.step, played: saved.played, order: saved.order, cursor: saved.cursor };
    if (at.phase === 0) at.order = reflections;
    else if (at.phase === 1) at.order = all;
    log(`[sft] resumed from ${dir}: ${losses.length} steps done${at.phase >= 2 + ownRounds ? ' (all of them)' : ''}`);
  }
  const total = (reflectDone ?? reflectSteps) + sft.steps + ownSteps;
  const progress = new Progress({ label: 'sft', total, unit: 'steps', silent: options.silent, done: losses.length });
  let savedAt = saved ? losses.length : -1;
  // False while a step is under way: its shuffles may have moved the generator and the order past what `at` records.
  let steady = true;
  const save = async (): Promise<void> => {
    if (!saving || savedAt === losses.length) return;
    const state: SavedWarmStart = {
      version: 1,
      settings,
      ...at,
      reflectDone,
      rng: rng.state(),
      reflections,
      all,
      losses,
      mistakes,
    };
    if (dist && !dist.isMain) await runtime.saveSupervised!(null);
    else {
      await writeDirAtomic(dir!, async (tmp) => {
        await runtime.saveSupervised!(tmp);
        writeFileSync(join(tmp, SAVED_STATE_FILE), JSON.stringify(state));
      });
    }
    savedAt = losses.length;
  };
  // Runs phase `index` over `order` from step `at.step` (its cursor `at.cursor`); returns the steps it took: `steps`, or
  // fewer when the mean loss of the last LOSS_WINDOW steps reaches `untilLoss`.
  const phase = async (index: number, order: number[], steps: number, label: string, untilLoss: number | null = null): Promise<number> => {
    // `at` holds this phase's position: its start (set by next(), or after a round's trials) or where a save left it.
    let cursor = at.cursor;
    const D = demos.prompts.length;
    at = { ...at, order };
    for (let step = at.step; step < steps; step++) {
      signal?.throwIfAborted();
      steady = false;
      const prompts: string[] = [];
      const responses: string[] = [];
      const contrast: (MoveContrast | null)[] = [];
      const negatives: Mistake[] = [];
      for (let b = 0; b < Math.min(sft.batchRows, order.length); b++) {
        if (cursor >= order.length) {
          rng.shuffle(order); // a seeded reshuffle each pass, so warm starts are reproducible
          cursor = 0;
        }
        if (!dist || b % dist.size === dist.rank) {
          const i = order[cursor];
          // sft.swapIds: a draw of its own for each row of each step (the step's index and the row's place name it),
          // so a resumed warm start swaps as one never cut short did.
          // sft.swapValues likewise, from a draw of its own, so that either share leaves the other's rows as they were.
          const swapRng = swap ? new Rng(deriveSeed(config.seed, 0x1d5, losses.length, b)) : null;
          const swapped = swapRng !== null && swapRng.next() < sft.swapIds;
          const valueRng = valueSwap ? new Rng(deriveSeed(config.seed, 0x7a1, losses.length, b)) : null;
          const valuesSwapped = valueRng !== null && valueRng.next() < sft.swapValues;
          const row = (prompt: string, response: string | null, c: MoveContrast | null) => {
            const r = swapped ? swapRow(swap!, swapRng, prompt, response, c) : { prompt, response, contrast: c };
            return valuesSwapped ? swapRow(valueSwap!, valueRng, r.prompt, r.response, r.contrast) : r;
          };
          if (i >= D + mistakes.length) {
            const m = labelled[i - D - mistakes.length];
            const r = row(m.prompt, m.label!, null);
            prompts.push(r.prompt);
            responses.push(r.response!);
            contrast.push(null);
          } else if (i >= D) {
            const m = mistakes[i - D];
            const r = row(m.prompt, null, m.contrast);
            negatives.push({ prompt: r.prompt, contrast: r.contrast! });
          } else {
            const r = row(demos.prompts[i], demos.responses[i], demos.contrast[i]);
            prompts.push(r.prompt);
            responses.push(r.response!);
            contrast.push(r.contrast);
          }
        }
        cursor++;
      }
      const { loss } = await runtime.supervised({ prompts, responses, contrast, ...(negatives.length ? { negatives } : {}) }, config);
      losses.push(loss);
      at = { ...at, step: step + 1, cursor };
      steady = true;
      progress.tick(1, `${label}loss ${loss.toFixed(4)}`);
      if (untilLoss !== null && step + 1 >= LOSS_WINDOW && mean(losses.slice(-LOSS_WINDOW)) <= untilLoss) return step + 1;
      if (sft.checkpointEvery > 0 && losses.length % sft.checkpointEvery === 0) await save();
    }
    return steps;
  };
  // The next phase, not yet begun: what a save between two phases records.
  const next = (index: number) => {
    at = { phase: index, step: 0, played: false, order: index === 1 ? all : [], cursor: index === 1 ? all.length : 0 };
  };
  try {
    if (at.phase === 0) {
      reflectDone = await phase(0, reflections, reflectSteps, 'reflections ', sft.reflectUntilLoss);
      if (reflectDone < reflectSteps) {
        progress.setTotal(reflectDone + sft.steps + ownSteps);
        log(`[sft] reflections alone: loss of the last ${LOSS_WINDOW} steps at or below ${sft.reflectUntilLoss} after ${reflectDone} of ${reflectSteps} steps`);
      }
      next(1);
      await save();
    }
    if (at.phase === 1) {
      await phase(1, all, sft.steps, '');
      next(2);
      await save();
    }
    for (let round = 0; round < ownRounds; round++) {
      if (at.phase !== 2 + round) continue;
      const D = demos.prompts.length;
      let order = at.order;
      if (!at.played) {
        runtime.resetCaches?.(); // the weights changed: cached prefixes are stale
        const own = await collectMistakes(config, runtime.client(), signal, round);
        // Each round's refused moves join the earlier rounds' (rows index mistakes, then labelled: renumbered each round).
        mistakes = [...mistakes, ...own.mistakes];
        labelled = mistakes.filter((m) => m.label !== undefined); // labels exist only with sft.mistakeLabels > 0
        const negatives = sft.unlikelihood > 0 ? mistakes.map((_, j) => D + j) : [];
        const labels = labelled.flatMap((_, k) => Array.from({ length: sft.mistakeLabels }, () => D + mistakes.length + k));
        const newLabels = own.mistakes.filter((m) => m.label !== undefined).length;
        log(
          `[sft] the model's own trials${sft.mistakeRounds > 1 ? ` (round ${round + 1} of ${sft.mistakeRounds})` : ''}: ${own.trials} played, ${own.refused} of ${own.turns} moves refused (${((100 * own.refused) / Math.max(1, own.turns)).toFixed(1)}%); ` +
            (sft.unlikelihood > 0
              ? `${own.mistakes.length} become unlikelihood states (the rest are not a readable action)`
              : `${own.mistakes.length} are readable`) +
            (sft.mistakeLabels > 0 ? `, ${newLabels} labelled with the demonstrator's move (${newLabels * sft.mistakeLabels} rows)` : '') +
            (round > 0 ? `; ${mistakes.length} states from ${round + 1} rounds` : '') +
            ` beside the demonstrations for ${sft.mistakeSteps} steps`,
        );
        order = [...all, ...negatives, ...labels];
        at = { phase: 2 + round, step: 0, played: true, order, cursor: order.length };
        // The trials took a while: a save here keeps them (a save at this step count already kept the same weights).
        savedAt = -1;
        await save();
      }
      await phase(2 + round, order, sft.mistakeSteps, sft.mistakeRounds > 1 ? `mistakes ${round + 1} ` : 'mistakes ');
      next(3 + round);
      await save();
    }
  } catch (e) {
    // A stop by signal keeps the steps done (one process: a rank stopping alone would leave the others in the save).
    if (signal?.aborted && steady && !(dist && dist.size > 1)) await save();
    throw e;
  }
  if (ownRounds > 0) runtime.resetCaches?.();
  progress.finish();
  return losses;
}
