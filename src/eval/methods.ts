// How each method runs its trials (SPEC §2, §4). LaMer and Reflexion carry memory and reflect between episodes;
// the single-episode RL baselines train with N = 1 and K x N trials per task (equal episode budget) and, like the
// ReAct and zero-shot prompting baselines, are evaluated with N independent attempts, each with an empty memory.
// The chance rows (SPEC §11) need no model: `random` plays uniformly among the admissible actions, `random-memory`
// also never repeats an action that ended an earlier attempt in failure; both attempt each episode without a prompt memory.

import type { PromptVariant } from '../agent/prompts.js';
import { LamerError } from '../errors.js';

export const METHODS = ['lamer', 'gigpo', 'grpo', 'ppo', 'reflexion', 'react', 'zero-shot', 'random', 'random-memory'] as const;
export type Method = (typeof METHODS)[number];

/** Methods whose weights are trained; the others are prompting baselines with a frozen policy, or chance players. */
export const TRAINED_METHODS: readonly Method[] = Object.freeze(['lamer', 'gigpo', 'grpo', 'ppo']);

/** The chance players: no model, actions drawn from the environment's admissible ones (rollout/random.ts). */
export const CHANCE_METHODS: readonly Method[] = Object.freeze(['random', 'random-memory']);

/** The method plays without a model (a chance row), so evaluating it needs no checkpoint. */
export function isChanceMethod(method: Method): boolean {
  return CHANCE_METHODS.includes(method);
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
  switch (checkMethod(method)) {
    case 'lamer':
    case 'reflexion':
      return { reflect: true, promptVariant: 'react' };
    case 'zero-shot':
      return { reflect: false, promptVariant: 'zero-shot' };
    default:
      return { reflect: false, promptVariant: 'react' };
  }
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
  for (const [name, v] of [['episodes', episodes], ['groupSize', groupSize]] as const) {
    if (!Number.isInteger(v) || v < 1) {
      throw new LamerError('E_CONFIG', `${name}: expected a positive integer, found ${JSON.stringify(v)}`);
    }
  }
  if (method === 'lamer') return { reflect: true, promptVariant: 'react', episodes, trialsPerTask: groupSize };
  return { reflect: false, promptVariant: 'react', episodes: 1, trialsPerTask: groupSize * episodes };
}
