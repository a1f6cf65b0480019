// One `.tw-pddl` game, played by the rules of TextWorld's PDDL backend as read in its code (microsoft/TextWorld:
// textworld/envs/pddl/pddl.py and logic/__init__.py; TextWorld itself has not been run against this engine), with
// ALFWorld's name demangler. Two states are kept, as in TextWorld's code:
//   * the true state (one bit per fluent atom), on which operators are applicable and the goal is evaluated;
//   * the fact mirror the grammar reads: `:init`'s atoms, then, for every effect an applied operator lists (its
//     condition ignored), the literal added and its negation removed, negated literals kept as `not_p` facts. So a
//     taken object leaves `not_inreceptacle(o, r)` behind (what `look` lists as on the floor), and a conditional
//     effect reaches the mirror whether or not it happened.
// Admissible commands: each applicable operator once per name, its template derived with its parameters bound and
// stripped of surrounding whitespace, sorted by code point without repeats. A received command is stripped and must
// equal one of them; anything else gets "Nothing happens.". TextWorld's PddlEnv (textworld/envs/pddl/pddl.py) strips
// the received command too but lists the derived texts unstripped, so there a command ending in a name the demangler
// gives a trailing space (an id without `_bar_`: `Desk` becomes `desk `) is listed as `go to desk ` and cannot be
// executed; here it is listed as `go to desk`, and names inside observations keep ALFWorld's trailing space.

import { LamerError } from '../../../errors.js';
import { demangleNames } from './demangle.js';
import { Grammar, compareFacts, type ActionText, type Bound, type DeriveContext, type Entity, type FactView } from './grammar.js';
import { goalHolds, groundTask, literalsHold, successor, type GroundTask, type Operator } from './ground.js';
import { MAX_DERIVATION_STEPS, WorkBudget } from './limits.js';
import { parseDomain, parseProblem } from './pddl.js';

export const NOTHING_HAPPENS = 'Nothing happens.';

/** The JSON of a `game.tw-pddl` file. */
export interface GameFile {
  pddl_domain: string;
  pddl_problem: string;
  grammar: string;
  solvable?: boolean;
  walkthrough?: string[] | null;
}

/** Reads and checks the fields of a game file's JSON. */
export function readGameFile(value: unknown, where: string): GameFile {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new LamerError('E_ENV', `${where}: expected a JSON object with pddl_domain, pddl_problem and grammar`);
  const v = value as Record<string, unknown>;
  for (const field of ['pddl_domain', 'pddl_problem', 'grammar'] as const) {
    if (typeof v[field] !== 'string' || (v[field] as string).length === 0) throw new LamerError('E_ENV', `${where}: field ${field} must be a non-empty string`);
  }
  if (v.walkthrough !== undefined && v.walkthrough !== null && (!Array.isArray(v.walkthrough) || v.walkthrough.some((c) => typeof c !== 'string'))) {
    throw new LamerError('E_ENV', `${where}: field walkthrough must be a list of commands or null`);
  }
  if (v.solvable !== undefined && typeof v.solvable !== 'boolean') throw new LamerError('E_ENV', `${where}: field solvable must be true or false`);
  return v as unknown as GameFile;
}

/** The parsed, grounded form of a game, shared by every play of it. */
export class GameLogic {
  readonly task: GroundTask;
  readonly grammar: Grammar;
  readonly entities: Map<string, Entity>;
  readonly walkthrough: readonly string[] | null;
  readonly children = new Map<string, string[]>();
  private readonly actionTexts = new Map<string, ActionText>();
  private readonly params = new Map<string, Array<{ name: string; type: string }>>();

  constructor(
    readonly file: GameFile,
    readonly where: string,
  ) {
    const domain = parseDomain(file.pddl_domain, `${where} pddl_domain`);
    const problem = parseProblem(file.pddl_problem, `${where} pddl_problem`);
    this.task = groundTask(domain, problem, where);
    this.grammar = new Grammar(file.grammar, `${where} grammar`);
    this.walkthrough = file.walkthrough ?? null;
    for (const a of domain.actions) {
      this.params.set(
        a.name,
        a.parameters.map((p) => ({ name: p.name.replace(/^\?/, ''), type: p.type })),
      );
    }
    for (const op of this.task.operators) {
      if (this.actionTexts.has(op.action)) continue;
      const text = this.grammar.actions.get(op.action);
      if (!text) throw new LamerError('E_ENV', `${where}: the domain's action ${op.action} has no 'action ${op.action} { template ... }' in the grammar`);
      this.actionTexts.set(op.action, text);
    }
    for (const [type, parent] of this.task.parents) {
      if (parent === null) continue;
      let list = this.children.get(parent);
      if (!list) this.children.set(parent, (list = []));
      list.push(type);
    }
    for (const list of this.children.values()) list.sort();
    // The entities are the arguments of the facts TextWorld starts from.
    const ids = new Set<string>();
    for (const f of this.task.init) for (const a of f.args) ids.add(a);
    const names = demangleNames(ids);
    this.entities = new Map();
    for (const id of ids) {
      this.entities.set(id, { id, type: this.task.typeOf.get(id) ?? 'object', name: names.get(id)!, definite: 'the', indefinite: 'a' });
    }
  }

  actionText(op: Operator): ActionText {
    return this.actionTexts.get(op.action)!;
  }

  /** The context an operator's template and feedback are derived in: its declared parameters bound. */
  context(op: Operator): DeriveContext {
    const variables = new Map<string, Entity>();
    const mapping = new Map<string, Bound>();
    const params = this.params.get(op.action) ?? [];
    params.forEach((p, k) => {
      const id = op.args[k];
      const entity = this.entities.get(id);
      if (entity === undefined) throw new LamerError('E_ENV', `${this.where}: ${id} (a parameter of ${op.name}) is in no fact of :init, so it has no name`);
      variables.set(p.name, entity);
      mapping.set(`${p.name}:${p.type}`, { name: id, type: p.type });
    });
    return { variables, mapping };
  }
}

/** The fact mirror (see the file comment) as the grammar reads it. */
class FactMirror implements FactView {
  private readonly byPred = new Map<string, Map<string, string[]>>();
  private readonly sorted = new Map<string, string[][]>();

  constructor(private readonly logic: GameLogic) {}

  copy(): FactMirror {
    const m = new FactMirror(this.logic);
    for (const [p, facts] of this.byPred) m.byPred.set(p, new Map(facts));
    return m;
  }

  add(pred: string, args: string[]): void {
    let facts = this.byPred.get(pred);
    if (!facts) this.byPred.set(pred, (facts = new Map()));
    const k = args.join(',');
    if (facts.has(k)) return;
    facts.set(k, args);
    this.sorted.delete(pred);
  }

  remove(pred: string, args: string[]): void {
    if (this.byPred.get(pred)?.delete(args.join(','))) this.sorted.delete(pred);
  }

  facts(pred: string): ReadonlyArray<readonly string[]> {
    let list = this.sorted.get(pred);
    if (list === undefined) {
      list = [...(this.byPred.get(pred)?.values() ?? [])].sort((a, b) => compareFacts(this, a, b));
      this.sorted.set(pred, list);
    }
    return list;
  }

  /** Every fact, as `pred(a, b)` text, sorted (for tests and debugging). */
  all(): string[] {
    const out: string[] = [];
    for (const [p, facts] of this.byPred) for (const args of facts.values()) out.push(`${p}(${args.join(', ')})`);
    return out.sort();
  }

  typeOf(id: string): string {
    return this.logic.task.typeOf.get(id) ?? 'object';
  }

  children(type: string): readonly string[] {
    return this.logic.children.get(type) ?? [];
  }

  hasType(type: string): boolean {
    return this.logic.task.parents.has(type);
  }

  entity(id: string): Entity {
    const e = this.logic.entities.get(id);
    if (e === undefined) throw new LamerError('E_ENV', `${this.logic.where}: ${id} is in no fact of :init, so it has no name`);
    return e;
  }
}

/** One play of a game: reset, admissible commands, step. */
export class TwPddlGame {
  private state: Uint8Array;
  private mirror: FactMirror;
  private valid: Array<{ command: string; op: Operator }> | null = null;

  constructor(readonly logic: GameLogic) {
    this.state = new Uint8Array(0);
    this.mirror = new FactMirror(logic);
    this.start();
  }

  static fromFile(file: GameFile, where: string): TwPddlGame {
    return new TwPddlGame(new GameLogic(file, where));
  }

  /** Back to the initial state; returns the intro (`#intro#` of the grammar). */
  reset(): string {
    this.start();
    return this.logic.grammar.derive('#intro#', { variables: new Map(), mapping: new Map() }, this.mirror);
  }

  /** The goal holds in the true state. */
  won(): boolean {
    return goalHolds(this.logic.task, this.state);
  }

  /** Admissible commands, sorted, without repeats. */
  admissible(): string[] {
    return [...new Set(this.validCommands().map((v) => v.command))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** Applies a command (trimmed); "Nothing happens." and no change when it is not admissible. */
  step(command: string): { feedback: string; applied: boolean } {
    const wanted = command.trim();
    const hit = this.validCommands().find((v) => v.command === wanted);
    if (hit === undefined) return { feedback: NOTHING_HAPPENS, applied: false };
    this.apply(hit.op);
    const text = this.logic.actionText(hit.op);
    return { feedback: this.logic.grammar.derive(text.feedback, this.logic.context(hit.op), this.mirror), applied: true };
  }

  /** A copy in the same state (for planning on the side). */
  fork(): TwPddlGame {
    const g = new TwPddlGame(this.logic);
    g.state = this.state.slice();
    g.mirror = this.mirror.copy();
    return g;
  }

  /** The true state (one byte per fluent atom, see GroundTask.atoms). */
  trueState(): Uint8Array {
    return this.state.slice();
  }

  /** The fact mirror as sorted `pred(a, b)` texts. */
  mirrorFacts(): string[] {
    return this.mirror.all();
  }

  /** The command of an operator (by name: the disjuncts of one action share it) applicable now; undefined if none is. */
  commandOf(op: Operator): string | undefined {
    return this.validCommands().find((v) => v.op.name === op.name)?.command;
  }

  private start(): void {
    const task = this.logic.task;
    this.state = new Uint8Array(task.atoms.length);
    for (const id of task.initial) this.state[id] = 1;
    this.mirror = new FactMirror(this.logic);
    for (const f of task.init) this.mirror.add(f.pred, f.args);
    this.valid = null;
  }

  private apply(op: Operator): void {
    const task = this.logic.task;
    this.state = successor(op, this.state);
    for (const e of op.effects) {
      const atom = task.atoms[e.atom];
      if (e.negated) {
        this.mirror.remove(atom.pred, atom.args);
        this.mirror.add(`not_${atom.pred}`, atom.args);
      } else {
        this.mirror.remove(`not_${atom.pred}`, atom.args);
        this.mirror.add(atom.pred, atom.args);
      }
    }
    this.valid = null;
  }

  private validCommands(): Array<{ command: string; op: Operator }> {
    if (this.valid !== null) return this.valid;
    // One budget for every command of the state: each template is small, but a game may have many operators.
    const budget = new WorkBudget(MAX_DERIVATION_STEPS, this.logic.grammar.where, 'deriving the admissible commands of one state');
    const seen = new Set<string>();
    const out: Array<{ command: string; op: Operator }> = [];
    for (const op of this.logic.task.operators) {
      if (seen.has(op.name) || !literalsHold(op.pre, this.state)) continue;
      seen.add(op.name);
      // Stripped as step strips what it receives, so that a command whose last name is demangled with a trailing
      // space (`go to desk ` for the id `Desk`) is listed as the text that executes it.
      budget.spend(1 + op.pre.length);
      const command = this.logic.grammar.derive(this.logic.actionText(op).template, this.logic.context(op), this.mirror, budget).trim();
      out.push({ command, op });
    }
    return (this.valid = out);
  }
}
