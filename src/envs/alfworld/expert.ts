// A scripted ALFWorld agent that plans from the known world state (where every object is, even inside closed
// receptacles). Each call looks at the current state and returns the next command, so it also recovers from a
// state left by other actions. Its reflection replays its own plan from the initial state to state the plan.

import type { Expert, TrajectoryStep } from '../types.js';
import { NOTHING_HAPPENS, admissibleCommands, executeCommand, type AlfWorldEnv } from './env.js';
import { isAccomplished, requiredState } from './tasks.js';
import { LAMP_TYPES, cloneState, type Household, type WorldState } from './world.js';

function typeOf(id: string): string {
  return id.slice(0, id.lastIndexOf(' '));
}

function where(s: WorldState, obj: string): string | undefined {
  for (const [rec, items] of Object.entries(s.contents)) if (items.includes(obj)) return rec;
  return undefined;
}

/** Go to `rec`, open it if closed, then do `then` there. */
function approach(house: Household, s: WorldState, rec: string, then: string): string {
  if (s.location !== rec) return `go to ${rec}`;
  const r = house.receptacles.find((x) => x.id === rec)!;
  if (r.openable && !s.open[rec]) return `open ${rec}`;
  return then;
}

/** Steps to reach and open `rec` from where the agent stands (for choosing the nearest candidate). */
function reachCost(house: Household, s: WorldState, rec: string): number {
  const r = house.receptacles.find((x) => x.id === rec)!;
  return (s.location === rec ? 0 : 1) + (r.openable && !s.open[rec] ? 1 : 0);
}

/** The next command of the expert in state `s`, or null when the task is already accomplished. */
export function expertCommand(house: Household, s: WorldState): string | null {
  if (isAccomplished(house, s)) return null;
  const task = house.task;
  const need = requiredState(task.type);
  const byCost = (recs: string[]) => recs.slice().sort((a, b) => reachCost(house, s, a) - reachCost(house, s, b) || (a < b ? -1 : a > b ? 1 : 0));

  // Where the object goes: for pick-two, the receptacle that already holds one; otherwise the cheapest to reach.
  const destinations = house.receptacles.filter((r) => r.type === task.receptacleType).map((r) => r.id);
  const holdsOne = destinations.find((d) => s.contents[d].some((id) => typeOf(id) === task.objectType));
  const destination = task.type === 'pick_two_obj_and_place' && holdsOne !== undefined ? holdsOne : byCost(destinations)[0];

  const useful = (id: string) => typeOf(id) === task.objectType && (task.type !== 'pick_two_obj_and_place' || where(s, id) !== destination);

  if (s.holding !== null && typeOf(s.holding) === task.objectType) {
    const held = s.holding;
    if (task.type === 'look_at_obj_in_light') {
      const lamps = [
        ...house.receptacles.filter((r) => r.type === task.lampType).map((r) => ({ lamp: r.id, at: r.id })),
        ...Object.entries(s.contents).flatMap(([rec, items]) => items.filter((id) => typeOf(id) === task.lampType).map((id) => ({ lamp: id, at: rec }))),
      ];
      const { lamp, at } = lamps[0];
      if (s.location !== at) return `go to ${at}`;
      return `use ${lamp}`;
    }
    if (need !== undefined && s[need][held] !== true) {
      const applianceType = need === 'clean' ? 'sinkbasin' : need === 'hot' ? 'microwave' : 'fridge';
      const verb = need === 'clean' ? 'clean' : need === 'hot' ? 'heat' : 'cool';
      const appliance = byCost(house.receptacles.filter((r) => r.type === applianceType).map((r) => r.id))[0];
      if (s.location !== appliance) return `go to ${appliance}`;
      return `${verb} ${held} with ${appliance}`;
    }
    return approach(house, s, destination, `put ${held} in/on ${destination}`);
  }

  if (s.holding !== null) {
    // Holding something else (only after other actions): put it down somewhere it can go, then carry on.
    const here = house.receptacles.find((r) => r.id === s.location);
    if (here !== undefined && here.canHold) return approach(house, s, here.id, `put ${s.holding} in/on ${here.id}`);
    const surface = house.receptacles.find((r) => r.canHold && !r.openable)!;
    return `go to ${surface.id}`;
  }

  // Hands free: fetch the nearest object that serves the task (not one already placed, and not from where it is
  // wanted unless it still needs treatment).
  const candidates: Array<{ obj: string; rec: string }> = [];
  for (const [rec, items] of Object.entries(s.contents)) {
    for (const obj of items) {
      if (!useful(obj) || LAMP_TYPES.has(typeOf(obj))) continue;
      const recType = typeOf(rec);
      const alreadyPlaced = recType === task.receptacleType && (need === undefined || s[need][obj] === true);
      if (alreadyPlaced && task.type !== 'look_at_obj_in_light') continue;
      candidates.push({ obj, rec });
    }
  }
  candidates.sort((a, b) => reachCost(house, s, a.rec) - reachCost(house, s, b.rec) || (a.obj < b.obj ? -1 : 1));
  const pick = candidates[0];
  if (pick === undefined) return 'look';
  return approach(house, s, pick.rec, `take ${pick.obj} from ${pick.rec}`);
}

/** The expert's command sequence from the initial state (at most `limit` commands). */
export function expertPlan(house: Household, limit = 50): string[] {
  const s = cloneState(house.initial);
  const plan: string[] = [];
  for (let i = 0; i < limit; i++) {
    const cmd = expertCommand(house, s);
    if (cmd === null || !admissibleCommands(house, s).includes(cmd)) break;
    executeCommand(house, s, cmd);
    plan.push(cmd);
  }
  return plan;
}

export class AlfWorldExpert implements Expert {
  constructor(private readonly env: AlfWorldEnv) {}

  act(): string {
    const cmd = expertCommand(this.env.household, this.env.state()) ?? 'look';
    return `I know where everything is; the next step towards the goal is: ${cmd}.\n<action>${cmd}</action>`;
  }

  reflect(steps: TrajectoryStep[]): string {
    const house = this.env.household;
    const wasted = steps.filter((s) => s.observation.startsWith(NOTHING_HAPPENS)).length;
    const reasons: string[] = [];
    if (steps.length === 0) reasons.push('I took no action.');
    else reasons.push(`I used ${steps.length} action(s) without completing the task.`);
    if (wasted > 0) reasons.push(`${wasted} of them were not admissible and did nothing.`);
    const plan = expertPlan(house);
    const wrong = reasons.join(' ');
    return `Looking back: ${wrong}\n` + `<remark>What went wrong: ${wrong} Plan for the next trial (${plan.length} actions): ${plan.join(', ')}.</remark>`;
  }
}
