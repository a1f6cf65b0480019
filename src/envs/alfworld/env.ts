// The ALFWorld environment (SPEC §8): a generated household, one task, ALFWorld's command grammar. Every observation
// ends with the admissible commands; a command that is not admissible gets "Nothing happens." and valid = 0.
// The rules are plain functions of (household, state) so the expert can plan on a copy of the state.

import { LamerError } from '../../errors.js';
import { extractRemark } from '../common/tags.js';
import { checkSeed, intOption, rejectUnknownOptions } from '../common/options.js';
import type { Environment, Observation, PlayPromptInput, ReflectPromptInput, Reflection, StepResult } from '../types.js';
import { parseAlfWorldResponse } from './parse.js';
import { alfWorldPlayPrompt, alfWorldReflectPrompt } from './prompts.js';
import { TASK_TYPES, isAccomplished, taskTypesOf, type AlfWorldSplit, type TaskType } from './tasks.js';
import { CONTAINER_TYPES, LAMP_TYPES, cloneState, generateHousehold, type Household, type Receptacle, type WorldState } from './world.js';

export interface AlfWorldOptions {
  /** Task types to sample: 'train' (pick, look, clean, heat), 'eval-ood' (cool, pick-two) or 'all'. Default 'all'. */
  split?: AlfWorldSplit;
  /** Explicit task types (overrides split). */
  taskTypes?: TaskType[];
  /** Max turns per episode: 10 in training (SPEC §6), 30 at evaluation. */
  maxTurns?: number;
}

const OPTION_KEYS = ['split', 'taskTypes', 'maxTurns'] as const;
export const NOTHING_HAPPENS = 'Nothing happens.';

const ROOM_NAMES: Record<Household['room'], string> = {
  kitchen: 'kitchen',
  livingroom: 'living room',
  bedroom: 'bedroom',
  bathroom: 'bathroom',
};

function typeOf(id: string): string {
  return id.slice(0, id.lastIndexOf(' '));
}

function withArticle(id: string): string {
  return /^[aeiou]/.test(id) ? `an ${id}` : `a ${id}`;
}

function listing(ids: readonly string[]): string {
  const items = ids.map(withArticle);
  if (items.length === 0) return 'nothing';
  if (items.length === 1) return items[0];
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

function receptacleOf(house: Household, id: string | null): Receptacle | undefined {
  return id === null ? undefined : house.receptacles.find((r) => r.id === id);
}

/** Contents can be seen and reached: the receptacle is not a closed cabinet, drawer, fridge... */
function accessible(r: Receptacle, s: WorldState): boolean {
  return !r.openable || s.open[r.id] === true;
}

function contentsSentence(r: Receptacle, s: WorldState): string {
  const prep = CONTAINER_TYPES.has(r.type) ? 'In' : 'On';
  return `${prep} the ${r.id}, you see ${listing(s.contents[r.id])}.`;
}

/** What the agent sees of a receptacle when it arrives at it or examines it. */
function describeReceptacle(r: Receptacle, s: WorldState): string {
  if (!r.canHold) return `The ${r.id} is ${s.lampOn[r.id] ? 'on' : 'off'}.`;
  if (r.openable && !s.open[r.id]) return `The ${r.id} is closed.`;
  if (r.openable) return `The ${r.id} is open. ${contentsSentence(r, s)}`;
  return contentsSentence(r, s);
}

/** Lamps the agent can switch from where it stands. */
function reachableLamps(house: Household, s: WorldState): string[] {
  const here = receptacleOf(house, s.location);
  if (here === undefined) return [];
  if (LAMP_TYPES.has(here.type)) return [here.id];
  if (!accessible(here, s)) return [];
  return s.contents[here.id].filter((id) => LAMP_TYPES.has(typeOf(id)));
}

export function initialDescription(house: Household): string {
  return (
    `You are in the middle of a ${ROOM_NAMES[house.room]}. Around you, you see ` +
    `${listing(house.receptacles.map((r) => r.id))}.\n\nYour task is to: ${house.goal}`
  );
}

/** The admissible commands of a state, in a fixed order: moves, then actions here, then look and inventory. */
export function admissibleCommands(house: Household, s: WorldState): string[] {
  const cmds: string[] = [];
  for (const r of house.receptacles) if (r.id !== s.location) cmds.push(`go to ${r.id}`);
  const here = receptacleOf(house, s.location);
  if (here !== undefined) {
    if (here.openable) cmds.push(s.open[here.id] ? `close ${here.id}` : `open ${here.id}`);
    if (accessible(here, s) && here.canHold) {
      for (const id of s.contents[here.id]) {
        if (s.holding === null && !LAMP_TYPES.has(typeOf(id))) cmds.push(`take ${id} from ${here.id}`);
      }
      if (s.holding !== null) cmds.push(`put ${s.holding} in/on ${here.id}`);
    }
    if (s.holding !== null) {
      if (here.type === 'sinkbasin') cmds.push(`clean ${s.holding} with ${here.id}`);
      if (here.type === 'microwave') cmds.push(`heat ${s.holding} with ${here.id}`);
      if (here.type === 'fridge') cmds.push(`cool ${s.holding} with ${here.id}`);
    }
    for (const lamp of reachableLamps(house, s)) cmds.push(`use ${lamp}`);
    cmds.push(`examine ${here.id}`);
    if (accessible(here, s)) for (const id of s.contents[here.id]) cmds.push(`examine ${id}`);
  }
  if (s.holding !== null) cmds.push(`examine ${s.holding}`);
  cmds.push('inventory', 'look');
  return cmds;
}

/**
 * Apply an admissible command (check with admissibleCommands first) and return the feedback text. Mutates `s`.
 * The command is trusted to be admissible, so each branch only does what the command says.
 */
export function executeCommand(house: Household, s: WorldState, cmd: string): string {
  let m: RegExpExecArray | null;
  if ((m = /^go to (.+)$/.exec(cmd))) {
    const r = receptacleOf(house, m[1])!;
    s.location = r.id;
    return `You arrive at the ${r.id}. ${describeReceptacle(r, s)}`;
  }
  if ((m = /^open (.+)$/.exec(cmd))) {
    const r = receptacleOf(house, m[1])!;
    s.open[r.id] = true;
    return `You open the ${r.id}. ${describeReceptacle(r, s)}`;
  }
  if ((m = /^close (.+)$/.exec(cmd))) {
    s.open[m[1]] = false;
    return `You close the ${m[1]}.`;
  }
  if ((m = /^take (.+) from (.+)$/.exec(cmd))) {
    const [, obj, rec] = m;
    s.contents[rec] = s.contents[rec].filter((id) => id !== obj);
    s.holding = obj;
    return `You pick up the ${obj} from the ${rec}.`;
  }
  if ((m = /^put (.+) in\/on (.+)$/.exec(cmd))) {
    const [, obj, rec] = m;
    s.contents[rec].push(obj);
    s.holding = null;
    return `You put the ${obj} ${CONTAINER_TYPES.has(typeOf(rec)) ? 'in' : 'on'} the ${rec}.`;
  }
  if ((m = /^(clean|heat|cool) (.+) with (.+)$/.exec(cmd))) {
    const [, verb, obj, rec] = m;
    if (verb === 'clean') s.clean[obj] = true;
    // Heating undoes cooling and the reverse: an object is hot or cool, never both.
    if (verb === 'heat') {
      s.hot[obj] = true;
      s.cool[obj] = false;
    }
    if (verb === 'cool') {
      s.cool[obj] = true;
      s.hot[obj] = false;
    }
    return `You ${verb} the ${obj} using the ${rec}.`;
  }
  if ((m = /^use (.+)$/.exec(cmd))) {
    const lamp = m[1];
    s.lampOn[lamp] = !s.lampOn[lamp];
    return `You turn ${s.lampOn[lamp] ? 'on' : 'off'} the ${lamp}.`;
  }
  if ((m = /^examine (.+)$/.exec(cmd))) {
    const target = m[1];
    const r = receptacleOf(house, target);
    if (r !== undefined) return describeReceptacle(r, s);
    if (LAMP_TYPES.has(typeOf(target))) return `The ${target} is ${s.lampOn[target] ? 'on' : 'off'}.`;
    const states = (['clean', 'hot', 'cool'] as const).filter((k) => s[k][target] === true);
    return states.length > 0 ? `The ${target} is ${states.join(' and ')}.` : `There is nothing special about the ${target}.`;
  }
  if (cmd === 'inventory') {
    return s.holding === null ? 'You are not carrying anything.' : `You are carrying: ${withArticle(s.holding)}.`;
  }
  if (cmd === 'look') {
    const here = receptacleOf(house, s.location);
    if (here === undefined) {
      return `You are in the middle of a ${ROOM_NAMES[house.room]}. Around you, you see ${listing(house.receptacles.map((r) => r.id))}.`;
    }
    return `You are at the ${here.id}. ${describeReceptacle(here, s)}`;
  }
  // Unreachable for admissible commands; kept so a caller bug reads as a no-op rather than a crash.
  return NOTHING_HAPPENS;
}

export class AlfWorldEnv implements Environment {
  readonly name = 'alfworld';
  readonly maxTurns: number;
  readonly taskTypes: readonly TaskType[];
  private house: Household | null = null;
  private current: WorldState | null = null;
  private turn = 0;
  private finished = false;
  private admissibleCache: string[] | null = null;

  constructor(options: AlfWorldOptions = {}) {
    rejectUnknownOptions('alfworld', options as Record<string, unknown>, OPTION_KEYS);
    this.maxTurns = intOption('alfworld', options as Record<string, unknown>, 'maxTurns', 10, 1, 1000);
    const split = options.split ?? 'all';
    if (!['train', 'eval-ood', 'all'].includes(split)) {
      throw new LamerError('E_ENV', `alfworld option split: expected 'train', 'eval-ood' or 'all', found ${JSON.stringify(split)}`);
    }
    if (options.taskTypes !== undefined) {
      const bad = Array.isArray(options.taskTypes) ? options.taskTypes.filter((t) => !(TASK_TYPES as readonly string[]).includes(t)) : [options.taskTypes];
      if (!Array.isArray(options.taskTypes) || options.taskTypes.length === 0 || bad.length > 0) {
        throw new LamerError(
          'E_ENV',
          `alfworld option taskTypes: expected a non-empty list of ${TASK_TYPES.join(', ')}; found ${JSON.stringify(options.taskTypes)}`,
        );
      }
      this.taskTypes = [...options.taskTypes];
    } else {
      this.taskTypes = taskTypesOf(split);
    }
  }

  /** The current household (throws before reset()). */
  get household(): Household {
    return this.requireHouse();
  }

  /** A copy of the current state (the expert plans on it). */
  state(): WorldState {
    return cloneState(this.requireState());
  }

  get turnsTaken(): number {
    return this.turn;
  }

  reset(seed: number): Observation {
    checkSeed('alfworld', seed);
    this.house = generateHousehold(seed, this.taskTypes);
    return this.restart();
  }

  /** Start a given household (hand-built scenarios, saved tasks) instead of a generated one. */
  resetTo(house: Household): Observation {
    const ids = new Set(house.receptacles.map((r) => r.id));
    for (const rec of Object.keys(house.initial.contents)) {
      if (!ids.has(rec)) throw new LamerError('E_ENV', `alfworld.resetTo: contents name unknown receptacle ${rec}`);
    }
    for (const r of house.receptacles) {
      if (!Array.isArray(house.initial.contents[r.id])) {
        throw new LamerError('E_ENV', `alfworld.resetTo: initial.contents lacks receptacle ${r.id}`);
      }
    }
    this.house = house;
    return this.restart();
  }

  restart(): Observation {
    const house = this.requireHouse();
    this.current = cloneState(house.initial);
    this.turn = 0;
    this.finished = false;
    this.admissibleCache = null;
    return this.observe(initialDescription(house));
  }

  step(response: string): StepResult {
    const house = this.requireHouse();
    const s = this.requireState();
    if (this.finished) {
      throw new LamerError('E_ENV', 'alfworld.step() after the episode ended: call restart() or reset(seed) first');
    }
    this.turn++;
    const cmd = parseAlfWorldResponse(response);
    const valid = cmd !== null && this.admissibleActions().includes(cmd);
    let feedback = NOTHING_HAPPENS;
    if (valid) {
      feedback = executeCommand(house, s, cmd);
      this.admissibleCache = null;
    }
    const won = valid && isAccomplished(house, s);
    const done = won || this.turn >= this.maxTurns;
    this.finished = done;
    const info = { taskType: house.task.type, command: cmd, turn: this.turn };
    return { observation: this.observe(feedback), reward: won ? 10 : 0, done, won, valid, ...(done && !won ? { truncated: true } : {}), info };
  }

  admissibleActions(): string[] {
    const house = this.requireHouse();
    if (this.admissibleCache === null) this.admissibleCache = admissibleCommands(house, this.requireState());
    return this.admissibleCache.slice();
  }

  taskType(): string | undefined {
    return this.house?.task.type;
  }

  playPrompt(input: PlayPromptInput): string {
    return alfWorldPlayPrompt(input, { goal: this.requireHouse().goal, maxTurns: this.maxTurns });
  }

  reflectPrompt(input: ReflectPromptInput): string {
    return alfWorldReflectPrompt(input, { goal: this.requireHouse().goal, maxTurns: this.maxTurns });
  }

  parseReflection(response: string): Reflection {
    return extractRemark(response);
  }

  private requireHouse(): Household {
    if (this.house === null) throw new LamerError('E_ENV', 'alfworld: call reset(seed) before using the environment');
    return this.house;
  }

  private requireState(): WorldState {
    this.requireHouse();
    return this.current!;
  }

  /** Feedback and the admissible commands; the anchor is the same text (it already names the state, not history). */
  private observe(feedback: string): Observation {
    const text = `${feedback}\n\nAdmissible actions: ${this.admissibleActions().join(', ')}`;
    return { text, anchor: text };
  }
}
