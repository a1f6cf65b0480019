// A planner over the engine's own states: A* on the grounded operators with the additive heuristic (h_add, the cost
// of reaching the goal's atoms one by one in the relaxed task, where nothing is ever deleted). It is not optimal (h_add
// overestimates), but on ALFWorld's tasks it finds short plans in a few hundred expansions. It serves the expert
// wherever a game's walkthrough does not apply: a state other than the initial one, or a generated game.
// The search is bounded in expansions and in work (operators looked at, by the search and the heuristic together), so
// a game with many operators gives up (no plan) instead of holding the event loop.

import type { GroundTask, Operator } from './ground.js';
import { goalHolds, literalsHold, successor } from './ground.js';

/** Work done (operators looked at, and atoms of states copied or keyed) and its limit. */
interface Work {
  steps: number;
  limit: number;
}

/**
 * h_add of a state: the relaxed cost of the cheapest goal disjunct (Infinity when the relaxed task cannot reach it).
 * `work` counts the operators looked at; the fixpoint stops early (Infinity) once it passes its limit.
 */
export function additiveHeuristic(task: GroundTask, state: Uint8Array, work: Work = { steps: 0, limit: Infinity }): number {
  work.steps += task.atoms.length;
  const cost = new Float64Array(task.atoms.length).fill(Infinity);
  for (let i = 0; i < state.length; i++) if (state[i] === 1) cost[i] = 0;
  const preCost = (op: Operator): number => {
    let sum = 0;
    for (const l of op.pre) {
      if (l.negated) continue;
      sum += cost[l.atom];
      if (sum === Infinity) return sum;
    }
    return sum;
  };
  const ops = relevantOperators(task);
  for (let changed = true; changed;) {
    changed = false;
    work.steps += ops.length;
    if (work.steps > work.limit) return Infinity;
    for (const op of ops) {
      const base = preCost(op);
      if (base === Infinity) continue;
      for (const e of op.effects) {
        if (e.negated) continue;
        let c = base + 1;
        for (const l of e.condition) if (!l.negated) c += cost[l.atom];
        if (c < cost[e.atom]) {
          cost[e.atom] = c;
          changed = true;
        }
      }
    }
  }
  let best = Infinity;
  for (const d of task.goalDisjuncts) {
    let sum = 0;
    for (const l of d) {
      if (l.negated) {
        if (state[l.atom] === 1) sum += 1; // a true atom the goal wants false: at least one step
        continue;
      }
      sum += cost[l.atom];
    }
    if (sum < best) best = sum;
  }
  return best;
}

export interface PlanOptions {
  /** States expanded before giving up (default 20,000). */
  maxExpansions?: number;
  /** Work (operators looked at by the search and the heuristic, atoms of states copied) before giving up (default MAX_PLAN_STEPS). */
  maxSteps?: number;
  /** Filled with the work done (operators looked at). */
  stats?: { steps: number };
}

/** The default bound on a search's work (see PlanOptions.maxSteps). */
export const MAX_PLAN_STEPS = 50_000_000;

interface Node {
  state: Uint8Array;
  g: number;
  h: number;
  parent: Node | null;
  op: Operator | null;
}

/** A binary heap ordered by f = g + h, then by h, then by insertion. */
class OpenList {
  private items: Array<{ node: Node; order: number }> = [];
  private counter = 0;

  get size(): number {
    return this.items.length;
  }

  push(node: Node): void {
    this.items.push({ node, order: this.counter++ });
    let i = this.items.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.less(this.items[p], this.items[i])) break;
      [this.items[p], this.items[i]] = [this.items[i], this.items[p]];
      i = p;
    }
  }

  pop(): Node {
    const top = this.items[0];
    const last = this.items.pop()!;
    if (this.items.length > 0) {
      this.items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.items.length && this.less(this.items[l], this.items[m])) m = l;
        if (r < this.items.length && this.less(this.items[r], this.items[m])) m = r;
        if (m === i) break;
        [this.items[m], this.items[i]] = [this.items[i], this.items[m]];
        i = m;
      }
    }
    return top.node;
  }

  private less(a: { node: Node; order: number }, b: { node: Node; order: number }): boolean {
    const fa = a.node.g + a.node.h;
    const fb = b.node.g + b.node.h;
    if (fa !== fb) return fa < fb;
    if (a.node.h !== b.node.h) return a.node.h < b.node.h;
    return a.order < b.order;
  }
}

const relevantCache = new WeakMap<GroundTask, Operator[]>();

/**
 * Operators that can matter for the goal: those changing an atom the goal or a relevant operator's condition reads
 * (backward closure). The rest (look, examine, inventory, help: they only mark things checked) are never planned.
 */
export function relevantOperators(task: GroundTask): Operator[] {
  let ops = relevantCache.get(task);
  if (ops !== undefined) return ops;
  // A worklist over atoms: each atom made relevant once, each operator chosen once (linear in the task's size).
  const byEffect = new Map<number, number[]>();
  task.operators.forEach((op, i) => {
    for (const e of op.effects) {
      let list = byEffect.get(e.atom);
      if (!list) byEffect.set(e.atom, (list = []));
      list.push(i);
    }
  });
  const relevant = new Uint8Array(task.atoms.length);
  const pending: number[] = [];
  const mark = (atom: number) => {
    if (relevant[atom] === 1) return;
    relevant[atom] = 1;
    pending.push(atom);
  };
  for (const d of task.goalDisjuncts) for (const l of d) mark(l.atom);
  const chosen = new Uint8Array(task.operators.length);
  while (pending.length > 0) {
    for (const i of byEffect.get(pending.pop()!) ?? []) {
      if (chosen[i] === 1) continue;
      chosen[i] = 1;
      const op = task.operators[i];
      for (const l of op.pre) mark(l.atom);
      for (const e of op.effects) for (const l of e.condition) mark(l.atom);
    }
  }
  ops = task.operators.filter((_, i) => chosen[i] === 1);
  relevantCache.set(task, ops);
  return ops;
}

const stateKey = (s: Uint8Array): string => {
  let key = '';
  for (let i = 0; i < s.length; i++) if (s[i] === 1) key += `${i},`;
  return key;
};

/** Operators from `start` to a goal state, [] when the goal holds already, null when none is found in the budget. */
export function planOperators(task: GroundTask, start: Uint8Array, options: PlanOptions = {}): Operator[] | null {
  if (goalHolds(task, start)) return [];
  const maxExpansions = options.maxExpansions ?? 20_000;
  const work: Work = { steps: 0, limit: options.maxSteps ?? MAX_PLAN_STEPS };
  try {
    return search(task, start, maxExpansions, work);
  } finally {
    if (options.stats) options.stats.steps = work.steps;
  }
}

function search(task: GroundTask, start: Uint8Array, maxExpansions: number, work: Work): Operator[] | null {
  const open = new OpenList();
  const bestG = new Map<string, number>();
  open.push({ state: start, g: 0, h: additiveHeuristic(task, start, work), parent: null, op: null });
  bestG.set(stateKey(start), 0);
  let expansions = 0;
  while (open.size > 0 && expansions < maxExpansions && work.steps <= work.limit) {
    const node = open.pop();
    if (node.g > (bestG.get(stateKey(node.state)) ?? Infinity)) continue;
    if (goalHolds(task, node.state)) {
      const plan: Operator[] = [];
      for (let n: Node | null = node; n !== null && n.op !== null; n = n.parent) plan.push(n.op);
      return plan.reverse();
    }
    expansions++;
    const seenNames = new Set<string>();
    const ops = relevantOperators(task);
    work.steps += ops.length;
    for (const op of ops) {
      if (seenNames.has(op.name) || !literalsHold(op.pre, node.state)) continue;
      seenNames.add(op.name);
      work.steps += node.state.length;
      const next = successor(op, node.state);
      const key = stateKey(next);
      const g = node.g + 1;
      if (g >= (bestG.get(key) ?? Infinity)) continue;
      bestG.set(key, g);
      const h = additiveHeuristic(task, next, work);
      if (h === Infinity) continue;
      open.push({ state: next, g, h, parent: node, op });
    }
  }
  return null;
}
