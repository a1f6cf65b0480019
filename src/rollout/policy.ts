// The boundary between the rollout and whatever produces text: the native generation engine, a scripted expert, or a
// test double. A trial awaits one `generate` at a time; the runner runs many trials at once, so an engine that collects
// the calls pending at any moment can decode them as one batch (continuous batching). That is why nothing here is
// batched by hand: concurrency comes from many sequential trials, not from a batched API.

import type { Environment, StepResult, TrajectoryStep } from '../envs/types.js';

/** How one response is sampled. Evaluation defaults (SPEC §6): temperature 0.7, top-p 0.8, top-k 20. */
export interface SamplingOptions {
  temperature: number;
  topP: number;
  /** 0 or less: no top-k cut. */
  topK: number;
  maxNewTokens: number;
  /** Stop strings, in addition to the model's end-of-turn tokens. */
  stop?: string[];
}

export interface GenerateRequest extends SamplingOptions {
  /** The user message; the policy applies its chat template. */
  prompt: string;
  /** Seed of this one request, so results do not depend on which other requests share its batch. */
  seed?: number;
  /** Aborted when the rollout is abandoned: an engine may drop the request (the runner stops waiting either way). */
  signal?: AbortSignal;
}

export type FinishReason = 'stop' | 'length';

export interface GenerateResult {
  /** The decoded response. */
  text: string;
  /** The prompt's token ids after the chat template. */
  promptIds: Int32Array;
  responseIds: Int32Array;
  /** Sampling log-prob of each response token (at the sampling temperature), same length as `responseIds`. */
  logprobs: Float32Array;
  finishReason: FinishReason;
  /**
   * A scripted player's random move (a noisy expert's exploration), not its own choice: demonstrations leave such rows
   * out. Absent for a model's answers.
   */
  randomMove?: boolean;
  /**
   * A scripted player's move where copying the request would be refused (WebShop: a product page that lacks a
   * requested option value, where the player clicks only what is offered): the warm start repeats such rows
   * `sft.checkWeight` times. Absent for a model's answers.
   */
  checkTurn?: boolean;
  /**
   * A scripted player's turn: moves a model plausibly makes here that the environment refuses, beside the moves it
   * accepts (whole responses), for the warm start's unlikelihood rows (sft.unlikelihood). Absent for a model's answers.
   */
  contrast?: MoveContrast;
}

/** Refused and admissible responses at one state (GenerateResult.contrast). */
export interface MoveContrast {
  refused: readonly string[];
  admissible: readonly string[];
}

export interface PolicyClient {
  generate(request: GenerateRequest): Promise<GenerateResult>;
}

/**
 * What a trial shows a per-trial policy (scripted experts, test doubles): its environment and where it is. The fields
 * are live: they change as the trial advances. A model-backed policy never needs this; it reads only the prompt.
 */
export interface TrialView {
  readonly env: Environment;
  readonly group: number;
  readonly trial: number;
  /** The task seed the environment was reset with. */
  readonly seed: number;
  /** What the pending request is for. */
  readonly phase: 'play' | 'reflect';
  /** The episode being played, or (during reflection) the episode the reflection is written for. */
  readonly episode: number;
  /** Steps of the episode being played; during reflection, the failed episode being reflected on. */
  readonly steps: readonly TrajectoryStep[];
  /** What the environment answered to each of `steps` (same episode, same order). */
  readonly results: readonly StepResult[];
}

/** Makes one policy per trial, after the trial's environment is reset. */
export type TrialPolicyFactory = (view: TrialView) => PolicyClient;

/** A shared client (the engine) or a factory of per-trial clients (scripted players). */
export type PolicySource = PolicyClient | TrialPolicyFactory;

export function policyForTrial(source: PolicySource, view: TrialView): PolicyClient {
  return typeof source === 'function' ? source(view) : source;
}

export const TRAIN_SAMPLING: Readonly<SamplingOptions> = Object.freeze({
  temperature: 1.0,
  topP: 1.0,
  topK: 0,
  maxNewTokens: 1024,
});

export const EVAL_SAMPLING: Readonly<SamplingOptions> = Object.freeze({
  temperature: 0.7,
  topP: 0.8,
  topK: 20,
  maxNewTokens: 1024,
});
