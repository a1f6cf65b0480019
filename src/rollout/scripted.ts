// Policies without a model. `scriptedPolicy` plays each trial with its environment's expert, answering a random
// admissible action with probability `noise` (and an unparsable answer with probability `invalid`), seeded per trial:
// it checks an environment end to end and feeds the tests and the rollout bench. `simulateBatchedEngine` wraps any
// policy in the timing of a continuous-batching engine, so the benefit of running trials concurrently can be measured
// without a model.

import { createExpert, type ExpertOptions } from '../envs/registry.js';
import type { Expert } from '../envs/types.js';
import { LamerError } from '../errors.js';
import { Rng } from '../util/rng.js';
import {
  policyForTrial,
  type GenerateRequest,
  type GenerateResult,
  type PolicyClient,
  type PolicySource,
  type TrialPolicyFactory,
  type TrialView,
} from './policy.js';
import { deriveSeed } from '../util/seed.js';

/** Token ids of a text for policies without a tokenizer: one id per UTF-16 code unit. */
export function charCodeIds(text: string): Int32Array {
  const ids = new Int32Array(text.length);
  for (let i = 0; i < text.length; i++) ids[i] = text.charCodeAt(i);
  return ids;
}

/**
 * A complete GenerateResult for a response chosen without a model: char-code ids, cut at `maxNewTokens` like an
 * engine would (finish reason `length`), and a fixed log-prob per token (log 0.9, a confident sampler).
 */
export function scriptedResult(request: GenerateRequest, response: string): GenerateResult {
  const cut = response.length > request.maxNewTokens;
  const text = cut ? response.slice(0, request.maxNewTokens) : response;
  const responseIds = charCodeIds(text);
  return {
    text,
    promptIds: charCodeIds(request.prompt),
    responseIds,
    logprobs: new Float32Array(responseIds.length).fill(Math.log(0.9)),
    finishReason: cut ? 'length' : 'stop',
  };
}

export interface ScriptedPolicyOptions {
  /** Probability of answering a random admissible action instead of the expert's (play turns). Default 0. */
  noise?: number;
  /** Probability of an answer with no tags at all (play and reflect turns): an invalid row. Default 0. */
  invalid?: number;
  /** Seed of the noise; each trial draws from its own stream derived from (seed, group, trial). Default 0. */
  seed?: number;
  /** Reflection style of the experts (`compact` for tiny models). */
  expert?: ExpertOptions;
}

function probability(name: string, value: number | undefined): number {
  const p = value ?? 0;
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) {
    throw new LamerError('E_ARG', `scriptedPolicy option ${name}: expected a probability in [0, 1], found ${JSON.stringify(value)}`);
  }
  return p;
}

/** The scripted policy of one trial: the expert of the trial's environment plus seeded noise. */
export class ScriptedPolicy implements PolicyClient {
  private readonly expert: Expert;
  private readonly rng: Rng;
  private readonly noise: number;
  private readonly invalid: number;

  constructor(
    private readonly view: TrialView,
    options: ScriptedPolicyOptions = {},
  ) {
    this.noise = probability('noise', options.noise);
    this.invalid = probability('invalid', options.invalid);
    this.expert = createExpert(view.env, options.expert);
    this.rng = new Rng(deriveSeed(options.seed ?? 0, view.group, view.trial));
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const { text, randomMove } = this.respond();
    return { ...scriptedResult(request, text), ...(randomMove ? { randomMove } : {}) };
  }

  private respond(): { text: string; randomMove?: boolean } {
    // Draw both numbers every call so the stream stays aligned whatever the probabilities are.
    const invalidDraw = this.rng.next();
    const noiseDraw = this.rng.next();
    if (invalidDraw < this.invalid) return { text: 'I am not sure what to do here.' };
    if (this.view.phase === 'reflect') return { text: this.expert.reflect(this.view.steps.slice()) };
    if (noiseDraw < this.noise) {
      const actions = this.view.env.admissibleActions();
      if (actions.length > 0) return { text: `I try something at random.\n<action>${this.rng.pick(actions)}</action>`, randomMove: true };
    }
    return { text: this.expert.act() };
  }
}

/** A per-trial policy factory for the runner: every trial gets the expert of its own environment. */
export function scriptedPolicy(options: ScriptedPolicyOptions = {}): TrialPolicyFactory {
  probability('noise', options.noise);
  probability('invalid', options.invalid);
  return (view) => new ScriptedPolicy(view, options);
}

/**
 * Wraps a policy so that its reflections are written by the trial environment's scripted expert (from the failed
 * episode's steps) while every play turn still goes to the policy. Evaluating a model this way separates two skills
 * LaMer needs: writing reflections that state the right facts, and acting on what the memory says. The expert's text is
 * kept whole (no token limit applies to it) and carries char-code ids, so these rows are not for training. An
 * environment without an expert fails with E_ENV.
 */
export function withExpertReflections(source: PolicySource, options: ExpertOptions = {}): TrialPolicyFactory {
  return (view) => {
    const inner = policyForTrial(source, view);
    const expert = createExpert(view.env, options);
    return {
      generate: (request) =>
        view.phase === 'reflect'
          ? Promise.resolve(scriptedResult({ ...request, maxNewTokens: Number.MAX_SAFE_INTEGER }, expert.reflect(view.steps.slice())))
          : inner.generate(request),
    };
  };
}

export interface BatchedEngineOptions {
  /** Wall time of one decode step with `batch` sequences in it (ms). */
  stepMs: (batch: number) => number;
  /** Decode steps a request occupies (e.g. its response tokens / tokens per step). Default 1. */
  stepsPerRequest?: (result: GenerateResult) => number;
  /** Most sequences decoded together (KV-cache slots); the rest wait for a free slot. Default unbounded. */
  maxBatch?: number;
  /**
   * Static batching, for comparison: a new batch starts only when every sequence of the previous one has finished,
   * so short responses wait for the longest (what synchronous rollouts do). Default false: continuous batching.
   */
  staticBatching?: boolean;
}

export interface BatchedEngineStats {
  steps: number;
  requests: number;
  /** Most sequences decoded in one step. */
  maxBatch: number;
  /** Mean sequences per step. */
  meanBatch: number;
}

interface Sequence {
  remaining: number;
  result: GenerateResult;
  resolve: (r: GenerateResult) => void;
}

/**
 * Wraps a policy in the timing of a continuous-batching engine: requests wait for the next decode step, every step
 * advances all active sequences together and costs `stepMs(batch)`, and a finished sequence frees its slot for a
 * waiting one at the next step. Responses come from the wrapped policy, at once; only the time is simulated.
 */
export class SimulatedBatchEngine {
  private readonly waiting: Sequence[] = [];
  private readonly active: Sequence[] = [];
  /** A step is scheduled or running. */
  private busy = false;
  private steps = 0;
  private requests = 0;
  private batchSum = 0;
  private batchMax = 0;
  private readonly maxBatch: number;
  private readonly stepsPerRequest: (result: GenerateResult) => number;

  constructor(
    private readonly inner: PolicySource,
    private readonly options: BatchedEngineOptions,
  ) {
    this.maxBatch = options.maxBatch ?? Infinity;
    this.stepsPerRequest = options.stepsPerRequest ?? (() => 1);
    if (!(this.maxBatch >= 1)) throw new LamerError('E_ARG', 'SimulatedBatchEngine option maxBatch: expected >= 1');
  }

  /** A policy source for the runner with the same shape as the wrapped one (shared client or per-trial factory). */
  get policy(): PolicySource {
    if (typeof this.inner === 'function') {
      const factory = this.inner;
      return (view: TrialView) => this.client(policyForTrial(factory, view));
    }
    return this.client(this.inner);
  }

  get stats(): BatchedEngineStats {
    return {
      steps: this.steps,
      requests: this.requests,
      maxBatch: this.batchMax,
      meanBatch: this.steps === 0 ? 0 : this.batchSum / this.steps,
    };
  }

  private client(inner: PolicyClient): PolicyClient {
    return {
      generate: async (request) => {
        const result = await inner.generate(request);
        this.requests++;
        return new Promise<GenerateResult>((resolve) => {
          this.waiting.push({ remaining: Math.max(1, Math.ceil(this.stepsPerRequest(result))), result, resolve });
          this.schedule();
        });
      },
    };
  }

  private schedule(): void {
    if (this.busy) return;
    this.busy = true;
    // Start the step after pending microtasks, so requests issued in the same tick share it.
    setImmediate(() => this.startStep());
  }

  private startStep(): void {
    const admit = !this.options.staticBatching || this.active.length === 0;
    while (admit && this.active.length < this.maxBatch && this.waiting.length > 0) this.active.push(this.waiting.shift()!);
    const batch = this.active.length;
    if (batch === 0) {
      this.busy = false;
      return;
    }
    setTimeout(() => this.step(batch), this.options.stepMs(batch));
  }

  private step(batch: number): void {
    this.steps++;
    this.batchSum += batch;
    this.batchMax = Math.max(this.batchMax, batch);
    const stillActive: Sequence[] = [];
    for (const seq of this.active) {
      if (--seq.remaining > 0) stillActive.push(seq);
      else seq.resolve(seq.result);
    }
    this.active.length = 0;
    this.active.push(...stillActive);
    if (this.active.length > 0 || this.waiting.length > 0) {
      // An engine runs on its own thread: it goes on decoding while JS handles the finished responses, whose follow-up
      // requests join at the next step boundary.
      this.startStep();
    } else {
      // Idle: the next request starts a step after the microtasks of this tick, so requests made together share it.
      this.busy = false;
    }
  }
}

/** `new SimulatedBatchEngine(inner, options)`, for symmetry with scriptedPolicy. */
export function simulateBatchedEngine(inner: PolicySource, options: BatchedEngineOptions): SimulatedBatchEngine {
  return new SimulatedBatchEngine(inner, options);
}
