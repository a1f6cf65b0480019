// The model's own refused moves, for the warm start's last phase (sft.mistakeTrials): the warm-started model plays
// LaMer trials on demonstration tasks, as RL's rollouts sample, and each of its moves the environment refused is kept
// with the state it was made at (the prompt) and the moves the environment would have accepted there. Imitation shows
// the scripted players' states; a model that refuses a click reaches states of its own (the refused click marked among
// its actions, the page unchanged) and repeats the click there, which no demonstration shows. With sft.mistakeLabels
// each such state also keeps the move the memory player (the demonstrator) makes there, from the model's own episode
// and what its failed episodes showed: the move to copy at a state only the model reaches (as DAgger labels the
// learner's states with the expert's moves).
import { extractAction } from '../envs/common/tags.js';
import { runRollout } from '../rollout/runner.js';
import { policyForTrial, type MoveContrast, type PolicySource, type TrialPolicyFactory } from '../rollout/policy.js';
import { deriveSeed } from '../util/seed.js';
import type { TrainerConfig } from './config.js';
import { demonstrationTasks, demonstrationTrial, memoryPlayer, moveContrast } from './demonstrations.js';

/** A refused move of the model: the prompt it answered, its move as the refused one, the admissible moves there. */
export interface Mistake {
  prompt: string;
  contrast: MoveContrast;
  /** The memory player's response at this state (sft.mistakeLabels > 0), else undefined. */
  label?: string;
}

/** What the recording policy keeps at a play turn: the admissible moves, and the memory player's response. */
interface Recorded extends MoveContrast {
  label?: string;
}

export interface Mistakes {
  mistakes: Mistake[];
  /** Play turns of the model, and how many were refused (`mistakes` keeps those whose action could be read). */
  turns: number;
  refused: number;
  trials: number;
}

/**
 * A policy that records, at each play turn, the actions the environment accepts at that state and (with `labels`) the
 * memory player's response there. The player follows the trial as the model plays it: it reads the episode's steps
 * and remembers what each failed episode showed, as it does in its own demonstrations.
 */
function recording(config: TrainerConfig, source: PolicySource, labels: boolean): TrialPolicyFactory {
  return (view) => {
    const inner = policyForTrial(source, view);
    const player = labels ? memoryPlayer(config, view.env) : null;
    return {
      async generate(request) {
        if (view.phase !== 'play') {
          player?.endEpisode(view.steps);
          return inner.generate(request);
        }
        const admissible = view.env.admissibleActions();
        const label = player?.act(view.steps);
        const out = await inner.generate(request);
        const recorded: Recorded = { refused: [], admissible, ...(label !== undefined ? { label } : {}) };
        return { ...out, contrast: recorded };
      },
    };
  };
}

/**
 * Plays `config.sft.mistakeTrials` trials with `policy` (the model) and returns its refused moves. Round `round` of
 * sft.mistakeRounds plays the demonstration tasks that follow the previous round's (wrapping around), with samples of
 * its own; round 0 is the first `mistakeTrials` tasks.
 */
export async function collectMistakes(config: TrainerConfig, policy: PolicySource, signal?: AbortSignal, round = 0): Promise<Mistakes> {
  const { tasks, env } = demonstrationTasks(config);
  const count = Math.min(config.sft.mistakeTrials, tasks.length);
  const perTask = Math.ceil(config.sft.mistakeTrials / count);
  const r = config.rollout;
  const first = (round * count) % tasks.length;
  const batch = await runRollout({
    policy: recording(config, policy, config.sft.mistakeLabels > 0),
    env,
    tasks: Array.from({ length: count }, (_, i) => tasks[(first + i) % tasks.length]),
    trialsPerTask: perTask,
    trial: demonstrationTrial(config, { temperature: r.temperature, topP: r.topP, topK: r.topK, maxNewTokens: r.maxResponseTokens }),
    // Round 0 keeps the seed one round always had (deriveSeed mixes in how many parts it is given).
    seed: round === 0 ? deriveSeed(config.seed, 0x5e1f) : deriveSeed(config.seed, 0x5e1f, round),
    signal,
  });
  const t = batch.table;
  const mistakes: Mistake[] = [];
  let turns = 0;
  let refused = 0;
  for (let i = 0; i < t.length; i++) {
    if (t.phase[i] !== 0) continue;
    turns++;
    if (t.valid[i] !== 0) continue;
    refused++;
    const recorded = batch.contrast[i] as Recorded | null;
    const action = extractAction(batch.responses[i]);
    if (!recorded || action === null) continue;
    const contrast = moveContrast(batch.responses[i], [action.trim()], recorded.admissible);
    if (!contrast) continue;
    // A label is kept only where the player's move is one the state accepts (its fallbacks are).
    const labelAction = recorded.label === undefined ? null : extractAction(recorded.label);
    const label = labelAction !== null && recorded.admissible.includes(labelAction.trim()) ? recorded.label : undefined;
    mistakes.push({ prompt: batch.prompts[i], contrast, ...(label !== undefined ? { label } : {}) });
  }
  return { mistakes, turns, refused, trials: batch.trials.length };
}
