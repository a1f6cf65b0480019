// Demonstrations for the supervised warm start (`lamer sft`): trials played by scripted players, with scripted
// reflections, so a small model trained from scratch learns the answer formats, the reflection format and the use of
// memory before RL. MineSweeper is played by the logic player WITH memory (SPEC §10): it sees only what a model sees
// (the board and its own earlier reflections), so every demonstrated move is one the model could learn to make; its
// failed episodes produce the reflections "where the mine was, which cells were safe" that the next episode uses.
// ALFWorld's generated games are played the same way by the search player (it sees the task, the observations of the
// episode and its own reflections, and searches for what it has not seen), and WebShop by the browser (it opens the
// first affordable product it has not bought before, and its reflections name what it bought), each with some random
// moves. Sokoban (and ALFWorld's data-folder games) are played by their expert with some random moves; only the
// scripted moves are kept.
import { createEnv } from '../envs/registry.js';
import { MineSweeperEnv } from '../envs/minesweeper/env.js';
import { MineSweeperLogicPlayer, type LogicGuess } from '../envs/minesweeper/expert.js';
import { AlfWorldEnv } from '../envs/alfworld/env.js';
import { AlfWorldSearchPlayer } from '../envs/alfworld/searcher.js';
import { WebShopEnv } from '../envs/webshop/env.js';
import { WebShopBrowser } from '../envs/webshop/browser.js';
import { Rng } from '../util/rng.js';
import { extractAction } from '../envs/common/tags.js';
import { TASK_BLOCK_SIZE, blockTaskSeed } from '../envs/common/seeds.js';
import { distinctTaskSeeds } from '../envs/common/task-lists.js';
import type { Environment, PromptStyle, TrajectoryStep } from '../envs/types.js';
import { runRollout } from '../rollout/runner.js';
import { scriptedPolicy, scriptedResult } from '../rollout/scripted.js';
import type { GenerateRequest, GenerateResult, MoveContrast, PolicyClient, SamplingOptions, TrialPolicyFactory, TrialView } from '../rollout/policy.js';
import type { TrialConfig } from '../rollout/trial.js';
import { deriveSeed } from '../util/seed.js';
import { runSeeds, type TrainerConfig } from './config.js';
import { LamerError } from '../errors.js';

export interface Demonstrations {
  prompts: string[];
  responses: string[];
  /** Per row: it is a reflection (phase reflect), not an environment action. */
  reflect: boolean[];
  /** Per row: the refused and admissible responses at its state (sft.unlikelihood > 0), else null. */
  contrast: (MoveContrast | null)[];
  /** Trials played and how many were won in any episode (a check that the demonstrations are sensible). */
  trials: number;
  won: number;
}

/** The logic+memory MineSweeper player of one trial, as a policy. */
class MineSweeperDemoPolicy implements PolicyClient {
  readonly #player: MineSweeperLogicPlayer;
  readonly #env: MineSweeperEnv;

  constructor(
    private readonly view: TrialView,
    seed: number,
    style: PromptStyle,
    guess: LogicGuess,
  ) {
    this.#env = view.env as MineSweeperEnv;
    this.#player = new MineSweeperLogicPlayer(this.#env, { seed: deriveSeed(seed, view.group, view.trial), memory: true, style, guess });
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    if (this.view.phase === 'reflect') {
      // Remember what the failed episode showed (what the reflection states), then write the reflection.
      const steps = this.view.steps;
      this.#player.endEpisode(steps);
      return scriptedResult(request, this.#player.reflect(steps.slice()));
    }
    return scriptedResult(request, this.#player.act());
  }
}

/** A scripted player that remembers its own reflections within a trial (ALFWorld's search player, WebShop's browser). */
export interface MemoryPlayer {
  act(steps: readonly TrajectoryStep[]): string;
  endEpisode(steps: readonly TrajectoryStep[]): void;
  reflect(steps: readonly TrajectoryStep[]): string;
  /** Whether the move about to be chosen is one where copying the request would be refused (sft.checkWeight). */
  checkTurn?(): boolean;
  /** Moves a model plausibly makes at this state that the environment refuses (sft.unlikelihood). */
  refused?(steps: readonly TrajectoryStep[]): string[];
}

/**
 * The refused and admissible responses at a state, each the player's own response with its action replaced, so that
 * they differ from it (and from each other) only inside the action.
 */
export function moveContrast(response: string, refused: readonly string[], admissible: readonly string[]): MoveContrast | null {
  const open = response.indexOf('<action>');
  const close = response.indexOf('</action>', open);
  if (open < 0 || close < 0 || refused.length === 0) return null;
  const head = response.slice(0, open + '<action>'.length);
  const tail = response.slice(close);
  const as = (action: string) => `${head}${action}${tail}`;
  return { refused: refused.map(as), admissible: admissible.map(as) };
}

/**
 * A memory player of one trial, as a policy: with probability `noise` a turn plays a random move instead (flagged, so
 * the warm start does not train on it), so that episodes fail and are reflected on. `randomMove` is given the second
 * draw of the turn (whether the move is one the environment refuses: sft.refusedMoves).
 */
class MemoryPlayerDemoPolicy implements PolicyClient {
  readonly #rng: Rng;

  constructor(
    private readonly view: TrialView,
    private readonly player: MemoryPlayer,
    private readonly noise: number,
    seed: number,
    private readonly randomMove: (rng: Rng, draw: number) => string,
    private readonly contrast: boolean = false,
  ) {
    this.#rng = new Rng(deriveSeed(seed, view.group, view.trial, 0x5ea7c4));
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const steps = this.view.steps;
    if (this.view.phase === 'reflect') {
      this.player.endEpisode(steps);
      return scriptedResult(request, this.player.reflect(steps.slice()));
    }
    // Both draws every turn, so the stream stays aligned whatever the probabilities are.
    const [noiseDraw, secondDraw] = [this.#rng.next(), this.#rng.next()];
    if (noiseDraw < this.noise) return { ...scriptedResult(request, `<action>${this.randomMove(this.#rng, secondDraw)}</action>`), randomMove: true };
    const checkTurn = this.player.checkTurn?.() === true;
    // What the environment refuses here, read before the move changes the state.
    const refused = this.contrast && this.player.refused ? this.player.refused(steps) : [];
    const admissible = refused.length > 0 ? this.view.env.admissibleActions() : [];
    const result = scriptedResult(request, this.player.act(steps));
    const contrast = refused.length > 0 ? moveContrast(result.text, refused, admissible) : null;
    return { ...result, ...(checkTurn ? { checkTurn } : {}), ...(contrast ? { contrast } : {}) };
  }
}

/** ALFWorld's random move: an admissible command, or with probability `refused` one the game refuses. */
function alfWorldRandomMove(view: TrialView, refused: number): (rng: Rng, draw: number) => string {
  return (rng, draw) => {
    const env = view.env as AlfWorldEnv;
    const wrong = draw < refused ? refusedHere(env, view.steps) : [];
    return rng.pick(wrong.length > 0 ? wrong : env.admissibleActions());
  };
}

/** The commands of refusedCommands below that the game refuses at this state (repeats kept: the random move draws). */
function refusedHere(env: AlfWorldEnv, steps: readonly { action: string }[]): string[] {
  const admissible = env.admissibleActions();
  return refusedCommands(env, steps).filter((c) => !admissible.includes(c));
}

/** Commands a model plausibly gets wrong at this point: where it stands again, the task's object from here, a repeat. */
function refusedCommands(env: AlfWorldEnv, steps: readonly { action: string }[]): string[] {
  const goes = steps.map((s) => s.action.match(/^go to (.+)$/)?.[1]).filter((x): x is string => x !== undefined);
  const here = goes.at(-1);
  const object = env.task()?.objectType;
  const out: string[] = [];
  if (here !== undefined) {
    out.push(`go to ${here}`);
    if (object !== undefined) out.push(`take ${object} 1 from ${here}`);
  }
  const last = steps.at(-1)?.action;
  if (last !== undefined) out.push(last);
  return out;
}

/**
 * The memory player of one trial in `env` (ALFWorld's search player on a generated game, WebShop's browser), in the
 * config's prompt style; null where there is none (another environment, an ALFWorld data-folder game).
 */
export function memoryPlayer(config: TrainerConfig, env: Environment): MemoryPlayer | null {
  const style = config.model.promptStyle;
  if (env instanceof AlfWorldEnv && env.task() !== null) {
    const searcher = new AlfWorldSearchPlayer(env, { style });
    return {
      act: (s) => searcher.act(s),
      endEpisode: (s) => searcher.endEpisode(s),
      reflect: (s) => searcher.reflect(s),
      refused: (s) => [...new Set(refusedHere(env, s))],
    };
  }
  if (env instanceof WebShopEnv) {
    const browser = new WebShopBrowser(env, { style });
    return {
      act: () => browser.act(),
      endEpisode: (s) => browser.endEpisode(s),
      reflect: (s) => browser.reflect(s),
      checkTurn: () => browser.lacksRequestedValue(),
      refused: (s) => browser.refusedClicks(s),
    };
  }
  return null;
}

function demoPolicy(config: TrainerConfig): TrialPolicyFactory {
  const style = config.model.promptStyle;
  const unlikely = config.sft.unlikelihood > 0;
  if (config.env.name === 'minesweeper') {
    return (view) => new MineSweeperDemoPolicy(view, config.seed, style, config.sft.guess);
  }
  if (config.env.name === 'alfworld') {
    const fallback = scriptedPolicy({ noise: config.sft.noise, seed: config.seed, expert: { style } });
    return (view) => {
      const player = memoryPlayer(config, view.env);
      if (player === null) return fallback(view);
      return new MemoryPlayerDemoPolicy(view, player, config.sft.noise, config.seed, alfWorldRandomMove(view, config.sft.refusedMoves), unlikely);
    };
  }
  if (config.env.name === 'webshop') {
    return (view) => {
      const player = memoryPlayer(config, view.env)!;
      const randomMove = (rng: Rng, draw: number) => {
        const refused = draw < config.sft.refusedMoves ? player.refused!(view.steps) : [];
        return rng.pick(refused.length > 0 ? refused : view.env.admissibleActions());
      };
      return new MemoryPlayerDemoPolicy(view, player, config.sft.noise, config.seed, randomMove, unlikely);
    };
  }
  return scriptedPolicy({ noise: config.sft.noise, seed: config.seed, expert: { style } });
}

/**
 * The tasks the warm start plays: the first distinct tasks (by content, where the environment names it) of the run's
 * demonstration block, one per `trialsPerTask` trials. The block is the run's own (`sft.taskSeed`, else the seed), so
 * demonstrations and RL iterations draw different task seeds and two seeds different seeds; two seeds' tasks can
 * still hold the same content (a board drawn in both blocks), as often as the environment's training side is small
 * against the demonstrations (docs/results.md, "What a seed varies", gives the default job's share).
 */
export function demonstrationTasks(config: TrainerConfig): { tasks: number[]; trialsPerTask: number; env: () => Environment } {
  if (config.env.name === 'custom') {
    throw new LamerError('E_CONFIG', 'the supervised warm start needs a built-in environment (its scripted players); set sft.trials=0 for a custom one');
  }
  const trialsPerTask = Math.min(config.sft.trialsPerTask ?? config.rollout.groupSize, config.sft.trials);
  const taskCount = Math.max(1, Math.ceil(config.sft.trials / trialsPerTask));
  const envName = config.env.name;
  const env = (): Environment => createEnv(envName, { ...config.env.options, ...config.sft.envOptions } as never);
  const block = runSeeds(config).demonstrationTasks;
  const tasks = distinctTaskSeeds((i) => blockTaskSeed('demonstration', block, i), taskCount, env, { length: TASK_BLOCK_SIZE, what: 'demonstration' });
  return { tasks, trialsPerTask, env };
}

/** The warm start's trials (demonstrations, and the model's own: src/train/mistakes.ts): LaMer's, reflecting. */
export function demonstrationTrial(config: TrainerConfig, sampling: SamplingOptions): TrialConfig {
  return {
    episodes: config.trial.episodes,
    reflect: true,
    memoryMode: config.trial.memory,
    style: config.model.promptStyle,
    window: config.trial.historyWindow,
    markRefused: config.trial.markRefused,
    refusedLast: config.trial.refusedLast,
    sampling,
  };
}

/** Plays `config.sft.trials` LaMer trials on training tasks with the scripted players and collects the rows. */
export async function collectDemonstrations(config: TrainerConfig, signal?: AbortSignal): Promise<Demonstrations> {
  const { tasks, trialsPerTask, env } = demonstrationTasks(config);
  const batch = await runRollout({
    policy: demoPolicy(config),
    env,
    tasks,
    trialsPerTask,
    // The scripted players answer whole unless sft.maxResponseChars cuts them (a cut reflection loses its closing
    // tag, and the next episode's memory holds an empty note).
    trial: demonstrationTrial(config, { temperature: 1, topP: 1, topK: 0, maxNewTokens: config.sft.maxResponseChars ?? Number.MAX_SAFE_INTEGER }),
    seed: config.seed,
    signal,
  });
  const prompts: string[] = [];
  const responses: string[] = [];
  const reflect: boolean[] = [];
  const contrast: (MoveContrast | null)[] = [];
  const table = batch.table;
  const turnKey = (i: number, turn: number) => `${table.group[i]}:${table.trial[i]}:${table.episode[i]}:${turn}`;
  const refusedTurns = new Set<string>();
  for (let i = 0; i < table.length; i++) if (table.phase[i] === 0 && table.valid[i] === 0) refusedTurns.add(turnKey(i, table.turn[i]));
  for (let i = 0; i < batch.prompts.length; i++) {
    const response = batch.responses[i];
    if (batch.randomMove[i]) continue;
    if (table.phase[i] === 0 && extractAction(response) === null) continue;
    // Reflections and the episodes that read them are what a single-episode player never shows, and the scripted
    // players win most first episodes: those rows are repeated (`reflectionWeight`, `memoryWeight` times) so they are
    // not a small minority. A turn right after a refused move (the player recovering) is repeated `recoveryWeight`
    // times more, and a turn where copying the request would be refused (the player clicking only what a product
    // offers) `checkWeight` times more.
    let copies = table.phase[i] === 1 ? config.sft.reflectionWeight : table.episode[i] > 0 ? config.sft.memoryWeight : 1;
    if (table.phase[i] === 0 && table.turn[i] > 0 && refusedTurns.has(turnKey(i, table.turn[i] - 1))) copies *= config.sft.recoveryWeight;
    if (batch.checkTurn[i]) copies *= config.sft.checkWeight;
    for (let c = 0; c < copies; c++) {
      prompts.push(batch.prompts[i]);
      responses.push(response);
      reflect.push(table.phase[i] === 1);
      contrast.push(batch.contrast[i]);
    }
  }
  return { prompts, responses, reflect, contrast, trials: batch.trials.length, won: batch.trials.filter((t) => t.won.some(Boolean)).length };
}
