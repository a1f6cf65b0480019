// The six ALFWorld task types under ALFWorld's names (traj_data.json's `task_type`, numbered 1-6 as in ALFWorld's
// configs), the in-/out-of-distribution split of the LaMer paper (train on types 1-4, evaluate out of distribution on
// cool and pick-two), and the generator's goal sentences and goal formulas.

import { LamerError } from '../../../errors.js';

export const TASK_TYPES = [
  'pick_and_place_simple',
  'look_at_obj_in_light',
  'pick_clean_then_place_in_recep',
  'pick_heat_then_place_in_recep',
  'pick_cool_then_place_in_recep',
  'pick_two_obj_and_place',
] as const;

export type TaskType = (typeof TASK_TYPES)[number];

export const IN_DISTRIBUTION_TYPES: readonly TaskType[] = TASK_TYPES.slice(0, 4);
export const OUT_OF_DISTRIBUTION_TYPES: readonly TaskType[] = TASK_TYPES.slice(4);

export function isTaskType(value: unknown): value is TaskType {
  return typeof value === 'string' && (TASK_TYPES as readonly string[]).includes(value);
}

/**
 * Task types from an option: names, or ALFWorld's numbers 1-6 (its `task_types` config). Throws E_ENV naming the
 * option otherwise.
 */
export function readTaskTypes(value: unknown, option: string): TaskType[] {
  const list = Array.isArray(value) ? value : [value];
  const out: TaskType[] = [];
  for (const v of list) {
    const t = typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 6 ? TASK_TYPES[v - 1] : v;
    if (!isTaskType(t)) {
      throw new LamerError(
        'E_ENV',
        `alfworld option ${option}: expected a non-empty list of task types (1-6 or ${TASK_TYPES.join(', ')}); found ${JSON.stringify(value)}`,
      );
    }
    if (!out.includes(t)) out.push(t);
  }
  if (out.length === 0) throw new LamerError('E_ENV', `alfworld option ${option}: expected a non-empty list of task types (1-6 or ${TASK_TYPES.join(', ')})`);
  return out;
}

export interface Task {
  type: TaskType;
  objectType: string;
  /** Destination receptacle type (any receptacle of this type will do); absent for look tasks. */
  receptacleType?: string;
  /** Lamp type for look tasks. */
  lampType?: string;
}

/** The goal sentence (without the final period); two phrasings per type, chosen by `variant`. */
export function goalText(task: Task, variant: number): string {
  const o = task.objectType;
  const r = task.receptacleType ?? '';
  const alt = variant % 2 === 1;
  switch (task.type) {
    case 'pick_and_place_simple':
      return alt ? `put some ${o} on ${r}` : `put a ${o} in ${r}`;
    case 'look_at_obj_in_light':
      return alt ? `examine the ${o} with the ${task.lampType}` : `look at ${o} under the ${task.lampType}`;
    case 'pick_clean_then_place_in_recep':
      return alt ? `clean some ${o} and put it in ${r}` : `put a clean ${o} in ${r}`;
    case 'pick_heat_then_place_in_recep':
      return alt ? `heat some ${o} and put it in ${r}` : `put a hot ${o} in ${r}`;
    case 'pick_cool_then_place_in_recep':
      return alt ? `cool some ${o} and put it in ${r}` : `put a cool ${o} in ${r}`;
    case 'pick_two_obj_and_place':
      return alt ? `find two ${o} and put them in ${r}` : `put two ${o} in ${r}`;
  }
}

/**
 * The goal formula of a task in the problem's PDDL: `objectType` names the ALFWorld type constant (e.g. AppleType),
 * `receptacleType` the receptacle's (CounterTopType), `lampType` the lamp's (DeskLampType).
 */
export function goalPddl(type: TaskType, objectType: string, receptacleType: string, lampType: string): string {
  const state = {
    pick_clean_then_place_in_recep: ['cleanable', 'isClean'],
    pick_heat_then_place_in_recep: ['heatable', 'isHot'],
    pick_cool_then_place_in_recep: ['coolable', 'isCool'],
  } as const;
  switch (type) {
    case 'pick_and_place_simple':
      return `(exists (?r - receptacle) (exists (?o - object) (and (inReceptacle ?o ?r) (objectType ?o ${objectType}) (receptacleType ?r ${receptacleType}))))`;
    case 'pick_clean_then_place_in_recep':
    case 'pick_heat_then_place_in_recep':
    case 'pick_cool_then_place_in_recep': {
      const [able, is] = state[type];
      return `(exists (?r - receptacle) (exists (?o - object) (and (${able} ?o) (objectType ?o ${objectType}) (receptacleType ?r ${receptacleType}) (${is} ?o) (inReceptacle ?o ?r))))`;
    }
    case 'pick_two_obj_and_place':
      return (
        `(exists (?r - receptacle) (exists (?o1 - object) (and (objectType ?o1 ${objectType}) (receptacleType ?r ${receptacleType}) (inReceptacle ?o1 ?r)` +
        ` (exists (?o2 - object) (and (not (= ?o1 ?o2)) (objectType ?o2 ${objectType}) (inReceptacle ?o2 ?r))))))`
      );
    case 'look_at_obj_in_light':
      return (
        `(and (exists (?ot - object ?r - receptacle ?a - agent ?l - location) (and (objectType ?ot ${lampType}) (toggleable ?ot) (isToggled ?ot)` +
        ` (receptacleAtLocation ?r ?l) (atLocation ?a ?l) (inReceptacle ?ot ?r)))` +
        ` (exists (?o - object ?a - agent) (and (objectType ?o ${objectType}) (holds ?a ?o))))`
      );
  }
}
