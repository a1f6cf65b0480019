// How each method runs its trials (SPEC §2, §4). LaMer and Reflexion carry memory and reflect between episodes;
// the single-episode RL baselines train with N = 1 and K x N trials per task (equal episode budget) and, like the
// ReAct and zero-shot prompting baselines, are evaluated with N independent attempts, each with an empty memory.
// The chance rows (SPEC §11) need no model: `random` plays uniformly among the admissible actions, `random-memory`
// also never repeats an action that ended an earlier attempt in failure; both attempt each episode without a prompt memory.

import type { PromptVariant } from '../agent/prompts.js';
import { LamerError } from '../errors.js';

export const METHODS = ['lamer', 'gigpo', 'grpo', 'ppo', 'reflexion', 'react', 'zero-shot', 'random', 'random-memory'] as const;
export type Method = (typeof METHODS)[number];

/**
 * What a method is, in one place; everything else reads it.
 *   play       trained (weights updated by RL), frozen (a prompting baseline over a fixed policy) or chance (no model)
 *   reflect    memory and reflections between the episodes of a trial (training and evaluation)
 *   prompt     the play prompt's variant
 *   rollout    trials: K trials of N episodes per task; single: K x N trials of one episode (equal episode budget)
 *   estimator  the advantage estimator it forces ('config': advantage.estimator as configured)
 *   critic     a value head trained beside the policy, and GAE over its values for per-token advantages
 */
export interface MethodSpec {
  play: 'trained' | 'frozen' | 'chance';
  reflect: boolean;
  prompt: PromptVariant;
  rollout: 'trials' | 'single' | null;
  estimator: 'config' | 'grpo';
  critic: boolean;
}

export const METHOD_SPECS: Readonly<Record<Method, MethodSpec>> = Object.freeze({
  lamer: { play: 'trained', reflect: true, prompt: 'react', rollout: 'trials', estimator: 'config', critic: false },
  gigpo: { play: 'trained', reflect: false, prompt: 'react', rollout: 'single', estimator: 'config', critic: false },
  grpo: { play: 'trained', reflect: false, prompt: 'react', rollout: 'single', estimator: 'grpo', critic: false },
  ppo: { play: 'trained', reflect: false, prompt: 'react', rollout: 'single', estimator: 'config', critic: true },
  reflexion: { play: 'frozen', reflect: true, prompt: 'react', rollout: null, estimator: 'config', critic: false },
  react: { play: 'frozen', reflect: false, prompt: 'react', rollout: null, estimator: 'config', critic: false },
  'zero-shot': { play: 'frozen', reflect: false, prompt: 'zero-shot', rollout: null, estimator: 'config', critic: false },
  random: { play: 'chance', reflect: false, prompt: 'react', rollout: null, estimator: 'config', critic: false },
  'random-memory': { play: 'chance', reflect: false, prompt: 'react', rollout: null, estimator: 'config', critic: false },
});

/** Methods whose weights are trained; the others are prompting baselines with a frozen policy, or chance players. */
export const TRAINED_METHODS: readonly Method[] = Object.freeze(METHODS.filter((m) => METHOD_SPECS[m].play === 'trained'));

/** The chance players: no model, actions drawn from the environment's admissible ones (rollout/random.ts). */
export const CHANCE_METHODS: readonly Method[] = Object.freeze(METHODS.filter((m) => METHOD_SPECS[m].play === 'chance'));

/** The advantage estimator a method trains with: the one it forces, else the configured one. */
export function methodEstimator<E extends string>(method: Method, configured: E): E | 'grpo' {
  const forced = METHOD_SPECS[checkMethod(method)].estimator;
  return forced === 'config' ? configured : forced;
}

/** The method plays without a model (a chance row), so evaluating it needs no checkpoint. */
export function isChanceMethod(method: Method): boolean {
  return METHOD_SPECS[checkMethod(method)].play === 'chance';
}

export function isMethod(value: unknown): value is Method {
  return typeof value === 'string' && (METHODS as readonly string[]).includes(value);
}

function checkMethod(method: unknown): Method {
  if (!isMethod(method)) {
    throw new LamerError('E_ARG', `method ${JSON.stringify(method)}: expected one of ${METHODS.join(', ')}`);
  }
  return method;
}

export interface MethodTrialMode {
  /** Memory and reflections across episodes (see TrialConfig.reflect). */
  reflect: boolean;
  promptVariant: PromptVariant;
}

/** The trial mode of a method at evaluation: only LaMer and Reflexion reflect (random-memory's memory is its own). */
export function evalTrialMode(method: Method): MethodTrialMode {
  const spec = METHOD_SPECS[checkMethod(method)];
  return { reflect: spec.reflect, promptVariant: spec.prompt };
}

export interface TrainRolloutShape extends MethodTrialMode {
  /** Episodes per trial in training. */
  episodes: number;
  /** Trials per task (group size). */
  trialsPerTask: number;
}

/**
 * The training rollout of a trained method for LaMer's N and group size K: LaMer plays K trials of N episodes; the
 * single-episode baselines play K x N trials of one episode, the same episode budget per task.
 */
export function trainRolloutShape(method: Method, episodes: number, groupSize: number): TrainRolloutShape {
  checkMethod(method);
  if (!TRAINED_METHODS.includes(method)) {
    throw new LamerError('E_CONFIG', `method ${method} is a prompting baseline (frozen policy): it has no training rollout`);
  }
  for (const [name, v] of [
    ['episodes', episodes],
    ['groupSize', groupSize],
  ] as const) {
    if (!Number.isInteger(v) || v < 1) {
      throw new LamerError('E_CONFIG', `${name}: expected a positive integer, found ${JSON.stringify(v)}`);
    }
  }
  const spec = METHOD_SPECS[method];
  if (spec.rollout === 'trials') return { reflect: spec.reflect, promptVariant: spec.prompt, episodes, trialsPerTask: groupSize };
  return { reflect: spec.reflect, promptVariant: spec.prompt, episodes: 1, trialsPerTask: groupSize * episodes };
}
