// The ALFWorld environment (docs/spec.md §8): every task is a `.tw-pddl` game played by the engine of engine/game.ts,
// whether it comes from the user's ALFWorld download (`source: 'tw-pddl'`) or from lamer's household generator
// (`source: 'generated'`, the default), which writes its tasks as games with the project's domain and grammar.
//
// Splits. Training seeds play the training task types (default 1-4), evaluation seeds the evaluation task types
// (default all six), so the pass@k table reports each type as in-distribution (trained on) or out-of-distribution.
// A game is its problem's content: generated tasks are held out by content (a seed draws only problems of its own
// content split), and a training game whose problem is also an evaluation or model-selection game is left out.
// Data-folder games are ordered by sorted path and then by a fixed shuffle (so the first tasks of a split mix the
// task types); seed i of a split plays game i of that order, cycling.
//
// A turn: LaMer's projection reads the command (projectAction); the game answers its feedback, or "Nothing happens.".
// `valid` is LaMer's (both action tags present) by default, or the project's stricter variant (`valid: 'admissible'`:
// the command was admissible). Reward 10 when the goal formula holds, which ends the episode.

import { LamerError } from '../../errors.js';
import { contentSplit, contentSplitOfSeed, EVAL_SEEDS, SELECT_SEEDS, TRAIN_SEEDS } from '../common/seeds.js';
import { extractRemark } from '../common/tags.js';
import { checkSeed, intOption, rejectUnknownOptions } from '../common/options.js';
import type { Environment, Observation, PlayPromptInput, ReflectPromptInput, Reflection, StepResult, TrajectoryStep } from '../types.js';
import { sha256 } from '../../util/hash.js';
import { Rng } from '../../util/rng.js';
import { collectGames, loadGameFile, type GameEntry } from './games/data.js';
import { GameLogic, NOTHING_HAPPENS, TwPddlGame } from './engine/game.js';
import { householdGame, householdProblem, withWalkthrough } from './games/generate.js';
import { GENERATED_GRAMMAR_VERSION } from './engine/logic-text.js';
import { projectAction } from './parse.js';
import { checkSearchReflection } from './searcher.js';
import {
  ALFWORLD_PAPER_TEMPLATES,
  alfWorldPaperPlayPrompt,
  alfWorldPaperReflectPrompt,
  alfWorldPlayPrompt,
  alfWorldReflectPrompt,
  withAdmissible,
} from './prompts.js';
import { lamerSourceOption, loadLamerTemplates, noPaperTemplates, type LamerTemplates } from '../common/paper-prompts.js';
import { IN_DISTRIBUTION_TYPES, TASK_TYPES, readTaskTypes, type TaskType } from './games/tasks.js';
import { HOUSEHOLD_SIZES, generateHousehold, type HouseholdSize } from './games/world.js';
import type { Task } from './games/tasks.js';

export { NOTHING_HAPPENS };

export interface AlfWorldOptions {
  /** `generated` (default): lamer's households as games. `tw-pddl`: the games of an ALFWorld download. */
  source?: 'generated' | 'tw-pddl';
  /** tw-pddl: the folder holding the split folders (an ALFWorld download's json_2.1.1). */
  dataDir?: string;
  /** tw-pddl: split folders of the training games (default ['train']). */
  train?: string[];
  /** tw-pddl: split folders of the evaluation games (default ['valid_unseen']). */
  eval?: string[];
  /** tw-pddl: split folders of the model-selection games (eval.split select); default none. */
  select?: string[];
  /** Task types of training (and model-selection) seeds: names or ALFWorld's numbers 1-6. Default 1-4. */
  taskTypes?: Array<TaskType | number>;
  /** Task types of evaluation seeds. Default all six. */
  evalTaskTypes?: Array<TaskType | number>;
  /** Max turns per episode: 10 in training (docs/spec.md §6), 30 at evaluation. */
  maxTurns?: number;
  /** `tags` (default, LaMer's): both action tags present. `admissible`: the command was also admissible. */
  valid?: 'tags' | 'admissible';
  /** A LaMer checkout (or its alfworld prompt.py) whose templates promptStyle 'paper' fills; null: no paper prompts. */
  lamerSource?: string | null;
  /** Generated games: `standard` (default) households of ALFWorld's size, or the CPU-scale `small` ones. */
  household?: HouseholdSize;
}

const OPTION_KEYS = ['source', 'dataDir', 'train', 'eval', 'select', 'taskTypes', 'evalTaskTypes', 'maxTurns', 'valid', 'lamerSource', 'household'] as const;

/** One task: its game, and what the splits and reports need to know of it. */
interface TaskInfo {
  logic: GameLogic;
  taskType: TaskType;
  /** SHA-256 of the problem text. */
  key: string;
  /** Where it came from (a data-folder path, or `generated seed N`). */
  origin: string;
  /** A generated game's task (object, destination and lamp types); null for a data-folder game. */
  task: Task | null;
}

/** A few hundred games stay parsed and grounded; a trial's K attempts and evaluation's probes reuse them. */
const LOGIC_CACHE_SIZE = 256;
const logicCache = new Map<string, TaskInfo>();

function cached(key: string, make: () => TaskInfo): TaskInfo {
  let info = logicCache.get(key);
  if (info !== undefined) {
    logicCache.delete(key);
    logicCache.set(key, info);
    return info;
  }
  info = make();
  logicCache.set(key, info);
  if (logicCache.size > LOGIC_CACHE_SIZE) logicCache.delete(logicCache.keys().next().value!);
  return info;
}

function stringList(value: unknown, option: string, fallback: string[]): string[] {
  if (value === undefined) return fallback;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.length === 0)) {
    throw new LamerError('E_ENV', `alfworld option ${option}: expected a list of split folder names (e.g. ["train"]), found ${JSON.stringify(value)}`);
  }
  return value as string[];
}

/** The games of a data folder for a set of options, split and ordered (see the file comment). */
interface DataGames {
  train: GameEntry[];
  eval: GameEntry[];
  select: GameEntry[];
  /** Training (or model-selection) games left out because their problem is an evaluation (or selection) game. */
  heldOut: number;
  skipped: Record<string, number>;
}

const dataCache = new Map<string, DataGames>();

/** A fixed shuffle of a sorted list (the project's Rng, seed 0), so the first seeds of a split mix the task types. */
function shuffled<T>(items: readonly T[]): T[] {
  const out = items.slice();
  const rng = new Rng(0);
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function dataGames(dataDir: string, train: string[], evalDirs: string[], select: string[], trainTypes: TaskType[], evalTypes: TaskType[]): DataGames {
  const key = JSON.stringify([dataDir, train, evalDirs, select, trainTypes, evalTypes]);
  let games = dataCache.get(key);
  if (games !== undefined) return games;
  const skipped: Record<string, number> = {};
  const collect = (dirs: string[], types: TaskType[]) => {
    const c = collectGames(dataDir, dirs, types);
    for (const [why, n] of Object.entries(c.skipped)) skipped[why] = (skipped[why] ?? 0) + n;
    return c.games;
  };
  const evalGames = collect(evalDirs, evalTypes);
  const evalKeys = new Set(evalGames.map((g) => g.problemHash));
  const selectAll = select.length > 0 ? collect(select, trainTypes) : [];
  const selectGames = selectAll.filter((g) => !evalKeys.has(g.problemHash));
  const selectKeys = new Set(selectGames.map((g) => g.problemHash));
  const trainAll = collect(train, trainTypes);
  const trainGames = trainAll.filter((g) => !evalKeys.has(g.problemHash) && !selectKeys.has(g.problemHash));
  games = {
    train: shuffled(trainGames),
    eval: shuffled(evalGames),
    select: shuffled(selectGames),
    heldOut: trainAll.length - trainGames.length + selectAll.length - selectGames.length,
    skipped,
  };
  dataCache.set(key, games);
  return games;
}

export class AlfWorldEnv implements Environment {
  readonly name = 'alfworld';
  readonly maxTurns: number;
  readonly source: 'generated' | 'tw-pddl';
  readonly trainTypes: readonly TaskType[];
  readonly evalTypes: readonly TaskType[];
  readonly validMode: 'tags' | 'admissible';
  readonly household: HouseholdSize;
  private readonly data: DataGames | null = null;
  private readonly dataDir: string | null = null;
  private readonly splits: { train: string[]; eval: string[]; select: string[] } | null = null;
  /** LaMer's templates, read at construction when `lamerSource` is set (promptStyle 'paper'). */
  private readonly paperTemplates: LamerTemplates | null;
  private info: TaskInfo | null = null;
  private current: TwPddlGame | null = null;
  private initialText = '';
  private turn = 0;
  private finished = false;
  /** Commands applied in this episode (the expert replays the walkthrough while they are a prefix of it). */
  private applied: string[] = [];

  constructor(options: AlfWorldOptions = {}) {
    const opts = options as Record<string, unknown>;
    if (opts !== null && typeof opts === 'object' && 'split' in opts) {
      throw new LamerError(
        'E_ENV',
        "alfworld option split: replaced by taskTypes (training seeds, default 1-4) and evalTaskTypes (evaluation seeds, default all six); remove 'split'",
      );
    }
    rejectUnknownOptions('alfworld', opts, OPTION_KEYS);
    this.maxTurns = intOption('alfworld', opts, 'maxTurns', 10, 1, 1000);
    const source = options.source ?? 'generated';
    if (source !== 'generated' && source !== 'tw-pddl')
      throw new LamerError('E_ENV', `alfworld option source: expected 'generated' or 'tw-pddl', found ${JSON.stringify(source)}`);
    this.source = source;
    const valid = options.valid ?? 'tags';
    if (valid !== 'tags' && valid !== 'admissible')
      throw new LamerError('E_ENV', `alfworld option valid: expected 'tags' (LaMer's) or 'admissible', found ${JSON.stringify(valid)}`);
    this.validMode = valid;
    const household = options.household ?? 'standard';
    if (!HOUSEHOLD_SIZES.includes(household)) {
      throw new LamerError(
        'E_ENV',
        `alfworld option household: expected ${HOUSEHOLD_SIZES.map((h) => `'${h}'`).join(' or ')}, found ${JSON.stringify(household)}`,
      );
    }
    this.household = household;
    this.trainTypes = options.taskTypes === undefined ? IN_DISTRIBUTION_TYPES : readTaskTypes(options.taskTypes, 'taskTypes');
    this.evalTypes = options.evalTaskTypes === undefined ? TASK_TYPES : readTaskTypes(options.evalTaskTypes, 'evalTaskTypes');
    const lamerSource = lamerSourceOption('alfworld', opts);
    this.paperTemplates = lamerSource === null ? null : loadLamerTemplates(lamerSource, 'alfworld', ALFWORLD_PAPER_TEMPLATES);
    if (source === 'tw-pddl') {
      if (typeof options.dataDir !== 'string' || options.dataDir.length === 0) {
        throw new LamerError(
          'E_ENV',
          "alfworld option dataDir: source 'tw-pddl' reads games from a folder; set dataDir to an ALFWorld download's json_2.1.1 folder",
        );
      }
      this.dataDir = options.dataDir;
      this.splits = {
        train: stringList(options.train, 'train', ['train']),
        eval: stringList(options.eval, 'eval', ['valid_unseen']),
        select: stringList(options.select, 'select', []),
      };
      this.data = dataGames(options.dataDir, this.splits.train, this.splits.eval, this.splits.select, [...this.trainTypes], [...this.evalTypes]);
      if (this.data.train.length === 0 && this.data.eval.length === 0) {
        throw new LamerError(
          'E_ENV',
          `alfworld: no playable game under ${options.dataDir} in ${[...this.splits.train, ...this.splits.eval].join(', ')} (skipped: ${JSON.stringify(this.data.skipped)})`,
        );
      }
    } else {
      for (const key of ['dataDir', 'train', 'eval', 'select'] as const) {
        if (options[key] !== undefined) throw new LamerError('E_ENV', `alfworld option ${key}: only for source 'tw-pddl'`);
      }
    }
    if (source === 'tw-pddl' && options.household !== undefined) {
      throw new LamerError('E_ENV', "alfworld option household: only for source 'generated' (a data folder's games are the size they are)");
    }
  }

  /** What the environment plays: source, valid, grammar. */
  get settings(): { source: string; valid: string; grammar: string } {
    const grammar = this.data
      ? [...new Set([...this.data.train, ...this.data.eval].map((g) => g.grammar.split(' ')[0]))].join(', ')
      : GENERATED_GRAMMAR_VERSION;
    return { source: this.source, valid: this.validMode, grammar };
  }

  /**
   * What a run records in its config.json (provenance): the source and its settings, the grammar version(s), and for a
   * data folder the SHA-256 of each split's game list (over `path fileSHA256` lines in play order; `lamer env check`
   * prints each file's), what was skipped and what was held out by content; with paper prompts, the template file.
   */
  provenance(): Record<string, unknown> {
    const t = this.paperTemplates;
    const paper = t === null ? {} : { paperPrompts: { file: t.file, sha256: t.sha256 } };
    const base = { source: this.source, valid: this.validMode, taskTypes: this.trainTypes.join(','), evalTaskTypes: this.evalTypes.join(',') };
    if (this.data === null) return { ...base, household: this.household, grammar: GENERATED_GRAMMAR_VERSION, ...paper };
    const list = (games: GameEntry[]) => ({ count: games.length, sha256: sha256(games.map((g) => `${g.path} ${g.fileHash}\n`).join('')) });
    const grammars: Record<string, number> = {};
    for (const g of [...this.data.train, ...this.data.eval, ...this.data.select]) grammars[g.grammar] = (grammars[g.grammar] ?? 0) + 1;
    return {
      ...base,
      dataDir: this.dataDir,
      splits: { train: this.splits!.train.join(','), eval: this.splits!.eval.join(','), select: this.splits!.select.join(',') },
      grammar: grammars,
      skipped: this.data.skipped,
      heldOutByContent: this.data.heldOut,
      train: list(this.data.train),
      eval: list(this.data.eval),
      select: list(this.data.select),
      ...paper,
    };
  }

  /** The games a data folder gives each split, in play order (path and file SHA-256); null for generated games. */
  gameLists(): Record<'train' | 'eval' | 'select', Array<{ path: string; sha256: string; taskType: TaskType }>> | null {
    if (this.data === null) return null;
    const list = (games: GameEntry[]) => games.map((g) => ({ path: g.path, sha256: g.fileHash, taskType: g.taskType }));
    return { train: list(this.data.train), eval: list(this.data.eval), select: list(this.data.select) };
  }

  /** The current game (throws before reset()). */
  get game(): TwPddlGame {
    if (this.current === null) throw new LamerError('E_ENV', 'alfworld: call reset(seed) before using the environment');
    return this.current;
  }

  /** The game's text at the start of the episode (the room's receptacles and the task), without the admissible list. */
  get initialGameText(): string {
    this.requireInfo();
    return this.initialText;
  }

  /** Commands applied so far in this episode. */
  get history(): readonly string[] {
    return this.applied;
  }

  get turnsTaken(): number {
    return this.turn;
  }

  /** Where the current game came from (a path under dataDir, or `generated seed N`). */
  get origin(): string {
    return this.requireInfo().origin;
  }

  /** The walkthrough of the current game: the game file's, or for a generated game the planner's (computed once). */
  walkthrough(): readonly string[] {
    const info = this.requireInfo();
    if (info.logic.walkthrough !== null) return info.logic.walkthrough;
    const planned = withWalkthrough(info.logic).walkthrough!;
    (info.logic as { walkthrough: readonly string[] | null }).walkthrough = planned;
    return planned;
  }

  reset(seed: number): Observation {
    checkSeed('alfworld', seed);
    this.info = this.data ? this.dataTask(seed) : this.generatedTask(seed);
    return this.restart();
  }

  /** Starts a given game file (tests, a single game); `taskType` labels it in reports. */
  resetToGame(logic: GameLogic, taskType: TaskType, origin = logic.where): Observation {
    this.info = { logic, taskType, key: sha256(logic.file.pddl_problem), origin, task: null };
    return this.restart();
  }

  restart(): Observation {
    const info = this.requireInfo();
    this.current = new TwPddlGame(info.logic);
    this.initialText = this.current.reset();
    this.turn = 0;
    this.finished = false;
    this.applied = [];
    return { text: withAdmissible(this.initialText, this.admissibleActions()), anchor: this.initialText };
  }

  step(response: string): StepResult {
    const game = this.game;
    if (this.finished) throw new LamerError('E_ENV', 'alfworld.step() after the episode ended: call restart() or reset(seed) first');
    this.turn++;
    const { command, tagged } = projectAction(response);
    const { feedback, applied } = game.step(command);
    if (applied) this.applied.push(command.trim());
    const won = game.won();
    const valid = this.validMode === 'tags' ? tagged : tagged && applied;
    const done = won || this.turn >= this.maxTurns;
    this.finished = done;
    const info = { taskType: this.info!.taskType, command, admissible: applied, turn: this.turn };
    return {
      observation: { text: withAdmissible(feedback, this.admissibleActions()), anchor: feedback },
      historyAction: command,
      reward: won ? 10 : 0,
      done,
      won,
      valid,
      ...(done && !won ? { truncated: true } : {}),
      info,
    };
  }

  /** The admissible commands but `help` (LaMer leaves it out of the prompt), sorted. */
  admissibleActions(): string[] {
    return this.game.admissible().filter((c) => c !== 'help');
  }

  taskType(): string | undefined {
    return this.info?.taskType;
  }

  /** The current generated game's task (object, destination and lamp types); null for a data-folder game. */
  task(): Task | null {
    return this.requireInfo().task;
  }

  /** The problem's SHA-256: two seeds give the same task exactly when they give the same problem. */
  taskKey(): string {
    return this.requireInfo().key;
  }

  /** In-distribution: a task type the training seeds play; out-of-distribution otherwise. */
  taskTypeSplit(type: string): 'ID' | 'OOD' {
    return (this.trainTypes as readonly string[]).includes(type) ? 'ID' : 'OOD';
  }

  /** The task sentence of the current game (after "Your task is to: "). */
  goal(): string {
    this.requireInfo();
    const at = this.initialText.indexOf('Your task is to: ');
    return at < 0 ? '' : this.initialText.slice(at + 'Your task is to: '.length).trim();
  }

  playPrompt(input: PlayPromptInput): string {
    if (input.style === 'paper') return alfWorldPaperPlayPrompt(input, this.requirePaperTemplates(), this.game.admissible());
    return alfWorldPlayPrompt(input, { goal: this.goal(), maxTurns: this.maxTurns });
  }

  reflectPrompt(input: ReflectPromptInput): string {
    if (input.style === 'paper') return alfWorldPaperReflectPrompt(input, this.requirePaperTemplates());
    return alfWorldReflectPrompt(input, { goal: this.goal(), maxTurns: this.maxTurns });
  }

  private requirePaperTemplates(): LamerTemplates {
    if (this.paperTemplates === null) throw noPaperTemplates('alfworld');
    return this.paperTemplates;
  }

  parseReflection(response: string): Reflection {
    return extractRemark(response);
  }

  /**
   * Generated games: whether a reflection states where the failed episode saw what the task needs (the facts the
   * search player's reflection states; src/envs/alfworld/searcher.ts). undefined when there is nothing to check.
   */
  checkReflection(steps: readonly TrajectoryStep[], reflection: string): boolean | undefined {
    return checkSearchReflection(this, steps, reflection);
  }

  private requireInfo(): TaskInfo {
    if (this.info === null) throw new LamerError('E_ENV', 'alfworld: call reset(seed) before using the environment');
    return this.info;
  }

  /** A generated household of the seed's content split, as a game. */
  private generatedTask(seed: number): TaskInfo {
    const split = contentSplitOfSeed(seed);
    const types = split === 'eval' ? this.evalTypes : this.trainTypes;
    const small = this.household === 'small';
    return cached(`generated:${this.household}:${types.join(',')}:${seed}`, () => {
      let problem = '';
      const house = generateHousehold(
        seed,
        types,
        (h) => {
          problem = householdProblem(h);
          return split === undefined || contentSplit(problem) === split;
        },
        this.household,
      );
      const origin = `generated${small ? ' small' : ''} seed ${seed}`;
      const logic = new GameLogic(householdGame(house, problem), `alfworld ${origin}`);
      return { logic, taskType: house.task.type, key: sha256(problem), origin, task: house.task };
    });
  }

  /** Game i of the seed's split (see the file comment). */
  private dataTask(seed: number): TaskInfo {
    const data = this.data!;
    const split = contentSplitOfSeed(seed);
    const [list, start, what] =
      split === 'eval'
        ? [data.eval, EVAL_SEEDS.start, `evaluation (${this.splits!.eval.join(', ')})`]
        : split === 'select'
          ? [data.select, SELECT_SEEDS.start, 'model-selection (option select)']
          : [data.train, TRAIN_SEEDS.start, `training (${this.splits!.train.join(', ')})`];
    if (list.length === 0) {
      throw new LamerError(
        'E_ENV',
        split === 'select'
          ? `alfworld: no model-selection games; set env.options.select to split folders that are not the evaluation's (e.g. ["valid_seen"])`
          : `alfworld: no ${what} games of types ${(split === 'eval' ? this.evalTypes : this.trainTypes).join(', ')} under ${this.dataDir}`,
      );
    }
    const entry = list[(seed - start) % list.length];
    return cached(`file:${entry.file}`, () => {
      const { game } = loadGameFile(entry.file);
      return { logic: new GameLogic(game, entry.path), taskType: entry.taskType, key: entry.problemHash, origin: entry.path, task: null };
    });
  }
}
