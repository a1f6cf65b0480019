// The model's own refused moves, for the warm start's last phase (sft.mistakeTrials): the warm-started model plays
// LaMer trials on demonstration tasks, as RL's rollouts sample, and each of its moves the environment refused is kept
// with the state it was made at (the prompt) and the moves the environment would have accepted there. Imitation shows
// the scripted players' states; a model that refuses a click reaches states of its own (the refused click marked among
// its actions, the page unchanged) and repeats the click there, which no demonstration shows.
import { extractAction } from '../envs/common/tags.js';
import { runRollout } from '../rollout/runner.js';
import { policyForTrial, type MoveContrast, type PolicySource, type TrialPolicyFactory } from '../rollout/policy.js';
import { deriveSeed } from '../util/seed.js';
import type { TrainerConfig } from './config.js';
import { demonstrationTasks, demonstrationTrial, moveContrast } from './demonstrations.js';

/** A refused move of the model: the prompt it answered, its move as the refused one, the admissible moves there. */
export interface Mistake {
  prompt: string;
  contrast: MoveContrast;
}

export interface Mistakes {
  mistakes: Mistake[];
  /** Play turns of the model, and how many were refused (`mistakes` keeps those whose action could be read). */
  turns: number;
  refused: number;
  trials: number;
}

/** A policy that records, at each play turn, the actions the environment accepts at that state. */
function recordingAdmissible(source: PolicySource): TrialPolicyFactory {
  return (view) => {
    const inner = policyForTrial(source, view);
    return {
      async generate(request) {
        if (view.phase !== 'play') return inner.generate(request);
        const admissible = view.env.admissibleActions();
        const out = await inner.generate(request);
        return { ...out, contrast: { refused: [], admissible } };
      },
    };
  };
}

/** Plays `config.sft.mistakeTrials` trials with `policy` (the model) and returns its refused moves. */
export async function collectMistakes(config: TrainerConfig, policy: PolicySource, signal?: AbortSignal): Promise<Mistakes> {
  const { tasks, env } = demonstrationTasks(config);
  const count = Math.min(config.sft.mistakeTrials, tasks.length);
  const perTask = Math.ceil(config.sft.mistakeTrials / count);
  const r = config.rollout;
  const batch = await runRollout({
    policy: recordingAdmissible(policy),
    env,
    tasks: tasks.slice(0, count),
    trialsPerTask: perTask,
    trial: demonstrationTrial(config, { temperature: r.temperature, topP: r.topP, topK: r.topK, maxNewTokens: r.maxResponseTokens }),
    seed: deriveSeed(config.seed, 0x5e1f),
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
    const recorded = batch.contrast[i];
    const action = extractAction(batch.responses[i]);
    if (!recorded || action === null) continue;
    const contrast = moveContrast(batch.responses[i], [action.trim()], recorded.admissible);
    if (contrast) mistakes.push({ prompt: batch.prompts[i], contrast });
  }
  return { mistakes, turns, refused, trials: batch.trials.length };
}
