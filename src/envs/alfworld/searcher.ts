// A scripted ALFWorld player that knows only what a model would know: the task sentence, the receptacles the room
// lists, what the observations of this episode showed, and the facts its own reflections on earlier episodes of the
// trial state. It searches the receptacles in the order the admissible actions list them (opening closed ones),
// takes what the task needs as soon as it has seen it, cleans, heats or cools it, fetches the lamp, and puts it in the
// first receptacle of the destination type. After a failed episode it writes down where it saw what the task needs
// and (while something is still missing) which receptacles it searched, and the next episode starts from those facts.
// The warm start imitates it (src/train/demonstrations.ts), so every demonstrated move is one a model could make
// from its prompt; the omniscient AlfWorldExpert, which walks straight to objects it has never seen, is not.
//
// It plays generated games, whose task (object, destination and lamp types) the generator records.

import { LamerError } from '../../errors.js';
import type { PromptStyle, TrajectoryStep } from '../types.js';
import { NOTHING_HAPPENS } from './engine/game.js';
import type { AlfWorldEnv } from './env.js';
import type { Task } from './games/tasks.js';
import { OPENABLE_TYPES, compareIds } from './games/world.js';

/** What a task needs done to its object, and with which appliance. */
const TRANSFORMS: Partial<Record<Task['type'], { verb: string; appliance: string }>> = {
  pick_clean_then_place_in_recep: { verb: 'clean', appliance: 'sinkbasin' },
  pick_heat_then_place_in_recep: { verb: 'heat', appliance: 'microwave' },
  pick_cool_then_place_in_recep: { verb: 'cool', appliance: 'fridge' },
};

/** What one failed episode showed: where the task's objects (and lamp) were, and where was searched in vain. */
export interface SearchFacts {
  /** Task object or lamp name to the receptacle it was first seen in (its place at the start of an episode). */
  found: Map<string, string>;
  /** Receptacles whose contents were seen, in the order they were searched (listed only while something is missing). */
  searched: string[];
}

/** The type of a name (`cabinet 3` -> `cabinet`). */
export function typeOf(name: string): string {
  const at = name.lastIndexOf(' ');
  return at < 0 ? name : name.slice(0, at);
}

/** The names (`apple 1`) of the "you see ..." clause of an observation; null when it shows no contents. */
export function seenNames(observation: string): string[] | null {
  const at = observation.indexOf('you see ');
  if (at < 0) return null;
  const clause = observation.slice(at + 'you see '.length).split('.')[0];
  return [...clause.matchAll(/([a-z]+ \d+)/g)].map((m) => m[1]);
}

/** The state of an episode as its commands and observations show it. */
interface EpisodeState {
  at: string | null;
  opened: Set<string>;
  holding: string | null;
  /** Objects put into a receptacle in this episode. */
  placed: Map<string, string>;
  transformed: Set<string>;
  /** Object to where it is as far as the player knows (memory, then what this episode showed). */
  where: Map<string, string>;
  searched: Set<string>;
  /** The first place each name was seen in this episode. */
  firstSeen: Map<string, string>;
}

export interface SearchPlayerOptions {
  /** `compact`: the command alone inside the tags, and terse fact reflections; default `full`. */
  style?: PromptStyle;
}

export class AlfWorldSearchPlayer {
  readonly style: PromptStyle;
  /** The facts of the reflections written so far in this trial. */
  private readonly memory: SearchFacts = { found: new Map(), searched: [] };

  constructor(
    readonly env: AlfWorldEnv,
    options: SearchPlayerOptions = {},
  ) {
    this.style = options.style ?? 'full';
  }

  private get task(): Task {
    const task = this.env.task();
    if (task === null) throw new LamerError('E_ENV', 'alfworld search player: plays generated games only (a data-folder game records no task types)');
    return task;
  }

  /** The receptacles the room's first observation lists, in the order of the admissible `go to` actions (sorted). */
  private receptacles(): string[] {
    return (seenNames(this.env.initialGameText) ?? []).sort(compareIds);
  }

  /** Replays the episode's steps from the start, after the facts of `memory` (default: this trial's reflections). */
  private state(steps: readonly TrajectoryStep[], memory: SearchFacts = this.memory): EpisodeState {
    const s: EpisodeState = {
      at: null,
      opened: new Set(),
      holding: null,
      placed: new Map(),
      transformed: new Set(),
      where: new Map(memory.found),
      searched: new Set(memory.searched),
      firstSeen: new Map(),
    };
    for (const step of steps) {
      if (step.observation.startsWith(NOTHING_HAPPENS)) continue;
      const command = step.action.trim();
      let m: RegExpMatchArray | null;
      let shownIn: string | null = null;
      if ((m = command.match(/^go to (.+)$/))) {
        s.at = m[1];
        if (!OPENABLE_TYPES.has(typeOf(m[1])) || s.opened.has(m[1])) shownIn = m[1];
      } else if ((m = command.match(/^open (.+)$/))) {
        s.opened.add(m[1]);
        shownIn = m[1];
      } else if ((m = command.match(/^close (.+)$/))) {
        s.opened.delete(m[1]);
      } else if ((m = command.match(/^take (.+) from (.+)$/))) {
        s.holding = m[1];
        s.where.delete(m[1]);
      } else if ((m = command.match(/^(?:move (.+) to|put (.+) (?:in\/on|in|on)) (.+)$/))) {
        const obj = m[1] ?? m[2];
        s.holding = null;
        s.placed.set(obj, m[3]);
        s.where.set(obj, m[3]);
      } else if ((m = command.match(/^(?:clean|heat|cool) (.+) with /))) {
        s.transformed.add(m[1]);
      }
      if (shownIn !== null) {
        const names = seenNames(step.observation);
        if (names !== null) {
          s.searched.add(shownIn);
          for (const n of names) {
            if (!s.placed.has(n)) s.where.set(n, shownIn);
            if (!s.firstSeen.has(n)) s.firstSeen.set(n, shownIn);
          }
        }
      }
    }
    return s;
  }

  /** The next command, from the episode so far (its steps) and the facts of earlier reflections. */
  nextCommand(steps: readonly TrajectoryStep[]): string {
    const task = this.task;
    const s = this.state(steps);
    const admissible = this.env.admissibleActions();
    const can = (c: string) => admissible.includes(c);
    const receptacles = this.receptacles();
    const first = (type: string) => receptacles.find((r) => typeOf(r) === type) ?? null;
    const goOrOpen = (where: string): string | null => {
      if (s.at !== where) return `go to ${where}`;
      if (OPENABLE_TYPES.has(typeOf(where)) && !s.opened.has(where) && can(`open ${where}`)) return `open ${where}`;
      return null;
    };
    const putDown = (obj: string, where: string) =>
      admissible.find((c) => [`move ${obj} to ${where}`, `put ${obj} in/on ${where}`, `put ${obj} in ${where}`, `put ${obj} on ${where}`].includes(c)) ?? null;
    const explore = (): string => {
      const next = receptacles.find((r) => !s.searched.has(r) && typeOf(r) !== task.receptacleType);
      if (next === undefined) return 'look';
      return goOrOpen(next) ?? 'look';
    };
    const lamp = task.lampType;
    const held = s.holding;
    if (held !== null) {
      if (typeOf(held) !== task.objectType) return (s.at !== null && putDown(held, s.at)) || 'look';
      const transform = TRANSFORMS[task.type];
      if (transform !== undefined && !s.transformed.has(held)) {
        const appliance = first(transform.appliance);
        if (appliance === null) return 'look';
        if (s.at !== appliance) return `go to ${appliance}`;
        const command = `${transform.verb} ${held} with ${appliance}`;
        if (can(command)) return command;
        return can(`open ${appliance}`) ? `open ${appliance}` : 'look';
      }
      if (lamp !== undefined) {
        const lampName = [...s.where.keys()].find((n) => typeOf(n) === lamp);
        if (lampName === undefined) return explore();
        const place = s.where.get(lampName)!;
        if (s.at !== place) return `go to ${place}`;
        return can(`use ${lampName}`) ? `use ${lampName}` : 'look';
      }
      const dest = first(task.receptacleType ?? '');
      if (dest === null) return 'look';
      return goOrOpen(dest) ?? putDown(held, dest) ?? 'look';
    }
    // Empty-handed: fetch a task object whose place is known (not one already put where the task wants it), or search.
    const wanted = [...s.where.keys()]
      .filter((n) => typeOf(n) === task.objectType && !(s.placed.has(n) && typeOf(s.placed.get(n)!) === task.receptacleType))
      .sort(compareIds);
    if (wanted.length === 0) return explore();
    const target = wanted[0];
    const place = s.where.get(target)!;
    return goOrOpen(place) ?? (can(`take ${target} from ${place}`) ? `take ${target} from ${place}` : explore());
  }

  act(steps: readonly TrajectoryStep[]): string {
    const command = this.nextCommand(steps);
    if (this.style === 'compact') return `<action>${command}</action>`;
    return `I search the receptacles I have not searched and use what I have found; the next step is: ${command}.\n<action>${command}</action>`;
  }

  /** What a failed episode showed that the next episode can use (what its reflection states). */
  episodeFacts(steps: readonly TrajectoryStep[]): SearchFacts {
    const task = this.task;
    const s = this.state(steps, { found: new Map(), searched: [] });
    const needed = (n: string) => typeOf(n) === task.objectType || typeOf(n) === task.lampType;
    const found = new Map([...s.firstSeen].filter(([n]) => needed(n)).sort((a, b) => compareIds(a[0], b[0])));
    const have = (type: string | undefined) =>
      type === undefined ? 0 : new Set([...found.keys(), ...this.memory.found.keys()].filter((n) => typeOf(n) === type)).size;
    const missing = have(task.objectType) < (task.type === 'pick_two_obj_and_place' ? 2 : 1) || (task.lampType !== undefined && have(task.lampType) === 0);
    const withNeeded = new Set(found.values());
    const searched = missing ? [...s.searched].filter((r) => !withNeeded.has(r)) : [];
    return { found, searched };
  }

  /** Remember what a failed episode showed (exactly what its reflection states) for the episodes after it. */
  endEpisode(steps: readonly TrajectoryStep[]): void {
    const facts = this.episodeFacts(steps);
    for (const [n, r] of facts.found) if (!this.memory.found.has(n)) this.memory.found.set(n, r);
    for (const r of facts.searched) if (!this.memory.searched.includes(r)) this.memory.searched.push(r);
  }

  reflect(steps: readonly TrajectoryStep[]): string {
    const { found, searched } = this.episodeFacts(steps);
    const parts = [...found].map(([n, r]) => `${n} at ${r}.`);
    if (this.style === 'compact') {
      if (searched.length > 0 || parts.length === 0) parts.push(`searched: ${searched.length > 0 ? searched.join(', ') : 'none'}.`);
      return `<remark>${parts.join(' ')}</remark>`;
    }
    const text = [`I did not complete the task in ${steps.length} action(s).`];
    if (parts.length > 0) text.push(`Where I saw what the task needs: ${parts.join(' ')}`);
    if (searched.length > 0) text.push(`Searched without finding the rest: ${searched.join(', ')}.`);
    return `I review the trial.\n<remark>${text.join(' ')}</remark>`;
  }
}

/**
 * Whether a reflection states where the failed episode saw what the task needs: every `X at Y` the search player's
 * reflection would state is in it, and none of its `X at Y` places such an object elsewhere. undefined when the
 * episode saw nothing the task needs (nothing to check) or the game is not a generated one.
 */
export function checkSearchReflection(env: AlfWorldEnv, steps: readonly TrajectoryStep[], reflection: string): boolean | undefined {
  if (env.task() === null) return undefined;
  const { found } = new AlfWorldSearchPlayer(env).episodeFacts(steps);
  if (found.size === 0) return undefined;
  const stated = new Map<string, string>();
  for (const m of reflection.toLowerCase().matchAll(/([a-z]+ \d+) at ([a-z]+ \d+)/g)) stated.set(m[1], m[2]);
  for (const [name, where] of found) if (stated.get(name) !== where) return false;
  return true;
}
