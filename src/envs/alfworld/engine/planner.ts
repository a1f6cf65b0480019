// A planner over the engine's own states: A* on the grounded operators with the additive heuristic (h_add, the cost
// of reaching the goal's atoms one by one in the relaxed task, where nothing is ever deleted). It is not optimal (h_add
// overestimates), but on ALFWorld's tasks it finds short plans in a few hundred expansions. It serves the expert
// wherever a game's walkthrough does not apply: a state other than the initial one, or a generated game.

import type { GroundTask, Operator } from './ground.js';
import { goalHolds, literalsHold, successor } from './ground.js';

/** h_add of a state: the relaxed cost of the cheapest goal disjunct (Infinity when the relaxed task cannot reach it). */
export function additiveHeuristic(task: GroundTask, state: Uint8Array): number {
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
  for (let changed = true; changed;) {
    changed = false;
    for (const op of relevantOperators(task)) {
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
}

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
  const relevant = new Uint8Array(task.atoms.length);
  for (const d of task.goalDisjuncts) for (const l of d) relevant[l.atom] = 1;
  const chosen = new Uint8Array(task.operators.length);
  for (let changed = true; changed;) {
    changed = false;
    task.operators.forEach((op, i) => {
      if (chosen[i] === 1 || !op.effects.some((e) => relevant[e.atom] === 1)) return;
      chosen[i] = 1;
      changed = true;
      for (const l of op.pre) relevant[l.atom] = 1;
      for (const e of op.effects) for (const l of e.condition) relevant[l.atom] = 1;
    });
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
  const open = new OpenList();
  const bestG = new Map<string, number>();
  open.push({ state: start, g: 0, h: additiveHeuristic(task, start), parent: null, op: null });
  bestG.set(stateKey(start), 0);
  let expansions = 0;
  while (open.size > 0 && expansions < maxExpansions) {
    const node = open.pop();
    if (node.g > (bestG.get(stateKey(node.state)) ?? Infinity)) continue;
    if (goalHolds(task, node.state)) {
      const plan: Operator[] = [];
      for (let n: Node | null = node; n !== null && n.op !== null; n = n.parent) plan.push(n.op);
      return plan.reverse();
    }
    expansions++;
    const seenNames = new Set<string>();
    for (const op of relevantOperators(task)) {
      if (seenNames.has(op.name) || !literalsHold(op.pre, node.state)) continue;
      seenNames.add(op.name);
      const next = successor(op, node.state);
      const key = stateKey(next);
      const g = node.g + 1;
      if (g >= (bestG.get(key) ?? Infinity)) continue;
      bestG.set(key, g);
      const h = additiveHeuristic(task, next);
      if (h === Infinity) continue;
      open.push({ state: next, g, h, parent: node, op });
    }
  }
  return null;
}
