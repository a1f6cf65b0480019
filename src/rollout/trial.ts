// One LaMer trial (SPEC §2) as plain sequential code: up to N episodes on the same task, a reflection before each
// episode after a failed one, restart from the same initial state, stop on success. The same loop runs the baselines:
// `reflect: false` gives N independent attempts (own empty memory, no reflection), and the prompt variant gives
// ReAct or zero-shot prompting; Reflexion is this loop with a frozen policy.
//
// Every model call awaits one `generate`; the runner starts many trials at once, so an engine that batches the calls
// pending at any moment serves trials in different phases (playing, reflecting) in the same decode steps.

import { abortable } from '../util/abort.js';
import { deriveSeed } from '../util/seed.js';
import { agentPlayPrompt, agentReflectPrompt, isPromptVariant, type PromptVariant } from '../agent/prompts.js';
import { DEFAULT_MEMORY_MODE, TrialMemory, isMemoryMode, memoryUsesReflection, type MemoryMode } from '../agent/memory.js';
import { extractAction } from '../envs/common/tags.js';
import { PROMPT_STYLES, type Environment, type Observation, type PromptStyle, type RefusedLast, type StepResult, type TrajectoryStep } from '../envs/types.js';
import { LamerError } from '../errors.js';
import {
  policyForTrial,
  type FinishReason,
  type GenerateResult,
  type MoveContrast,
  type PolicyClient,
  type PolicySource,
  type SamplingOptions,
  type TrialView,
} from './policy.js';
import { REFLECTION_ANCHOR, type Row } from './rows.js';
import { timeBook } from '../util/timing.js';

export interface TrialConfig {
  /** N: episodes per trial (attempts, for baselines at evaluation). */
  episodes: number;
  /**
   * true: LaMer / Reflexion: memory carries over between episodes (with a reflection phase when the memory mode shows
   * reflections). false: baselines: every attempt starts with an empty memory and its prompt is that of a first attempt.
   */
  reflect: boolean;
  /** Default `reflection_only`. `history_only` carries trajectories and writes no reflections (nothing would read them). */
  memoryMode?: MemoryMode;
  /** `react` (default): reason then act. `zero-shot`: the action directly. */
  promptVariant?: PromptVariant;
  /** Default `full`. */
  style?: PromptStyle;
  /** Turns per episode; default the environment's own `maxTurns`. */
  maxTurns?: number;
  /** Trajectory window in prompts; default the framing's (7 steps). */
  window?: number;
  /**
   * Mark the actions the environment refused (StepResult.valid false) where prompts list the episode's actions (the
   * play prompt, memory blocks that show trajectories, the reflect prompt), so that a refused action does not read as
   * a move made. Default false. `full` and `compact` styles only (LaMer's templates have no such mark).
   */
  markRefused?: boolean;
  /**
   * With markRefused: when the episode's last action was refused, the play prompt names it again at its end, right
   * before the answer is asked for (`compact`: `| click[x] no | act:`), where a small model attends more than to the
   * action list far above. 'flag': only that it was refused (`compact`: `| no | act:`), nothing to copy. Default false.
   */
  refusedLast?: RefusedLast;
  sampling: SamplingOptions;
}

export type ResolvedTrialConfig = Required<Omit<TrialConfig, 'maxTurns' | 'window'>> & Pick<TrialConfig, 'maxTurns' | 'window'>;

/** What the policy answered, as a row keeps it. */
interface Sampled {
  response: string;
  promptIds: Int32Array;
  responseIds: Int32Array;
  /** Sampling log-probs of the response tokens. */
  logprobs: Float32Array;
  finishReason: FinishReason;
  /** A scripted player's random move (GenerateResult.randomMove). */
  randomMove: boolean;
  /** A scripted player's move where copying the request would be refused (GenerateResult.checkTurn). */
  checkTurn: boolean;
  /** A scripted player's refused and admissible moves at the turn (GenerateResult.contrast). */
  contrast: MoveContrast | null;
}

/** One row of SPEC §1 plus what the train step and the logs need. */
export interface TrialRow extends Row, Sampled {
  phase: 'play' | 'reflect';
  valid: boolean;
  won: boolean;
  prompt: string;
}

export interface TrialResult {
  group: number;
  trial: number;
  /** Task seed. */
  seed: number;
  taskType: string | undefined;
  /** won[k]: episode k was won (false for episodes not played). Length N. */
  won: boolean[];
  /** Index of the won episode, or -1. */
  wonEpisode: number;
  episodesPlayed: number;
  /** Undiscounted reward of each played episode. */
  episodeRewards: number[];
  /**
   * The environment's own score of each played episode, where it gives one (`info.score` of the episode's last step,
   * a number: WebShop's purchase score in [0, 1], 0 for an episode that bought nothing), else null.
   */
  episodeScores: Array<number | null>;
  /** Reflections written, in order (empty text for an invalid one). */
  reflections: string[];
  /** Per reflection: whether it states the failed episode's facts correctly (Environment.checkReflection). */
  reflectionsCorrect: Array<boolean | undefined>;
  /** Rows in chronological order. */
  rows: TrialRow[];
}

export interface TrialInput {
  env: Environment;
  policy: PolicySource;
  /** Task seed: every trial of a group uses the same one. */
  seed: number;
  group: number;
  trial: number;
  config: TrialConfig;
  /** Base of the per-request sampling seeds (each request gets its own, derived from this and its index). */
  samplingSeed?: number;
  signal?: AbortSignal;
  /** Called with each row as soon as it exists (progress). */
  onRow?: (row: TrialRow) => void;
}

function argError(message: string): LamerError {
  return new LamerError('E_ARG', message);
}

function positiveInt(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw argError(`trial option ${name}: expected a positive integer, found ${JSON.stringify(value)}`);
  }
  return value;
}

function checkSampling(s: SamplingOptions): SamplingOptions {
  if (s === null || typeof s !== 'object') throw argError('trial option sampling: expected an object');
  const finite = (name: keyof SamplingOptions, min: number, max: number) => {
    const v = s[name];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
      throw argError(`trial option sampling.${name}: expected a number in [${min}, ${max}], found ${JSON.stringify(v)}`);
    }
  };
  finite('temperature', 0, 100);
  finite('topP', 0, 1);
  finite('topK', -1, Number.MAX_SAFE_INTEGER);
  positiveInt('sampling.maxNewTokens', s.maxNewTokens);
  if (s.stop !== undefined && (!Array.isArray(s.stop) || s.stop.some((x) => typeof x !== 'string'))) {
    throw argError('trial option sampling.stop: expected an array of strings');
  }
  return s;
}

/** Checks a trial config at the door and fills the defaults. */
export function resolveTrialConfig(config: TrialConfig): ResolvedTrialConfig {
  if (config === null || typeof config !== 'object') throw argError('trial config: expected an object');
  const episodes = positiveInt('episodes', config.episodes);
  if (typeof config.reflect !== 'boolean') {
    throw argError(`trial option reflect: expected true or false, found ${JSON.stringify(config.reflect)}`);
  }
  const memoryMode = config.memoryMode ?? DEFAULT_MEMORY_MODE;
  if (!isMemoryMode(memoryMode)) {
    throw argError(`trial option memoryMode: expected reflection_only, history_only or history_and_reflection, found ${JSON.stringify(memoryMode)}`);
  }
  const promptVariant = config.promptVariant ?? 'react';
  if (!isPromptVariant(promptVariant)) {
    throw argError(`trial option promptVariant: expected react or zero-shot, found ${JSON.stringify(promptVariant)}`);
  }
  const style = config.style ?? 'full';
  if (!PROMPT_STYLES.includes(style)) {
    throw argError(`trial option style: expected ${PROMPT_STYLES.join(', ')}, found ${JSON.stringify(style)}`);
  }
  const markRefused = config.markRefused ?? false;
  if (typeof markRefused !== 'boolean') {
    throw argError(`trial option markRefused: expected true or false, found ${JSON.stringify(markRefused)}`);
  }
  if (markRefused && style === 'paper') {
    throw argError(
      "trial option markRefused: LaMer's templates (style 'paper') have no mark for a refused action; use style 'full' or 'compact', or leave markRefused off",
    );
  }
  const refusedLast = config.refusedLast ?? false;
  if (typeof refusedLast !== 'boolean' && refusedLast !== 'flag') {
    throw argError(`trial option refusedLast: expected true, false or 'flag', found ${JSON.stringify(refusedLast)}`);
  }
  if (refusedLast && !markRefused) {
    throw argError(
      'trial option refusedLast: it names the refused last action again, and actions are known as refused only with markRefused; set markRefused true too, or leave refusedLast off',
    );
  }
  if (config.maxTurns !== undefined) positiveInt('maxTurns', config.maxTurns);
  if (config.window !== undefined) positiveInt('window', config.window);
  return {
    episodes,
    reflect: config.reflect,
    memoryMode,
    promptVariant,
    style,
    markRefused,
    refusedLast,
    maxTurns: config.maxTurns,
    window: config.window,
    sampling: checkSampling(config.sampling),
  };
}

function checkResult(result: GenerateResult, where: string): GenerateResult {
  if (
    result === null ||
    typeof result !== 'object' ||
    typeof result.text !== 'string' ||
    !(result.promptIds instanceof Int32Array) ||
    !(result.responseIds instanceof Int32Array) ||
    !(result.logprobs instanceof Float32Array) ||
    result.logprobs.length !== result.responseIds.length ||
    (result.finishReason !== 'stop' && result.finishReason !== 'length')
  ) {
    throw argError(
      `${where}: the policy returned a malformed result; expected { text, promptIds: Int32Array, responseIds: ` +
        `Int32Array, logprobs: Float32Array (one per response token), finishReason: 'stop' | 'length' }`,
    );
  }
  return result;
}

/** The action as shown in later prompts: the text inside <action>, or a marker when the response had none. */
export const NO_ACTION = '(no action)';

/** Runs one trial to the end (N episodes or the first win) and returns its rows in chronological order. */
export async function runTrial(input: TrialInput): Promise<TrialResult> {
  const { env, group, trial, seed, signal } = input;
  const config = resolveTrialConfig(input.config);
  const maxTurns = config.maxTurns ?? env.maxTurns;
  const carryMemory = config.reflect;
  const writeReflections = carryMemory && memoryUsesReflection(config.memoryMode);

  signal?.throwIfAborted();
  const initial: Observation = timeBook.time('environment', () => env.reset(seed));
  const taskType = env.taskType();

  // The live view a per-trial policy (scripted player) reads; a model-backed policy ignores it.
  const view: { -readonly [K in keyof TrialView]: TrialView[K] } = {
    env,
    group,
    trial,
    seed,
    phase: 'play',
    episode: 0,
    steps: [],
    results: [],
  };
  const policy: PolicyClient = policyForTrial(input.policy, view);
  const memory = new TrialMemory({ mode: config.memoryMode, style: config.style, window: config.window });

  const rows: TrialRow[] = [];
  const won = new Array<boolean>(config.episodes).fill(false);
  const episodeRewards: number[] = [];
  const episodeScores: Array<number | null> = [];
  const reflections: string[] = [];
  const reflectionsCorrect: Array<boolean | undefined> = [];
  let calls = 0;

  const generate = async (prompt: string, where: string): Promise<GenerateResult> => {
    signal?.throwIfAborted();
    const request = {
      prompt,
      ...config.sampling,
      seed: input.samplingSeed === undefined ? undefined : deriveSeed(input.samplingSeed, calls),
      signal,
    };
    calls++;
    const result = await abortable(policy.generate(request), signal);
    signal?.throwIfAborted();
    return checkResult(result, where);
  };
  /** Records a row: where it stands and what it scored, plus the prompt and the policy's sampled answer. */
  const emit = (row: Omit<TrialRow, 'group' | 'trial' | 'prompt' | keyof Sampled>, prompt: string, out: GenerateResult) => {
    const full: TrialRow = {
      group,
      trial,
      ...row,
      prompt,
      response: out.text,
      promptIds: out.promptIds,
      responseIds: out.responseIds,
      logprobs: out.logprobs,
      finishReason: out.finishReason,
      randomMove: out.randomMove === true,
      checkTurn: out.checkTurn === true,
      contrast: out.contrast ?? null,
    };
    rows.push(full);
    input.onRow?.(full);
  };

  let wonEpisode = -1;
  let lastSteps: TrajectoryStep[] = [];
  let lastResults: StepResult[] = [];
  for (let n = 0; n < config.episodes; n++) {
    let current = initial;
    if (n > 0) {
      if (carryMemory) {
        memory.addFailedEpisode(n - 1, lastSteps);
        if (writeReflections) {
          view.phase = 'reflect';
          view.episode = n - 1;
          view.steps = lastSteps;
          view.results = lastResults;
          const prompt = timeBook.time('reflectionPrompts', () =>
            agentReflectPrompt(env, {
              style: config.style,
              initial,
              steps: lastSteps,
              episode: n - 1,
            }),
          );
          const out = await generate(prompt, `trial ${trial} (group ${group}) reflection before episode ${n}`);
          const reflection = timeBook.time('environment', () => env.parseReflection(out.text));
          memory.setReflection(reflection.text);
          reflections.push(reflection.text);
          reflectionsCorrect.push(timeBook.time('environment', () => env.checkReflection?.(lastSteps, reflection.text)));
          // The reflect row carries the index of the episode it prepares (SPEC §1: it sits before that episode).
          emit({ episode: n, turn: 0, phase: 'reflect', reward: 0, valid: reflection.valid, won: false, anchor: REFLECTION_ANCHOR }, prompt, out);
        }
      }
      current = timeBook.time('environment', () => env.restart());
    }

    // Independent attempts see the prompt of a first attempt: nothing about earlier attempts may leak into them.
    const memoryBlocks = carryMemory ? memory.blocks() : [];
    const past = carryMemory ? memory.past() : [];
    const promptEpisode = carryMemory ? n : 0;
    const steps: TrajectoryStep[] = [];
    const results: StepResult[] = [];
    view.phase = 'play';
    view.episode = n;
    view.steps = steps;
    view.results = results;
    let episodeReward = 0;
    for (let turn = 0; turn < maxTurns; turn++) {
      const prompt = timeBook.time('playPrompts', () =>
        agentPlayPrompt(env, {
          style: config.style,
          variant: config.promptVariant,
          initial,
          memory: memoryBlocks,
          past,
          memoryMode: config.memoryMode,
          episode: promptEpisode,
          steps,
          window: config.window,
          refusedLast: config.refusedLast,
        }),
      );
      const out = await generate(prompt, `trial ${trial} (group ${group}) episode ${n} turn ${turn}`);
      const anchor = current.anchor;
      const result = timeBook.time('environment', () => env.step(out.text));
      emit({ episode: n, turn, phase: 'play', reward: result.reward, valid: result.valid, won: result.won, anchor }, prompt, out);
      episodeReward += result.reward;
      steps.push({
        action: extractAction(out.text) ?? NO_ACTION,
        observation: result.observation.text,
        ...(result.historyAction === undefined ? {} : { historyAction: result.historyAction }),
        ...(config.markRefused && !result.valid ? { refused: true } : {}),
      });
      results.push(result);
      current = result.observation;
      if (result.won) won[n] = true;
      if (result.done || result.won) break;
    }
    episodeRewards.push(episodeReward);
    const score = results.at(-1)?.info?.score;
    episodeScores.push(typeof score === 'number' && Number.isFinite(score) ? score : null);
    lastSteps = steps;
    lastResults = results;
    if (won[n]) {
      wonEpisode = n;
      break;
    }
  }

  return {
    group,
    trial,
    seed,
    taskType,
    won,
    wonEpisode,
    episodesPlayed: episodeRewards.length,
    episodeRewards,
    episodeScores,
    reflections,
    reflectionsCorrect,
    rows,
  };
}
