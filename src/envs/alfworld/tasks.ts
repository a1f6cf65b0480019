// The six ALFWorld task types: their goal sentences, when they count as done, and the in-/out-of-distribution split
// of the LaMer paper (train on pick, look, clean and heat; evaluate out of distribution on cool and pick-two).

import type { Household, WorldState } from './world.js';

export const TASK_TYPES = [
  'pick_and_place',
  'look_at_obj_in_light',
  'pick_clean_then_place',
  'pick_heat_then_place',
  'pick_cool_then_place',
  'pick_two_obj_and_place',
] as const;

export type TaskType = (typeof TASK_TYPES)[number];

export const IN_DISTRIBUTION_TYPES: readonly TaskType[] = ['pick_and_place', 'look_at_obj_in_light', 'pick_clean_then_place', 'pick_heat_then_place'];
export const OUT_OF_DISTRIBUTION_TYPES: readonly TaskType[] = ['pick_cool_then_place', 'pick_two_obj_and_place'];

export type AlfWorldSplit = 'train' | 'eval-ood' | 'all';

export function taskTypesOf(split: AlfWorldSplit): readonly TaskType[] {
  if (split === 'train') return IN_DISTRIBUTION_TYPES;
  if (split === 'eval-ood') return OUT_OF_DISTRIBUTION_TYPES;
  return TASK_TYPES;
}

export interface Task {
  type: TaskType;
  objectType: string;
  /** Destination receptacle type (any receptacle of this type will do); absent for look tasks. */
  receptacleType?: string;
  /** Lamp type for look tasks. */
  lampType?: string;
}

/** The state an object must be in before it is placed, for the appliance tasks. */
export function requiredState(type: TaskType): 'clean' | 'hot' | 'cool' | undefined {
  if (type === 'pick_clean_then_place') return 'clean';
  if (type === 'pick_heat_then_place') return 'hot';
  if (type === 'pick_cool_then_place') return 'cool';
  return undefined;
}

/** "in the fridge" / "on the countertop": containers take "in", surfaces "on". */
export function prepositionFor(recType: string, containers: ReadonlySet<string>): 'in' | 'on' {
  return containers.has(recType) ? 'in' : 'on';
}

/** The goal sentence; two phrasings per type, chosen by `variant`, so prompts are not one fixed template. */
export function goalText(task: Task, prep: 'in' | 'on', variant: number): string {
  const o = task.objectType;
  const r = task.receptacleType ?? '';
  const alt = variant % 2 === 1;
  switch (task.type) {
    case 'pick_and_place':
      return alt ? `put a ${o} ${prep} ${r}.` : `put some ${o} ${prep} ${r}.`;
    case 'look_at_obj_in_light':
      return alt ? `examine the ${o} with the ${task.lampType}.` : `look at ${o} under the ${task.lampType}.`;
    case 'pick_clean_then_place':
      return alt ? `clean some ${o} and put it ${prep} ${r}.` : `put a clean ${o} ${prep} ${r}.`;
    case 'pick_heat_then_place':
      return alt ? `heat some ${o} and put it ${prep} ${r}.` : `put a hot ${o} ${prep} ${r}.`;
    case 'pick_cool_then_place':
      return alt ? `cool some ${o} and put it ${prep} ${r}.` : `put a cool ${o} ${prep} ${r}.`;
    case 'pick_two_obj_and_place':
      return alt ? `find two ${o} and put them ${prep} ${r}.` : `put two ${o} ${prep} ${r}.`;
  }
}

function typeOf(id: string): string {
  return id.slice(0, id.lastIndexOf(' '));
}

/** Whether the task is accomplished in this state. */
export function isAccomplished(house: Household, s: WorldState): boolean {
  const task = house.task;
  if (task.type === 'look_at_obj_in_light') {
    if (s.holding === null || typeOf(s.holding) !== task.objectType || s.location === null) return false;
    // The lamp must be on and right here: on the receptacle the agent stands at, or the floor lamp it stands by.
    const here = s.location;
    const lampsHere = here === null ? [] : [here, ...(s.contents[here] ?? [])].filter((id) => typeOf(id) === task.lampType);
    return lampsHere.some((id) => s.lampOn[id] === true);
  }
  const needState = requiredState(task.type);
  const need = task.type === 'pick_two_obj_and_place' ? 2 : 1;
  for (const r of house.receptacles) {
    if (r.type !== task.receptacleType) continue;
    let n = 0;
    for (const id of s.contents[r.id]) {
      if (typeOf(id) !== task.objectType) continue;
      if (needState !== undefined && s[needState][id] !== true) continue;
      n++;
    }
    if (n >= need) return true;
  }
  return false;
}
