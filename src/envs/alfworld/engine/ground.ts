// Grounding a PDDL task as Fast Downward's translator does for TextWorld (invariant synthesis off: one binary
// variable per fluent atom, no fact filtering), reduced to what decides play. scripts/alfworld-fd-check.ts compares
// the result with the translator's (aibasel/downward src/translate) along a walk: operator count, applicable operators,
// effects and goal. The rules:
//   * an action's precondition in disjunctive normal form, one operator per disjunct under the action's name, the
//     variables of `exists` becoming extra parameters that the operator's name leaves out;
//   * static predicates (in no action's effect) evaluated once on `:init`; fluent atoms are those a relaxed
//     exploration (negative conditions ignored) reaches from `:init`;
//   * effects: add wins over delete; an effect that does not change its atom given the precondition is dropped, a
//     delete of an atom that can never hold is dropped, and an operator left with no effect is removed (so going to
//     the location one stands at is never possible);
//   * conditional effects are evaluated on the state before the operator.
// The result is a list of operators over interned fluent atoms, with the effect list each reports (in the order
// the translator writes it), which TextWorld's fact mirror applies.
// groundTask runs the stages in order: each action's precondition in DNF (Grounder.dnf), effect conditions
// (EffectGrounder), relaxed exploration (exploreRelaxed), operators (instantiateOperators, simplifyEffects), the goal
// (groundGoal) and the initial state; fluent atoms are numbered as these stages first name them (FluentAtoms).
// Every stage spends from one WorkBudget per game (limits.ts: MAX_GROUNDING_STEPS), roughly one unit per item made
// or tried, so a file that asks for an exponential or unbounded grounding stops with E_ENV naming the game and the
// limit; a disjunct's literals and an action's variables are bounded too (the binding search recurses over them).

import { LamerError } from '../../../errors.js';
import { HELD, MAX_ACTION_VARIABLES, MAX_CONDITION_LITERALS, MAX_GROUNDING_STEPS, WorkBudget } from './limits.js';
import { checkProblem, type Domain, type EffectLiteral, type Formula, type Problem, type TypedName } from './pddl.js';

/** A literal of a grounded operator: a fluent atom id, true or false. */
export interface GroundLiteral {
  atom: number;
  negated: boolean;
}

export interface GroundEffect {
  /** Fluent literals that must hold before the operator for the effect to happen. */
  condition: GroundLiteral[];
  atom: number;
  /** true: the atom becomes false. */
  negated: boolean;
}

export interface Operator {
  /** Lowercased action name. */
  action: string;
  /** Values of the action's declared parameters (the `exists` variables are not part of the name). */
  args: string[];
  /** `action arg1 arg2 ...`: operators of one action's disjuncts share it. */
  name: string;
  pre: GroundLiteral[];
  effects: GroundEffect[];
}

export interface GroundTask {
  objects: TypedName[];
  /** Object name to its declared type. */
  typeOf: Map<string, string>;
  /** Type to its parent (the domain's declared types; the parser refuses objects of any other type, and cycles). */
  parents: Map<string, string | null>;
  /** Type names in declaration order, the root first. */
  typeOrder: string[];
  /** Atom key `pred(a,b)` to fluent atom id. */
  atomIds: Map<string, number>;
  atoms: Array<{ pred: string; args: string[] }>;
  /** Keys of the atoms of static predicates that hold (they never change). */
  staticTrue: Set<string>;
  fluentPredicates: Set<string>;
  /** Fluent atom ids that hold initially. */
  initial: number[];
  operators: Operator[];
  /** Every atom of `:init`, in file order, as TextWorld's mirror starts from them. */
  init: Array<{ pred: string; args: string[] }>;
  goal: Formula;
  /** The goal as ground disjuncts of fluent literals (static parts evaluated): it holds when one of them does. */
  goalDisjuncts: GroundLiteral[][];
  /** Work units grounding took (of MAX_GROUNDING_STEPS). */
  steps: number;
}

export const atomKey = (pred: string, args: readonly string[]): string => `${pred}(${args.join(',')})`;

/** A literal of a disjunct: an atom or an equality, possibly negated. */
type Lit = { kind: 'atom'; pred: string; args: string[]; negated: boolean } | { kind: 'eq'; args: [string, string]; negated: boolean };

interface Conj {
  vars: TypedName[];
  lits: Lit[];
}

/** A formula with variables replaced (one budget unit per node made). */
function substitute(f: Formula, map: ReadonlyMap<string, string>, budget: WorkBudget): Formula {
  budget.spend(HELD);
  const sub = (a: string) => map.get(a) ?? a;
  switch (f.kind) {
    case 'true':
      return f;
    case 'atom':
      return { kind: 'atom', pred: f.pred, args: f.args.map(sub) };
    case 'eq':
      return { kind: 'eq', args: [sub(f.args[0]), sub(f.args[1])] };
    case 'not':
      return { kind: 'not', body: substitute(f.body, map, budget) };
    case 'and':
    case 'or':
      return { kind: f.kind, parts: f.parts.map((p) => substitute(p, map, budget)) };
    case 'exists':
    case 'forall': {
      const inner = new Map(map);
      for (const v of f.vars) inner.delete(v.name);
      return { kind: f.kind, vars: f.vars, body: substitute(f.body, inner, budget) };
    }
  }
}

class Grounder {
  readonly parents: Map<string, string | null>;
  readonly typeOf = new Map<string, string>();
  readonly objectsByType = new Map<string, string[]>();
  private fresh = 0;

  constructor(
    readonly domain: Domain,
    readonly objects: TypedName[],
    readonly budget: WorkBudget,
  ) {
    this.parents = new Map(domain.types);
    for (const o of objects) this.typeOf.set(o.name, o.type);
  }

  /** Is `type` the same as `ancestor` or below it? One budget unit per level walked (the parser refuses cycles). */
  isSubtype(type: string, ancestor: string): boolean {
    for (let t: string | null | undefined = type; t; t = this.parents.get(t)) {
      this.budget.spend();
      if (t === ancestor) return true;
    }
    return false;
  }

  /** Objects of a type or below it, in declaration order (none for an undeclared type such as `location,`). */
  ofType(type: string): string[] {
    let list = this.objectsByType.get(type);
    if (list === undefined) {
      list = this.objects.filter((o) => this.isSubtype(o.type, type)).map((o) => o.name);
      this.objectsByType.set(type, list);
    }
    return list;
  }

  /** Disjunctive normal form with negations on literals, `exists` variables renamed apart, `forall` expanded. */
  dnf(f: Formula, negated = false): Conj[] {
    switch (f.kind) {
      case 'true':
        return negated ? [] : [{ vars: [], lits: [] }];
      case 'atom':
        return [{ vars: [], lits: [{ kind: 'atom', pred: f.pred, args: f.args, negated }] }];
      case 'eq':
        return [{ vars: [], lits: [{ kind: 'eq', args: f.args, negated }] }];
      case 'not':
        return this.dnf(f.body, !negated);
      case 'and':
      case 'or': {
        const conjunctive = (f.kind === 'and') !== negated;
        const parts = f.parts.map((p) => this.dnf(p, negated));
        if (!conjunctive) {
          this.budget.spend(parts.length);
          return parts.flat();
        }
        // The disjuncts of `acc` are made here, so a part of one disjunct (the common case) extends them in place.
        let acc: Conj[] = [{ vars: [], lits: [] }];
        for (const part of parts) {
          if (part.length === 1) {
            const b = part[0];
            for (const a of acc) {
              this.budget.spend(1 + b.vars.length + b.lits.length);
              for (const v of b.vars) a.vars.push(v);
              for (const l of b.lits) a.lits.push(l);
            }
            continue;
          }
          const next: Conj[] = [];
          for (const a of acc) {
            for (const b of part) {
              // Each disjunct made costs its size: the budget bounds the memory of an exponential expansion too.
              this.budget.spend(HELD * (1 + a.vars.length + b.vars.length + a.lits.length + b.lits.length));
              next.push({ vars: [...a.vars, ...b.vars], lits: [...a.lits, ...b.lits] });
            }
          }
          acc = next;
        }
        return acc;
      }
      case 'exists':
      case 'forall': {
        if ((f.kind === 'exists') !== negated) {
          // Renamed apart: two `exists` of one action may use the same variable name.
          const map = new Map<string, string>();
          const vars = f.vars.map((v) => {
            const name = `${v.name}#${this.fresh++}`;
            map.set(v.name, name);
            return { name, type: v.type };
          });
          return this.dnf(substitute(f.body, map, this.budget), negated).map((c) => {
            this.budget.spend(HELD * (1 + vars.length + c.vars.length));
            return { vars: [...vars, ...c.vars], lits: c.lits };
          });
        }
        // A universal condition is the conjunction of its instances over the objects of its types.
        let assignments: Array<Map<string, string>> = [new Map()];
        for (const v of f.vars) {
          const next: Array<Map<string, string>> = [];
          for (const a of assignments) {
            for (const o of this.ofType(v.type)) {
              this.budget.spend(HELD * (1 + a.size));
              next.push(new Map([...a, [v.name, o]]));
            }
          }
          assignments = next;
        }
        const grounded = assignments.map((a) => substitute(f.body, a, this.budget));
        return this.dnf({ kind: 'and', parts: grounded }, negated);
      }
    }
  }
}

interface Binding {
  [variable: string]: string;
}

/** Refuses a disjunct too large for the binding search, which recurses once per positive literal and variable. */
function checkConjSize(conj: Conj, where: string, what: string): void {
  if (conj.lits.length > MAX_CONDITION_LITERALS) {
    throw new LamerError(
      'E_ENV',
      `${where}: ${what} has a disjunct of ${conj.lits.length} literals, more than the engine's limit of ${MAX_CONDITION_LITERALS}`,
    );
  }
  if (conj.vars.length > MAX_ACTION_VARIABLES) {
    throw new LamerError('E_ENV', `${where}: ${what} has ${conj.vars.length} variables, more than the engine's limit of ${MAX_ACTION_VARIABLES}`);
  }
}

/**
 * Every binding of `vars` (typed) that makes the positive atom literals true in `holds`, with equalities respected;
 * variables left unbound by the atoms range over their type's objects. One budget unit per candidate tried, and a
 * binding found costs its size.
 */
function bindings(g: Grounder, vars: readonly TypedName[], lits: readonly Lit[], index: AtomIndex, fixed: Binding): Binding[] {
  const budget = g.budget;
  const varType = new Map(vars.map((v) => [v.name, v.type]));
  const positive = lits.filter((l): l is Extract<Lit, { kind: 'atom' }> => l.kind === 'atom' && !l.negated);
  const out: Binding[] = [];
  const binding: Binding = { ...fixed };
  const valueOf = (term: string): string | undefined => (varType.has(term) ? binding[term] : term);
  const remaining = positive.slice();
  const step = (): void => {
    if (remaining.length === 0) {
      const unbound = vars.filter((v) => binding[v.name] === undefined);
      const fill = (i: number): void => {
        if (i === unbound.length) {
          budget.spend(HELD * (1 + vars.length));
          out.push({ ...binding });
          return;
        }
        for (const o of g.ofType(unbound[i].type)) {
          budget.spend();
          binding[unbound[i].name] = o;
          fill(i + 1);
        }
        delete binding[unbound[i].name];
      };
      fill(0);
      return;
    }
    // The literal with the most arguments already known narrows the search most.
    budget.spend(remaining.length);
    let best = 0;
    let bestKnown = -1;
    for (let i = 0; i < remaining.length; i++) {
      const known = remaining[i].args.filter((a) => valueOf(a) !== undefined).length;
      if (known > bestKnown) {
        best = i;
        bestKnown = known;
      }
    }
    const lit = remaining.splice(best, 1)[0];
    for (const tuple of index.candidates(lit.pred, lit.args.map(valueOf))) {
      budget.spend();
      const assigned: string[] = [];
      let ok = true;
      for (let k = 0; k < lit.args.length && ok; k++) {
        const term = lit.args[k];
        const value = tuple[k];
        const current = valueOf(term);
        if (current !== undefined) {
          ok = current === value;
        } else {
          const type = varType.get(term)!;
          const objectType = g.typeOf.get(value);
          if (objectType === undefined || !g.isSubtype(objectType, type)) ok = false;
          else {
            binding[term] = value;
            assigned.push(term);
          }
        }
      }
      if (ok) step();
      for (const v of assigned) delete binding[v];
    }
    remaining.splice(best, 0, lit);
  };
  step();
  return out;
}

/** Atoms by predicate, with a lookup on the first known argument. */
class AtomIndex {
  private byPred = new Map<string, string[][]>();
  private byArg = new Map<string, string[][]>();
  private keys = new Set<string>();

  add(pred: string, args: string[]): boolean {
    const key = atomKey(pred, args);
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    let list = this.byPred.get(pred);
    if (!list) this.byPred.set(pred, (list = []));
    list.push(args);
    args.forEach((a, i) => {
      const k = `${pred}/${i}/${a}`;
      let l = this.byArg.get(k);
      if (!l) this.byArg.set(k, (l = []));
      l.push(args);
    });
    return true;
  }

  has(pred: string, args: readonly string[]): boolean {
    return this.keys.has(atomKey(pred, args));
  }

  candidates(pred: string, known: ReadonlyArray<string | undefined>): readonly string[][] {
    for (let i = 0; i < known.length; i++) {
      if (known[i] !== undefined) return this.byArg.get(`${pred}/${i}/${known[i]}`) ?? [];
    }
    return this.byPred.get(pred) ?? [];
  }
}

function evalTerm(term: string, b: Binding): string {
  return b[term] ?? term;
}

/** What every stage of grounding one task reads: the objects and types, the fluent predicates and `:init`. */
interface TaskContext {
  g: Grounder;
  fluentPredicates: Set<string>;
  initKeys: Set<string>;
  /** Names the game in errors. */
  where: string;
}

/** An action with its precondition's disjuncts, each with the action's parameters and its `exists` variables. */
interface Schema {
  action: Domain['actions'][number];
  conjs: Conj[];
}

/** One instance of an effect under a binding: its condition's disjunct (ground) and its atom. */
interface EffectInstance {
  cond: Conj;
  pred: string;
  args: string[];
}

/**
 * Grounds a domain and problem (see the file comment) after checking the problem's declarations against the domain
 * (checkProblem). `where` names the game in errors; `limit` is the work budget (MAX_GROUNDING_STEPS).
 */
export function groundTask(domain: Domain, problem: Problem, where: string, limit = MAX_GROUNDING_STEPS): GroundTask {
  checkProblem(domain, problem, `${where} pddl_problem`);
  const objects = [...domain.constants, ...problem.objects];
  const g = new Grounder(domain, objects, new WorkBudget(limit, where, 'grounding the PDDL task'));
  const fluentPredicates = new Set<string>();
  for (const a of domain.actions) for (const e of a.effects) fluentPredicates.add(e.pred);
  const ctx: TaskContext = { g, fluentPredicates, initKeys: new Set(problem.init.map((f) => atomKey(f.pred, f.args))), where };

  const schemas = domain.actions.map((a): Schema => {
    const conjs = g.dnf(a.precondition).map((c) => ({ vars: [...a.parameters, ...c.vars], lits: c.lits }));
    for (const c of conjs) checkConjSize(c, where, `the precondition of ${a.name}`);
    return { action: a, conjs };
  });
  const effects = new EffectGrounder(ctx, domain);
  const { reachable, lastBindings } = exploreRelaxed(ctx, problem, schemas, effects);
  // Fluent atoms get their ids in the order the stages below first name them: operators, goal, `:init`.
  const atoms = new FluentAtoms(ctx, reachable);
  const operators = instantiateOperators(schemas, lastBindings, effects, atoms);
  const goalDisjuncts = groundGoal(ctx, problem.goal, reachable, atoms);

  const initial: number[] = [];
  const initialSeen = new Set<number>();
  for (const f of problem.init) {
    const id = atoms.id(f.pred, f.args);
    if (id !== undefined && !initialSeen.has(id)) {
      initialSeen.add(id);
      initial.push(id);
    }
  }
  const staticTrue = new Set<string>();
  for (const f of problem.init) if (!fluentPredicates.has(f.pred)) staticTrue.add(atomKey(f.pred, f.args));

  return {
    objects,
    typeOf: g.typeOf,
    parents: g.parents,
    typeOrder: domain.typeOrder,
    atomIds: atoms.ids,
    atoms: atoms.list,
    staticTrue,
    fluentPredicates,
    initial,
    operators,
    init: problem.init,
    goal: problem.goal,
    goalDisjuncts,
    steps: g.budget.spent,
  };
}

/** Whether a static atom holds (it is in `:init`). */
function staticHolds(ctx: TaskContext, pred: string, args: string[]): boolean {
  return ctx.initKeys.has(atomKey(pred, args));
}

/** Whether a disjunct's non-fluent literals and equalities hold for a binding. */
function staticOk(ctx: TaskContext, lits: readonly Lit[], b: Binding): boolean {
  return lits.every((l) => {
    if (l.kind === 'eq') return (evalTerm(l.args[0], b) === evalTerm(l.args[1], b)) !== l.negated;
    if (ctx.fluentPredicates.has(l.pred)) return true;
    return (
      staticHolds(
        ctx,
        l.pred,
        l.args.map((a) => evalTerm(a, b)),
      ) !== l.negated
    );
  });
}

/** The effects of the domain's actions: their conditions in DNF (once per effect), instantiated per binding. */
class EffectGrounder {
  /** Most effects are unconditional: one empty disjunct. */
  private readonly dnf = new Map<EffectLiteral, Conj[]>();

  constructor(
    private readonly ctx: TaskContext,
    domain: Domain,
  ) {
    for (const a of domain.actions) {
      for (const e of a.effects) {
        const conds = ctx.g.dnf(e.condition);
        if (conds.some((c) => c.vars.length > 0)) throw new LamerError('E_ENV', `${ctx.where}: an 'exists' inside a 'when' condition is not supported`);
        for (const c of conds) checkConjSize(c, ctx.where, `an effect condition of ${a.name}`);
        if (e.vars.length > MAX_ACTION_VARIABLES) {
          throw new LamerError(
            'E_ENV',
            `${ctx.where}: an effect of ${a.name} has ${e.vars.length} forall variables, more than the engine's limit of ${MAX_ACTION_VARIABLES}`,
          );
        }
        this.dnf.set(e, conds);
      }
    }
  }

  /** The instances of an effect under a binding: one per value of its `forall` variables and disjunct of its condition. */
  instances(effect: EffectLiteral, b: Binding): EffectInstance[] {
    const budget = this.ctx.g.budget;
    const conds = this.dnf.get(effect)!;
    budget.spend(1 + effect.args.length);
    if (effect.vars.length === 0 && conds.length === 1 && conds[0].lits.length === 0) {
      return [{ cond: conds[0], pred: effect.pred, args: effect.args.map((t) => evalTerm(t, b)) }];
    }
    let assignments: Binding[] = [b];
    for (const v of effect.vars) {
      const next: Binding[] = [];
      for (const a of assignments) {
        for (const o of this.ctx.g.ofType(v.type)) {
          budget.spend(HELD * (1 + effect.vars.length));
          next.push({ ...a, [v.name]: o });
        }
      }
      assignments = next;
    }
    const out: EffectInstance[] = [];
    for (const a of assignments) {
      for (const cond of conds) {
        budget.spend(HELD * (1 + cond.lits.length + effect.args.length));
        const lits = cond.lits.map((l) =>
          l.kind === 'eq'
            ? { ...l, args: [evalTerm(l.args[0], a), evalTerm(l.args[1], a)] as [string, string] }
            : { ...l, args: l.args.map((t) => evalTerm(t, a)) },
        );
        out.push({ cond: { vars: [], lits }, pred: effect.pred, args: effect.args.map((t) => evalTerm(t, a)) });
      }
    }
    return out;
  }
}

/**
 * Relaxed exploration: operators whose positive conditions are reachable make their added atoms reachable. A
 * disjunct is enumerated again only when an atom of one of its positive predicates became reachable in the round
 * before (its bindings depend on nothing else), and its last bindings serve the instantiation.
 */
function exploreRelaxed(
  ctx: TaskContext,
  problem: Problem,
  schemas: readonly Schema[],
  effects: EffectGrounder,
): { reachable: AtomIndex; lastBindings: Map<Conj, Binding[]> } {
  const reachable = new AtomIndex();
  for (const f of problem.init) reachable.add(f.pred, f.args);
  const lastBindings = new Map<Conj, Binding[]>();
  const positivePreds = new Map<Conj, Set<string>>();
  for (const { conjs } of schemas) {
    for (const conj of conjs) positivePreds.set(conj, new Set(conj.lits.flatMap((l) => (l.kind === 'atom' && !l.negated ? [l.pred] : []))));
  }
  for (let grown: Set<string> | null = null; grown === null || grown.size > 0;) {
    const added = new Set<string>();
    for (const { action, conjs } of schemas) {
      for (const conj of conjs) {
        if (grown !== null && ![...positivePreds.get(conj)!].some((p) => grown!.has(p))) continue;
        const found = bindings(ctx.g, conj.vars, conj.lits, reachable, {}).filter((b) => {
          ctx.g.budget.spend(conj.lits.length);
          return staticOk(ctx, conj.lits, b);
        });
        lastBindings.set(conj, found);
        for (const b of found) {
          for (const effect of action.effects) {
            if (effect.negated) continue;
            for (const inst of effects.instances(effect, b)) {
              ctx.g.budget.spend(inst.cond.lits.length);
              const condOk = inst.cond.lits.every((l) =>
                l.kind === 'eq' ? (l.args[0] === l.args[1]) !== l.negated : l.negated || reachable.has(l.pred, l.args),
              );
              if (condOk && reachable.add(inst.pred, inst.args)) added.add(inst.pred);
            }
          }
        }
      }
    }
    grown = added;
  }
  return { reachable, lastBindings };
}

/** The fluent atoms that relaxed exploration reached, interned in the order they are first asked for. */
class FluentAtoms {
  readonly ids = new Map<string, number>();
  readonly list: Array<{ pred: string; args: string[] }> = [];

  constructor(
    private readonly ctx: TaskContext,
    private readonly reachable: AtomIndex,
  ) {}

  get budget(): WorkBudget {
    return this.ctx.g.budget;
  }

  /** The id of a fluent atom; undefined for a static or unreachable one. */
  id(pred: string, args: string[]): number | undefined {
    if (!this.ctx.fluentPredicates.has(pred) || !this.reachable.has(pred, args)) return undefined;
    const key = atomKey(pred, args);
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.list.length;
      this.list.push({ pred, args });
      this.ids.set(key, id);
    }
    return id;
  }

  /** Fluent literals of a condition, or null when a static or unreachable part makes it impossible. */
  condition(lits: readonly Lit[], b: Binding): GroundLiteral[] | null {
    this.ctx.g.budget.spend(1 + lits.length);
    const out: GroundLiteral[] = [];
    // Atom id to the polarity asked for: a repeat is dropped, and asking for an atom and its negation can never hold
    // (found only after every literal is read, as the atoms they name are numbered in that order).
    const asked = new Map<number, boolean>();
    let contradiction = false;
    for (const l of lits) {
      if (l.kind === 'eq') {
        if ((evalTerm(l.args[0], b) === evalTerm(l.args[1], b)) === l.negated) return null;
        continue;
      }
      const args = l.args.map((a) => evalTerm(a, b));
      if (!this.ctx.fluentPredicates.has(l.pred)) {
        if (staticHolds(this.ctx, l.pred, args) === l.negated) return null;
        continue;
      }
      const id = this.id(l.pred, args);
      if (id === undefined) {
        if (!l.negated) return null; // can never hold
        continue; // can never hold, so its negation always does
      }
      const before = asked.get(id);
      if (before === undefined) {
        asked.set(id, l.negated);
        out.push({ atom: id, negated: l.negated });
      } else if (before !== l.negated) {
        contradiction = true;
      }
    }
    return contradiction ? null : out;
  }
}

const condKey = (c: readonly GroundLiteral[]) =>
  c
    .map((l) => `${l.negated ? '-' : '+'}${l.atom}`)
    .sort()
    .join(' ');

/** One operator per disjunct and binding that relaxed exploration found, with its precondition and effects. */
function instantiateOperators(schemas: readonly Schema[], lastBindings: ReadonlyMap<Conj, Binding[]>, effects: EffectGrounder, atoms: FluentAtoms): Operator[] {
  const operators: Operator[] = [];
  const seen = new Set<string>();
  for (const { action, conjs } of schemas) {
    for (const conj of conjs) {
      for (const b of lastBindings.get(conj) ?? []) {
        const pre = atoms.condition(conj.lits, b);
        if (pre === null) continue;
        const args = action.parameters.map((p) => b[p.name]);
        const adds: GroundEffect[] = [];
        const dels: GroundEffect[] = [];
        for (const effect of action.effects) {
          for (const inst of effects.instances(effect, b)) {
            const condition = atoms.condition(inst.cond.lits, {});
            if (condition === null) continue;
            const id = atoms.id(inst.pred, inst.args);
            if (id === undefined) continue; // a delete of an atom that can never hold
            (effect.negated ? dels : adds).push({ condition, atom: id, negated: effect.negated });
          }
        }
        // simplifyEffects compares every effect with every other.
        atoms.budget.spend((1 + adds.length + dels.length) * (1 + pre.length + adds.length + dels.length));
        const kept = simplifyEffects(pre, adds, dels);
        if (kept.length === 0) continue; // an operator without effect is removed
        const name = [action.name, ...args].join(' ');
        const key = `${name}|${condKey(pre)}`;
        if (seen.has(key)) continue;
        seen.add(key);
        operators.push({ action: action.name, args, name, pre, effects: kept });
      }
    }
  }
  return operators;
}

/**
 * The effects an operator keeps given its precondition: an add of an atom the precondition already asks for, a
 * delete of one it asks to be false, and an effect whose condition contradicts the precondition change nothing; an
 * add wins over a delete of the same atom; repeats go. Sorted as the translator lists them: by atom, the add first.
 */
function simplifyEffects(pre: readonly GroundLiteral[], adds: readonly GroundEffect[], dels: readonly GroundEffect[]): GroundEffect[] {
  const preHas = (atom: number, negated: boolean) => pre.some((l) => l.atom === atom && l.negated === negated);
  const contradictsPre = (c: readonly GroundLiteral[]) => c.some((l) => preHas(l.atom, !l.negated));
  const effects: GroundEffect[] = [];
  for (const e of adds) {
    if (preHas(e.atom, false) || contradictsPre(e.condition)) continue;
    if (!effects.some((x) => x.atom === e.atom && !x.negated && condKey(x.condition) === condKey(e.condition))) effects.push(e);
  }
  for (const e of dels) {
    // Add wins: the same atom added under the same condition, or unconditionally, cancels the delete.
    if (adds.some((a) => a.atom === e.atom && (a.condition.length === 0 || condKey(a.condition) === condKey(e.condition)))) continue;
    if (preHas(e.atom, true) || contradictsPre(e.condition)) continue;
    // A delete that asks for its atom to be false already changes nothing.
    if (e.condition.some((l) => l.atom === e.atom && l.negated)) continue;
    if (!effects.some((x) => x.atom === e.atom && x.negated && condKey(x.condition) === condKey(e.condition))) effects.push(e);
  }
  return effects.sort((x, y) => x.atom - y.atom || Number(x.negated) - Number(y.negated));
}

/** The goal, grounded like a precondition: its `exists` variables range over what the static facts allow. */
function groundGoal(ctx: TaskContext, goal: Formula, reachable: AtomIndex, atoms: FluentAtoms): GroundLiteral[][] {
  const goalDisjuncts: GroundLiteral[][] = [];
  const goalSeen = new Set<string>();
  for (const conj of ctx.g.dnf(goal)) {
    checkConjSize(conj, ctx.where, 'the goal');
    for (const b of bindings(ctx.g, conj.vars, conj.lits, reachable, {})) {
      const lits = atoms.condition(conj.lits, b);
      if (lits === null) continue;
      const k = condKey(lits);
      if (goalSeen.has(k)) continue;
      goalSeen.add(k);
      goalDisjuncts.push(lits);
    }
  }
  return goalDisjuncts;
}

/** Whether every literal holds in a state (one byte per fluent atom). */
export function literalsHold(lits: readonly GroundLiteral[], state: Uint8Array): boolean {
  for (const l of lits) if ((state[l.atom] === 1) === l.negated) return false;
  return true;
}

/** Whether the goal holds in a state. */
export function goalHolds(task: GroundTask, state: Uint8Array): boolean {
  return task.goalDisjuncts.some((d) => literalsHold(d, state));
}

/** The state after an operator: conditional effects read the state before it, and an add wins over a delete. */
export function successor(op: Operator, state: Uint8Array): Uint8Array {
  const next = state.slice();
  for (const e of op.effects) if (e.negated && state[e.atom] === 1 && literalsHold(e.condition, state)) next[e.atom] = 0;
  for (const e of op.effects) if (!e.negated && literalsHold(e.condition, state)) next[e.atom] = 1;
  return next;
}
