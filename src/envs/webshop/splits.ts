// Which goal a task seed plays, in three split modes (docs/spec.md §8):
//   lamer   - one goal list (worker seed `goalSeed`), split by goal content into training, model-selection and
//             evaluation goals (contentSplit): a seed of each range plays goals of its own split only.
//   paper   - LaMer's code: every worker shuffles its own goal list with its seed; evaluation task i is env i % 128 of
//             validation reset i / 128 (worker seed 1000 + i % 128, goal index from numpy RandomState(1000).choice(
//             range(500), 128, replace=False)); training task t is env t % 8 of training reset t / 8 (worker seed t % 8,
//             index 500 + RandomState(0).choice(len - 500, 8)). Evaluation goals are therefore a random subset of the
//             pool training draws from, as in LaMer.
//   webshop - the original WebShop's fixed split: random.seed(233) and shuffle; test goals 0-499 (evaluation),
//             500-1499 (model selection), 1500 on (training).

import { LamerError } from '../../errors.js';
import { NumpyRandomState, PyRandom } from '../../util/mt19937.js';
import { contentSplit, contentSplitOfSeed, EVAL_SEEDS, SELECT_SEEDS, TRAIN_SEEDS, type ContentSplit } from '../common/seeds.js';
import { drawGoalSet, goalAt, type Goal, type GoalSet } from './data/pipeline.js';
import type { WebShopData } from './loader.js';

export const SPLIT_MODES = ['lamer', 'paper', 'webshop'] as const;
export type SplitMode = (typeof SPLIT_MODES)[number];

/** LaMer's batch sizes: 8 training tasks per reset (train_batch_size), 128 evaluation tasks (val_batch_size). */
export const PAPER_TRAIN_TASKS = 8;
export const PAPER_EVAL_TASKS = 128;
/** LaMer's evaluation goals are indices below 500 of each worker's shuffled list; training draws from the rest. */
export const PAPER_EVAL_POOL = 500;
/** Training resets of LaMer's stream reproduced exactly (2,048 x 8 tasks); later tasks are refused. */
export const PAPER_TRAIN_RESETS = 2048;
/** The original WebShop's shuffle seed and split bounds. */
export const WEBSHOP_SEED = 233;
export const WEBSHOP_TEST_END = 500;
export const WEBSHOP_EVAL_END = 1500;

/** A picked goal: its worker seed's goal set and its position there. */
export interface PickedGoal {
  set: GoalSet;
  position: number;
  goal: Goal;
}

/** The content key of a goal: equal for two picks exactly when they are the same task. */
export function goalKey(goal: Goal): string {
  const options = goal.goalOptions instanceof Map ? JSON.stringify([...goal.goalOptions]) : JSON.stringify(goal.goalOptions);
  return `${goal.asin}\n${goal.instruction}\n${JSON.stringify(goal.attributes)}\n${options}`;
}

export class GoalPicker {
  readonly #data: WebShopData;
  readonly #mode: SplitMode;
  readonly #goalSeed: number;
  readonly #sets = new Map<number, GoalSet>();
  #contentLists: Record<ContentSplit, number[]> | undefined;
  /** LaMer's reset streams: the index choices made so far (one array per reset). */
  readonly #streams = new Map<number, { rs: NumpyRandomState; calls: number[][] }>();

  constructor(data: WebShopData, mode: SplitMode, goalSeed: number) {
    this.#data = data;
    this.#mode = mode;
    this.#goalSeed = goalSeed;
  }

  get goalCount(): number {
    return this.#data.goalBase.goals.length;
  }

  /** The goal set of a worker seed (cached: the draws are the same every time). */
  goalSet(seed: number): GoalSet {
    let set = this.#sets.get(seed);
    if (set === undefined) {
      set = drawGoalSet(this.#data.products, this.#data.goalBase, seed);
      // Evaluation uses up to 128 worker seeds; keep a bounded number.
      if (this.#sets.size >= 256) this.#sets.delete(this.#sets.keys().next().value!);
      this.#sets.set(seed, set);
    }
    return set;
  }

  pick(seed: number): PickedGoal {
    const split = contentSplitOfSeed(seed);
    if (split === undefined) {
      throw new LamerError(
        'E_ENV',
        `webshop.reset(${seed}): the seed is in neither the training [${TRAIN_SEEDS.start}, ${TRAIN_SEEDS.end}) nor the evaluation range`,
      );
    }
    const index = seed - (split === 'eval' ? EVAL_SEEDS.start : split === 'select' ? SELECT_SEEDS.start : TRAIN_SEEDS.start);
    const [workerSeed, position] = this.#locate(split, index, seed);
    const set = this.goalSet(workerSeed);
    return { set, position, goal: goalAt(set, this.#data.products, position) };
  }

  #locate(split: ContentSplit, index: number, seed: number): [number, number] {
    const n = this.goalCount;
    switch (this.#mode) {
      case 'lamer': {
        const list = this.#content()[split];
        if (list.length === 0) throw new LamerError('E_ENV', `webshop split 'lamer': no goal of the ${split} content split among ${n} goals; use more data`);
        return [this.#goalSeed, list[index % list.length]];
      }
      case 'webshop': {
        if (n <= WEBSHOP_EVAL_END) {
          throw new LamerError(
            'E_ENV',
            `webshop split 'webshop' needs more than ${WEBSHOP_EVAL_END} goals (test 0-499, eval 500-1499, train 1500+); the data has ${n}`,
          );
        }
        if (split === 'eval') return [WEBSHOP_SEED, index % WEBSHOP_TEST_END];
        if (split === 'select') return [WEBSHOP_SEED, WEBSHOP_TEST_END + (index % (WEBSHOP_EVAL_END - WEBSHOP_TEST_END))];
        return [WEBSHOP_SEED, WEBSHOP_EVAL_END + (index % (n - WEBSHOP_EVAL_END))];
      }
      case 'paper': {
        if (n <= PAPER_EVAL_POOL)
          throw new LamerError(
            'E_ENV',
            `webshop split 'paper' needs more than ${PAPER_EVAL_POOL} goals (LaMer evaluates on indices below 500); the data has ${n}`,
          );
        if (split === 'eval') {
          const env = index % PAPER_EVAL_TASKS;
          const reset = Math.floor(index / PAPER_EVAL_TASKS);
          return [1000 + env, this.#choice(1000, reset, PAPER_EVAL_POOL, PAPER_EVAL_TASKS)[env]];
        }
        const env = index % PAPER_TRAIN_TASKS;
        const reset = Math.floor(index / PAPER_TRAIN_TASKS);
        if (reset >= PAPER_TRAIN_RESETS) {
          throw new LamerError(
            'E_ENV',
            `webshop split 'paper': task seed ${seed} is training reset ${reset} of LaMer's stream, past the ${PAPER_TRAIN_RESETS} reproduced; ` +
              "use run seed 0 (its tasks start at 0) or split 'lamer'",
          );
        }
        return [env, PAPER_EVAL_POOL + this.#choice(0, reset, n - PAPER_EVAL_POOL, PAPER_TRAIN_TASKS)[env]];
      }
    }
  }

  /** The k-th call of RandomState(seed).choice(pool, size, replace=False) (each call continues the stream). */
  #choice(seed: number, k: number, pool: number, size: number): number[] {
    let stream = this.#streams.get(seed);
    if (stream === undefined) {
      stream = { rs: new NumpyRandomState(seed), calls: [] };
      this.#streams.set(seed, stream);
    }
    while (stream.calls.length <= k) stream.calls.push(stream.rs.choiceWithoutReplacement(pool, size));
    return stream.calls[k];
  }

  #content(): Record<ContentSplit, number[]> {
    if (this.#contentLists === undefined) {
      const set = this.goalSet(this.#goalSeed);
      const lists: Record<ContentSplit, number[]> = { train: [], select: [], eval: [] };
      for (let k = 0; k < set.order.length; k++) lists[contentSplit(goalKey(goalAt(set, this.#data.products, k)))].push(k);
      this.#contentLists = lists;
    }
    return this.#contentLists;
  }
}

/**
 * The original's random restart draw after a purchase (LaMer's step() resets to a random session): per purchase, ten
 * random() calls (the session name) and random_idx over the goals' cumulative weights, on the worker's stream, which
 * starts just past the goal shuffle with one such draw already made by the environment's constructor.
 */
export class PaperRestartStream {
  readonly #py = new PyRandom(0);
  readonly #cumulative: Float64Array;

  constructor(data: WebShopData, set: GoalSet) {
    drawGoalSet(data.products, data.goalBase, set.seed, this.#py);
    const weights = Array.from(set.order, (i) => data.goalBase.goals[i].weight);
    this.#cumulative = new Float64Array(weights.length + 1);
    for (let i = 0; i < weights.length; i++) this.#cumulative[i + 1] = this.#cumulative[i] + weights[i];
    this.next();
  }

  /** The position of the next random goal. */
  next(): number {
    for (let i = 0; i < 10; i++) this.#py.random();
    const c = this.#cumulative;
    const pos = this.#py.uniform(0, c[c.length - 1]);
    // bisect.bisect (right) then min(idx, len(cum) - 2), as utils.random_idx does.
    let lo = 0;
    let hi = c.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (pos < c[mid]) hi = mid;
      else lo = mid + 1;
    }
    return Math.min(lo, c.length - 2);
  }
}
