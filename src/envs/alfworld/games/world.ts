// Procedurally generated ALFWorld-style households: one room (kitchen, living room, bedroom or bathroom) with
// numbered receptacles ("cabinet 3") and numbered objects ("apple 1") placed in them, and one task of the six
// ALFWorld task types. Generation is fully determined by the seed and the allowed task types.

import { LamerError } from '../../../errors.js';
import { Rng } from '../../../util/rng.js';
import { TASK_TYPES, type Task, type TaskType } from './tasks.js';

export type RoomKind = 'kitchen' | 'livingroom' | 'bedroom' | 'bathroom';

/**
 * `standard`: rooms of ALFWorld's size (6 to 24 receptacles, 5 to 13 distractor objects). `small`: a CPU-scale variant
 * with 4 to 10 receptacles and 2 to 5 distractors, where a search from receptacle to receptacle fits in a few turns.
 */
export type HouseholdSize = 'standard' | 'small';
export const HOUSEHOLD_SIZES: readonly HouseholdSize[] = ['standard', 'small'];

export interface Receptacle {
  /** `cabinet 3`: the name the game shows (the generated ids demangle to it). */
  id: string;
  type: string;
  openable: boolean;
}

export interface Thing {
  id: string;
  type: string;
  /** Lamps stay where they are (toggleable, not pickupable); everything else can be picked up. */
  takeable: boolean;
}

export interface Household {
  room: RoomKind;
  receptacles: Receptacle[];
  things: Thing[];
  task: Task;
  /** Which of the two goal phrasings (goalText). */
  goalVariant: number;
  /** Receptacle id to the object ids in it, in id order. */
  contents: Record<string, string[]>;
}

export const OPENABLE_TYPES = new Set(['cabinet', 'drawer', 'fridge', 'microwave', 'safe']);
export const LAMP_TYPES = new Set(['desklamp']);

interface RoomSpec {
  /** Receptacle type to [min, max] count. */
  receptacles: Record<string, [number, number]>;
  /** Object types that may appear as distractors or pick targets. */
  objects: readonly string[];
}

/** Receptacle counts of the small households (types absent here keep none); the object lists are the standard ones. */
// prettier-ignore
const SMALL_RECEPTACLES: Record<RoomKind, Record<string, [number, number]>> = {
  kitchen: {
    cabinet: [1, 2], countertop: [1, 1], diningtable: [0, 1], drawer: [1, 1], fridge: [1, 1], microwave: [1, 1],
    sinkbasin: [1, 1], stoveburner: [1, 1],
  },
  livingroom: { coffeetable: [1, 1], drawer: [1, 2], shelf: [1, 1], sidetable: [1, 1], sofa: [1, 1], cabinet: [0, 1] },
  bedroom: { bed: [1, 1], desk: [1, 1], drawer: [1, 2], shelf: [0, 1], sidetable: [1, 1], garbagecan: [0, 1] },
  bathroom: { cabinet: [1, 2], countertop: [1, 1], sinkbasin: [1, 1], toilet: [1, 1], garbagecan: [0, 1] },
};
const DISTRACTORS: Record<HouseholdSize, [number, number]> = { standard: [5, 13], small: [2, 5] };

// The room table, one receptacle kind or object list per line as it reads best (not reflowed by the formatter).
// prettier-ignore
const ROOMS: Record<RoomKind, RoomSpec> = {
  kitchen: {
    receptacles: {
      cabinet: [2, 6], countertop: [1, 3], diningtable: [0, 1], drawer: [1, 4], fridge: [1, 1],
      garbagecan: [1, 1], microwave: [1, 1], shelf: [0, 2], sinkbasin: [1, 1], stoveburner: [2, 4],
    },
    objects: [
      'apple', 'bread', 'butterknife', 'bowl', 'cup', 'dishsponge', 'egg', 'fork', 'kettle', 'knife', 'ladle',
      'lettuce', 'mug', 'pan', 'peppershaker', 'plate', 'pot', 'potato', 'saltshaker', 'spatula', 'spoon', 'tomato',
      'winebottle',
    ],
  },
  livingroom: {
    receptacles: {
      armchair: [0, 1], cabinet: [0, 2], coffeetable: [1, 1], drawer: [1, 3], garbagecan: [1, 1], shelf: [1, 3],
      sidetable: [1, 2], sofa: [1, 1], tvstand: [0, 1],
    },
    objects: [
      'book', 'box', 'cd', 'cellphone', 'creditcard', 'keychain', 'laptop', 'newspaper', 'pen', 'pencil', 'pillow',
      'remotecontrol', 'statue', 'vase', 'watch',
    ],
  },
  bedroom: {
    receptacles: {
      bed: [1, 1], desk: [1, 1], drawer: [2, 5], dresser: [0, 1], garbagecan: [1, 1], safe: [0, 1], shelf: [0, 3],
      sidetable: [1, 2],
    },
    objects: [
      'alarmclock', 'book', 'bowl', 'cd', 'cellphone', 'creditcard', 'keychain', 'laptop', 'mug', 'pen', 'pencil',
      'pillow', 'watch',
    ],
  },
  bathroom: {
    receptacles: {
      bathtubbasin: [0, 1], cabinet: [2, 4], countertop: [1, 1], drawer: [0, 3], garbagecan: [1, 1], shelf: [0, 2],
      sinkbasin: [1, 2], toilet: [1, 1], towelholder: [1, 1],
    },
    objects: ['candle', 'cloth', 'dishsponge', 'soapbar', 'soapbottle', 'spraybottle', 'tissuebox', 'toiletpaper'],
  },
};

/** Every receptacle and object type a generated household may hold, sorted (the compact-alfworld tokenizer names them). */
export function householdTypes(): string[] {
  const types = new Set<string>(LAMP_TYPES);
  for (const spec of Object.values(ROOMS)) {
    for (const t of Object.keys(spec.receptacles)) types.add(t);
    for (const t of spec.objects) types.add(t);
  }
  return [...types].sort();
}

/** Which objects each task type may ask for, and where it may ask them to be put. */
export const CLEANABLE = new Set([
  'apple',
  'bowl',
  'butterknife',
  'cloth',
  'cup',
  'dishsponge',
  'egg',
  'fork',
  'knife',
  'ladle',
  'lettuce',
  'mug',
  'pan',
  'plate',
  'pot',
  'potato',
  'soapbar',
  'spatula',
  'spoon',
  'tomato',
]);
export const HEATABLE = new Set(['apple', 'bread', 'cup', 'egg', 'mug', 'plate', 'potato', 'tomato']);
export const COOLABLE = new Set(['apple', 'bowl', 'bread', 'cup', 'egg', 'lettuce', 'mug', 'pan', 'plate', 'pot', 'potato', 'tomato', 'winebottle']);
const LOOKABLE = new Set([
  'alarmclock',
  'book',
  'bowl',
  'box',
  'cd',
  'cellphone',
  'creditcard',
  'keychain',
  'laptop',
  'mug',
  'newspaper',
  'pen',
  'pencil',
  'pillow',
  'remotecontrol',
  'statue',
  'vase',
  'watch',
]);
/** Receptacles that appliance tasks never target: the appliance itself would be a trivial or odd goal. */
const NOT_A_TARGET = new Set(['stoveburner', 'sinkbasin', 'bathtubbasin']);
/** Where lamps stand. */
const DESK_LAMP_SURFACES = ['desk', 'sidetable', 'dresser'];

function rooms(type: TaskType): RoomKind[] {
  switch (type) {
    case 'look_at_obj_in_light':
      return ['livingroom', 'bedroom'];
    case 'pick_clean_then_place_in_recep':
      return ['kitchen', 'bathroom'];
    case 'pick_heat_then_place_in_recep':
    case 'pick_cool_then_place_in_recep':
      return ['kitchen'];
    default:
      return ['kitchen', 'livingroom', 'bedroom', 'bathroom'];
  }
}

function objectFits(type: TaskType, obj: string): boolean {
  switch (type) {
    case 'pick_clean_then_place_in_recep':
      return CLEANABLE.has(obj);
    case 'pick_heat_then_place_in_recep':
      return HEATABLE.has(obj);
    case 'pick_cool_then_place_in_recep':
      return COOLABLE.has(obj);
    case 'look_at_obj_in_light':
      return LOOKABLE.has(obj);
    default:
      return true;
  }
}

function targetFits(type: TaskType, recType: string): boolean {
  if (NOT_A_TARGET.has(recType)) return false;
  // The appliance a task uses is not also its destination (a hot apple put back into the microwave).
  if (type === 'pick_heat_then_place_in_recep' && recType === 'microwave') return false;
  if (type === 'pick_cool_then_place_in_recep' && recType === 'fridge') return false;
  // Two trips to a closed receptacle would not fit in the 10-turn training budget; ALFWorld's pick-two goals are
  // mostly open surfaces too.
  if (type === 'pick_two_obj_and_place' && OPENABLE_TYPES.has(recType)) return false;
  return true;
}

function int(rng: Rng, [lo, hi]: [number, number]): number {
  return lo + rng.int(hi - lo + 1);
}

/**
 * Generate one household with a task of one of `taskTypes` (uniformly), from `seed`; `accept` may refuse a household
 * (e.g. one whose content belongs to another split), and generation goes on with the same stream.
 */
export function generateHousehold(
  seed: number,
  taskTypes: readonly TaskType[] = TASK_TYPES,
  accept: (house: Household) => boolean = () => true,
  size: HouseholdSize = 'standard',
): Household {
  if (taskTypes.length === 0) throw new LamerError('E_ENV', 'alfworld: no task types to sample from');
  const rng = new Rng(seed);
  const taskType = rng.pick(taskTypes);
  // Retry layouts until the task is posable (e.g. a living room that drew no cabinet cannot host "put in cabinet");
  // the retries consume the same stream, so the result stays a function of the seed.
  for (let attempt = 0; attempt < 1000; attempt++) {
    const house = tryHousehold(rng, taskType, size);
    if (house !== null && accept(house)) return house;
  }
  throw new LamerError('E_ENV', `alfworld: could not generate a ${taskType} household for seed ${seed}`);
}

function tryHousehold(rng: Rng, taskType: TaskType, size: HouseholdSize): Household | null {
  const room = rng.pick(rooms(taskType));
  const spec = ROOMS[room];
  const receptacles: Receptacle[] = [];
  for (const [type, range] of Object.entries(size === 'small' ? SMALL_RECEPTACLES[room] : spec.receptacles)) {
    const n = int(rng, range);
    for (let i = 1; i <= n; i++) receptacles.push({ id: `${type} ${i}`, type, openable: OPENABLE_TYPES.has(type) });
  }
  // Living rooms and bedrooms have a desk lamp on a desk, side table or dresser (most of them).
  const things: Thing[] = [];
  const placement: Array<[string, string]> = [];
  if (room === 'livingroom' || room === 'bedroom') {
    const surfaces = receptacles.filter((r) => DESK_LAMP_SURFACES.includes(r.type));
    if (surfaces.length > 0 && rng.next() < 0.85) {
      things.push({ id: 'desklamp 1', type: 'desklamp', takeable: false });
      placement.push(['desklamp 1', rng.pick(surfaces).id]);
    }
  }

  // The task: an object type the room has and the task allows, and (except look) a destination type.
  const objectChoices = spec.objects.filter((o) => objectFits(taskType, o));
  if (objectChoices.length === 0) return null;
  const objectType = rng.pick(objectChoices);
  const recTypes = [...new Set(receptacles.map((r) => r.type))];
  let receptacleType: string | undefined;
  let lampType: string | undefined;
  if (taskType === 'look_at_obj_in_light') {
    if (things.length === 0) return null;
    lampType = 'desklamp';
  } else {
    const targets = recTypes.filter((t) => targetFits(taskType, t));
    if (targets.length === 0) return null;
    receptacleType = rng.pick(targets);
  }
  if (taskType === 'pick_clean_then_place_in_recep' && !recTypes.includes('sinkbasin')) return null;
  if (taskType === 'pick_heat_then_place_in_recep' && !recTypes.includes('microwave')) return null;
  if (taskType === 'pick_cool_then_place_in_recep' && !recTypes.includes('fridge')) return null;

  // Objects: the task's objects (two for pick-two, sometimes a spare), then distractors of other types.
  const counts = new Map<string, number>();
  const addThing = (type: string): string => {
    const n = (counts.get(type) ?? 0) + 1;
    counts.set(type, n);
    const id = `${type} ${n}`;
    things.push({ id, type, takeable: true });
    return id;
  };
  const needed = taskType === 'pick_two_obj_and_place' ? 2 : 1;
  const targetIds: string[] = [];
  for (let i = 0; i < needed + (rng.next() < 0.35 ? 1 : 0); i++) targetIds.push(addThing(objectType));
  const distractorTypes = spec.objects.filter((o) => o !== objectType);
  const distractors = int(rng, DISTRACTORS[size]);
  for (let i = 0; i < distractors; i++) addThing(rng.pick(distractorTypes));

  // Task objects never start where the task wants them (the goal must not hold at the start).
  const startFor = receptacles.filter((r) => r.type !== receptacleType && r.type !== 'stoveburner');
  if (startFor.length === 0) return null;
  for (const id of targetIds) placement.push([id, rng.pick(startFor).id]);
  for (const t of things) {
    if (!t.takeable || targetIds.includes(t.id)) continue;
    const where = t.type === 'pan' || t.type === 'pot' || t.type === 'kettle' ? receptacles : receptacles.filter((r) => r.type !== 'stoveburner');
    placement.push([t.id, rng.pick(where).id]);
  }

  const contents: Record<string, string[]> = {};
  for (const r of receptacles) contents[r.id] = [];
  placement.sort((a, b) => compareIds(a[0], b[0]));
  for (const [thing, rec] of placement) contents[rec].push(thing);
  const task: Task = { type: taskType, objectType, receptacleType, lampType };
  receptacles.sort((a, b) => compareIds(a.id, b.id));
  things.sort((a, b) => compareIds(a.id, b.id));
  return { room, receptacles, things, task, goalVariant: rng.int(2), contents };
}

/** "cabinet 2" before "cabinet 10": by type, then number. */
export function compareIds(a: string, b: string): number {
  const [ta, na] = splitId(a);
  const [tb, nb] = splitId(b);
  return ta < tb ? -1 : ta > tb ? 1 : na - nb;
}

function splitId(id: string): [string, number] {
  const i = id.lastIndexOf(' ');
  return [id.slice(0, i), Number(id.slice(i + 1))];
}
