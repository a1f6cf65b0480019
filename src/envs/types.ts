// The environment interface shared by every environment (SPEC §8) and by the trial runner.

/**
 * What a play prompt says at its end after a refused last action (trial option refusedLast): nothing (false), the
 * action again (true: `| click[white] no | act:`), or only that the last action was refused ('flag': `| no | act:`),
 * which gives a small model that copies what it reads nothing to copy.
 */
export type RefusedLast = boolean | 'flag';

export interface Observation {
  /** What the model is shown. */
  text: string;
  /** The raw environment state the next action is taken in (no prompt, no history): GiGPO's step-level key. */
  anchor: string;
}

export interface StepResult {
  observation: Observation;
  reward: number;
  done: boolean;
  won: boolean;
  /** The response parsed into a valid action. Invalid responses are a no-op with the env's invalid reward. */
  valid: boolean;
  /**
   * The episode ended only because its turn (or move) limit ran out: no rule of the environment ended it, so the last
   * action did not cause the failure (a chance player that avoids failing actions must not avoid this one). Absent
   * means false.
   */
  truncated?: boolean;
  /**
   * The action as LaMer's memory records it, for `paper` prompts (Sokoban `['up', 'left']`, MineSweeper `(2, 3)` or
   * `no operation`); absent: the text inside <action>.
   */
  historyAction?: string;
  info: Record<string, unknown>;
}

/**
 * `full`: natural-language prompts for a pretrained LLM. `compact`: short regular text for tiny models. `paper`: LaMer's
 * own templates, read from a LaMer checkout (the environment's `lamerSource` option; src/envs/common/paper-prompts.ts).
 */
export type PromptStyle = 'full' | 'compact' | 'paper';

export const PROMPT_STYLES: readonly PromptStyle[] = Object.freeze(['full', 'compact', 'paper']);

export type MemoryMode = 'reflection_only' | 'history_only' | 'history_and_reflection';

/** In distribution (a task type training plays) or out of distribution. */
export type TaskTypeSplit = 'ID' | 'OOD';

/** One step of an episode's trajectory as shown in prompts. */
export interface TrajectoryStep {
  /** The action as parsed (or the raw text inside <action>, when it did not parse). */
  action: string;
  /** The observation text that followed it. */
  observation: string;
  /** The action as LaMer's memory records it (StepResult.historyAction), for `paper` prompts. */
  historyAction?: string;
  /**
   * The environment refused the action (StepResult.valid false), recorded only where the trial marks refused actions
   * in its prompts (trial option markRefused): the action list shows it marked, so that it is not read as a move made.
   */
  refused?: boolean;
}

/** An earlier, failed episode of the trial, as `paper` prompts build their memory blocks from it. */
export interface PastEpisode {
  /** 0-based episode index. */
  episode: number;
  steps: readonly TrajectoryStep[];
  /** The reflection written after it (empty when none was written or it was invalid). */
  reflection: string;
}

export interface PlayPromptInput {
  style: PromptStyle;
  /** The initial observation of the task (the same for every episode of a trial). */
  initial: Observation;
  /** Memory blocks H(n), already formatted by the agent (one per earlier episode); empty in episode 0. */
  memory: string[];
  /** 0-based episode index n; the prompt says "Currently you are on trial #n+1". */
  episode: number;
  /** Actions taken so far in this episode with the observations that followed. */
  steps: TrajectoryStep[];
  /** Steps shown in full; older observations are elided as `...`. Default 7. */
  window?: number;
  /**
   * When the last of `steps` was refused (its `refused` mark, trial option markRefused), say so at the end of the
   * prompt, right before the answer is asked for (trial option refusedLast): `true` names the action again, `'flag'`
   * says only that it was refused. `compact` and `full` styles.
   */
  refusedLast?: RefusedLast;
  /**
   * The earlier failed episodes `memory` was made from, oldest first (empty for independent attempts): `paper` prompts
   * format their own blocks from them, as LaMer's templates do.
   */
  past?: readonly PastEpisode[];
  /** Which parts of `past` the memory shows (default reflection_only). */
  memoryMode?: MemoryMode;
}

export interface ReflectPromptInput {
  style: PromptStyle;
  initial: Observation;
  /** The last failed episode's trajectory. */
  steps: TrajectoryStep[];
  /** 0-based index of the episode that failed. */
  episode: number;
}

export interface Reflection {
  /** Text between <remark> and </remark>, truncated to 2000 characters; empty when the tags are missing. */
  text: string;
  valid: boolean;
}

export interface Environment {
  readonly name: string;
  /** Max turns per episode. */
  readonly maxTurns: number;
  /** Start a new task from a seed; deterministic. */
  reset(seed: number): Observation;
  /** Back to exactly the initial state of the current task. */
  restart(): Observation;
  /** Parse a model response, apply it, and report what happened. Never throws on bad text. */
  step(response: string): StepResult;
  /** Actions that are valid now, as the text that goes inside <action>. */
  admissibleActions(): string[];
  /** Task type for per-type pass@k (ALFWorld task types, WebShop categories); undefined when the env has none. */
  taskType(): string | undefined;
  /**
   * Optional: the current task's content as text, equal for two seeds exactly when they give the same task (MineSweeper:
   * mine layout and first reveal). Evaluation uses it to draw distinct held-out tasks; tests use it to show that
   * evaluation content never occurs in training.
   */
  taskKey?(): string;
  playPrompt(input: PlayPromptInput): string;
  reflectPrompt(input: ReflectPromptInput): string;
  parseReflection(response: string): Reflection;
  /**
   * Optional: whether a reflection states the checkable facts of the failed episode `steps` correctly (MineSweeper:
   * it names the mine that was hit). undefined when the episode has no such fact. Called before restart().
   */
  checkReflection?(steps: readonly TrajectoryStep[], reflection: string): boolean | undefined;
  /**
   * Optional: what a run must record to be reproduced: the rules it plays (fidelity), the data files it read with
   * their SHA-256, the prompt templates it fills. Small and JSON-serialisable (one combined hash for many files);
   * answers right after construction. Runs write it into their config.json under `provenance`.
   */
  provenance?(): Record<string, unknown>;
  /**
   * Optional: whether a task type is in distribution (trained on) or out of distribution, for the per-type pass@k
   * table (ALFWorld: training plays types 1-4, evaluation all six).
   */
  taskTypeSplit?(type: string): TaskTypeSplit;
}

/** A scripted player used for demonstrations (supervised warm start) and tests. */
export interface Expert {
  /** A full response (reasoning and <action>...</action>) that moves the current state toward a win. */
  act(): string;
  /** A full reflection response (<remark>...</remark>) stating what went wrong in `steps` and the plan. */
  reflect(steps: TrajectoryStep[]): string;
}
