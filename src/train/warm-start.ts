// The supervised warm start (config.sft): scripted demonstrations (src/train/demonstrations.ts) trained on for
// `sft.reflectSteps` steps on the reflection rows alone, then `sft.steps` steps on all rows, in seeded shuffles. In a
// data-parallel run every rank draws the same rows and trains on its share of them (one global batch).
import { Progress } from '../util/progress.js';
import { Rng } from '../util/rng.js';
import { deriveSeed } from '../util/seed.js';
import type { TrainerConfig } from './config.js';
import { collectDemonstrations } from './demonstrations.js';
import type { DistContext } from './distributed.js';
import type { PolicyRuntime } from './runtime.js';
import type { MoveContrast } from '../rollout/policy.js';
import { collectMistakes, type Mistake } from './mistakes.js';
import { LamerError } from '../errors.js';

/** Steps whose mean loss decides when the reflection-only phase has done its work (sft.reflectUntilLoss). */
const LOSS_WINDOW = 10;

export interface WarmStartOptions {
  dist?: DistContext;
  /** No progress bar. */
  silent?: boolean;
  log?: (line: string) => void;
  signal?: AbortSignal;
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
  const all = Array.from({ length: demos.prompts.length }, (_, i) => i);
  const reflections = all.filter((i) => demos.reflect[i]);
  const reflectSteps = reflections.length > 0 ? sft.reflectSteps : 0;
  const contrasted = demos.contrast.filter((c) => c !== null);
  log(
    `[sft] ${demos.prompts.length} demonstration rows (${reflections.length} reflections) from ${demos.trials} trials (${demos.won} won)` +
      (sft.reflectSteps > 0 && reflectSteps === 0 ? '; no reflections, so no reflection-only steps' : '') +
      (sft.unlikelihood > 0
        ? `; ${contrasted.length} of them with refused moves beside them (${contrasted.reduce((s, c) => s + c.refused.length, 0)} unlikelihood rows, weight ${sft.unlikelihood})`
        : ''),
  );
  const ownRounds = sft.mistakeTrials > 0 ? sft.mistakeRounds : 0;
  const ownSteps = sft.mistakeSteps * ownRounds;
  const progress = new Progress({ label: 'sft', total: reflectSteps + sft.steps + ownSteps, unit: 'steps', silent: options.silent });
  const losses: number[] = [];
  const rng = new Rng(deriveSeed(config.seed, 0x5f7));
  // The model's own refused moves (sft.mistakeTrials), drawn after the demonstrations' rows: index D + j is mistake j
  // (its unlikelihood row), index D + M + k the k-th labelled one's demonstrator move (sft.mistakeLabels).
  let mistakes: Mistake[] = [];
  let labelled: Mistake[] = [];
  // Returns the steps taken: `steps`, or fewer when the mean loss of the last LOSS_WINDOW steps reaches `untilLoss`.
  const phase = async (order: number[], steps: number, label: string, untilLoss: number | null = null): Promise<number> => {
    let cursor = order.length;
    const D = demos.prompts.length;
    for (let step = 0; step < steps; step++) {
      signal?.throwIfAborted();
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
          if (i >= D + mistakes.length) {
            const m = labelled[i - D - mistakes.length];
            prompts.push(m.prompt);
            responses.push(m.label!);
            contrast.push(null);
          } else if (i >= D) {
            negatives.push(mistakes[i - D]);
          } else {
            prompts.push(demos.prompts[i]);
            responses.push(demos.responses[i]);
            contrast.push(demos.contrast[i]);
          }
        }
        cursor++;
      }
      const { loss } = await runtime.supervised({ prompts, responses, contrast, ...(negatives.length ? { negatives } : {}) }, config);
      losses.push(loss);
      progress.tick(1, `${label}loss ${loss.toFixed(4)}`);
      if (untilLoss !== null && step + 1 >= LOSS_WINDOW && mean(losses.slice(-LOSS_WINDOW)) <= untilLoss) return step + 1;
    }
    return steps;
  };
  const reflectDone = await phase(reflections, reflectSteps, 'reflections ', sft.reflectUntilLoss);
  if (reflectDone < reflectSteps) {
    progress.setTotal(reflectDone + sft.steps + ownSteps);
    log(`[sft] reflections alone: loss of the last ${LOSS_WINDOW} steps at or below ${sft.reflectUntilLoss} after ${reflectDone} of ${reflectSteps} steps`);
  }
  await phase(all, sft.steps, '');
  for (let round = 0; round < ownRounds; round++) {
    runtime.resetCaches?.(); // the weights changed: cached prefixes are stale
    const own = await collectMistakes(config, runtime.client(), signal, round);
    // Each round's refused moves join the earlier rounds' (rows index mistakes, then labelled: renumbered each round).
    mistakes = [...mistakes, ...own.mistakes];
    labelled = mistakes.filter((m) => m.label !== undefined); // labels exist only with sft.mistakeLabels > 0
    const D = demos.prompts.length;
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
    await phase([...all, ...negatives, ...labels], sft.mistakeSteps, sft.mistakeRounds > 1 ? `mistakes ${round + 1} ` : 'mistakes ');
  }
  if (ownRounds > 0) runtime.resetCaches?.();
  progress.finish();
  return losses;
}
