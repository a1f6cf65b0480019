// The chance players of SPEC §11, the rows that say what "better than nothing" is on the same tasks. `random` answers
// an action drawn uniformly from the environment's admissible actions at every turn; `random-memory` does the same but
// never repeats an action that ended an earlier attempt of the same trial in failure (MineSweeper: the mine it hit). A
// trained agent that does not beat them has learned nothing a reader should credit.
//
// Both are per-trial policies: the runner makes one per trial and keeps it for all the trial's episodes, so the memory
// lives in the policy, not in the prompt (the trial runs with `reflect: false`, each attempt's prompt is a first one).

import { LamerError } from '../errors.js';
import { Rng } from '../util/rng.js';
import type { GenerateRequest, GenerateResult, PolicyClient, TrialPolicyFactory, TrialView } from './policy.js';
import { scriptedResult } from './scripted.js';
import { deriveSeed } from '../util/seed.js';

export interface RandomPolicyOptions {
  /** Never repeat an action that ended an earlier attempt of the trial in failure (`random-memory`). Default false. */
  memory?: boolean;
  /** Seed of the draws; each trial draws from its own stream derived from (seed, task seed, trial). Default 0. */
  seed?: number;
}

/** What the chance player answers when the environment lists no admissible action: an invalid turn, as a model's would be. */
export const NO_ADMISSIBLE_ACTION = 'No action is admissible here.';

/** The chance player of one trial. */
export class RandomPolicy implements PolicyClient {
  readonly #view: TrialView;
  readonly #rng: Rng;
  readonly #memory: boolean;
  /** Actions that ended an earlier attempt of this trial in failure. */
  readonly #failing = new Set<string>();
  /** The episode whose steps and results `#steps` and `#results` are; -1 before the first call. */
  #episode = -1;
  #steps: TrialView['steps'] = [];
  #results: TrialView['results'] = [];

  constructor(view: TrialView, options: RandomPolicyOptions = {}) {
    this.#view = view;
    this.#memory = options.memory ?? false;
    // Keyed by the task seed, not the group index, so the same task gets the same draws in any evaluation order.
    this.#rng = new Rng(deriveSeed(options.seed ?? 0, view.seed, view.trial));
  }

  /** Actions this trial will not repeat (empty without memory). */
  get failingActions(): ReadonlySet<string> {
    return this.#failing;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    // No model's token limit applies to a player without one: its answers are kept whole (char-code ids, not for training).
    request = { ...request, maxNewTokens: Number.MAX_SAFE_INTEGER };
    const view = this.#view;
    // The chance rows run without reflections; a trial that asks for one gets a reflection that states nothing.
    if (view.phase === 'reflect') return scriptedResult(request, '<remark></remark>');
    if (view.episode !== this.#episode) {
      this.#endEpisode();
      this.#episode = view.episode;
    }
    // The arrays of the episode being played; once the next episode starts they hold the finished one.
    this.#steps = view.steps;
    this.#results = view.results;
    const admissible = view.env.admissibleActions();
    const allowed = this.#memory ? admissible.filter((a) => !this.#failing.has(a)) : admissible;
    // When every admissible action once failed, the player has nothing better to do than guess among them all.
    const choices = allowed.length > 0 ? allowed : admissible;
    if (choices.length === 0) return scriptedResult(request, NO_ADMISSIBLE_ACTION);
    return scriptedResult(request, `<action>${this.#rng.pick(choices)}</action>`);
  }

  /** Remembers the action that ended the finished episode, when the environment's rules (not a limit) ended it in failure. */
  #endEpisode(): void {
    if (!this.#memory || this.#results.length === 0) return;
    const last = this.#results[this.#results.length - 1];
    if (last.done && !last.won && !last.truncated) this.#failing.add(this.#steps[this.#steps.length - 1].action);
  }
}

/** A per-trial policy factory of chance players for the runner. */
export function randomPolicy(options: RandomPolicyOptions = {}): TrialPolicyFactory {
  if (options.memory !== undefined && typeof options.memory !== 'boolean') {
    throw new LamerError('E_ARG', `randomPolicy option memory: expected true or false, found ${JSON.stringify(options.memory)}`);
  }
  if (options.seed !== undefined && !(Number.isInteger(options.seed) && options.seed >= 0)) {
    throw new LamerError('E_ARG', `randomPolicy option seed: expected a non-negative integer, found ${JSON.stringify(options.seed)}`);
  }
  return (view) => new RandomPolicy(view, options);
}
