// The PDDL subset of ALFWorld's game files, read the way Fast Downward's translator (which TextWorld's PDDL backend
// runs) reads it: comments start at `;`, everything is lowercased, `(` and `)` are split off and a space goes before
// every `?`, and tokens are split on whitespace only. The last rule is why `(?l - location, ?r - receptacle)` gives
// `?l` the type `location,` (a type with no objects), which decides what `examine` offers in ALFWorld. The grounding of
// what this reads is compared with the translator's (aibasel/downward src/translate) by scripts/alfworld-fd-check.ts.

import { LamerError } from '../../../errors.js';

/** A parsed s-expression: a token or a list. */
export type SExpr = string | SExpr[];

export interface TypedName {
  name: string;
  type: string;
}

export type Formula =
  | { kind: 'true' }
  | { kind: 'atom'; pred: string; args: string[] }
  | { kind: 'eq'; args: [string, string] }
  | { kind: 'not'; body: Formula }
  | { kind: 'and'; parts: Formula[] }
  | { kind: 'or'; parts: Formula[] }
  | { kind: 'exists'; vars: TypedName[]; body: Formula }
  | { kind: 'forall'; vars: TypedName[]; body: Formula };

/** One effect literal, with the variables of enclosing `forall`s and the condition of an enclosing `when`. */
export interface EffectLiteral {
  vars: TypedName[];
  condition: Formula;
  negated: boolean;
  pred: string;
  args: string[];
}

export interface ActionSchema {
  name: string;
  parameters: TypedName[];
  precondition: Formula;
  effects: EffectLiteral[];
}

export interface Domain {
  name: string;
  /** Type name to its parent (the root `object` has none). */
  types: Map<string, string | null>;
  /** Type names in declaration order (the root first). */
  typeOrder: string[];
  constants: TypedName[];
  actions: ActionSchema[];
}

export interface Problem {
  name: string;
  objects: TypedName[];
  /** Ground atoms of `:init` (numeric assignments and `=` are left out). */
  init: Array<{ pred: string; args: string[] }>;
  goal: Formula;
}

/** Fast Downward's tokenizer (see the file comment). */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.split(';', 1)[0].replace(/\(/g, ' ( ').replace(/\)/g, ' ) ').replace(/\?/g, ' ?');
    for (const token of line.split(/\s+/)) if (token.length > 0) tokens.push(token.toLowerCase());
  }
  return tokens;
}

/** The first complete s-expression of a text (the `(define ...)`). */
export function parseSExpr(text: string, where: string): SExpr[] {
  const tokens = tokenize(text);
  if (tokens[0] !== '(') throw pddlError(where, `expected '(' at the start, found ${JSON.stringify(tokens[0] ?? 'the end')}`);
  let i = 1;
  const list = (): SExpr[] => {
    const out: SExpr[] = [];
    for (;;) {
      if (i >= tokens.length) throw pddlError(where, "missing ')': the text ends inside a list");
      const t = tokens[i++];
      if (t === ')') return out;
      out.push(t === '(' ? list() : t);
    }
  };
  return list();
}

function pddlError(where: string, message: string): LamerError {
  return new LamerError('E_ENV', `${where}: ${message}`);
}

function isList(e: SExpr | undefined): e is SExpr[] {
  return Array.isArray(e);
}

function asToken(e: SExpr | undefined, where: string, what: string): string {
  if (typeof e !== 'string') throw pddlError(where, `expected ${what}, found ${e === undefined ? 'nothing' : 'a list'}`);
  return e;
}

/** `a b - t c - u d` as typed names; an untyped name is of type `object` (as in Fast Downward). */
export function parseTypedList(items: readonly SExpr[], where: string): TypedName[] {
  const out: TypedName[] = [];
  let pending: string[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = asToken(items[i], where, 'a name in a typed list');
    if (item === '-') {
      const type = asToken(items[++i], where, "a type after '-'");
      for (const name of pending) out.push({ name, type });
      pending = [];
    } else {
      pending.push(item);
    }
  }
  for (const name of pending) out.push({ name, type: 'object' });
  return out;
}

/** A condition (precondition or goal). */
export function parseFormula(e: SExpr, where: string): Formula {
  if (!isList(e)) throw pddlError(where, `expected a condition, found ${JSON.stringify(e)}`);
  if (e.length === 0) return { kind: 'true' };
  const head = asToken(e[0], where, 'a condition keyword or predicate');
  const rest = e.slice(1);
  switch (head) {
    case 'and':
      return { kind: 'and', parts: rest.map((p) => parseFormula(p, where)) };
    case 'or':
      return { kind: 'or', parts: rest.map((p) => parseFormula(p, where)) };
    case 'not':
      if (rest.length !== 1) throw pddlError(where, `'not' takes one condition, found ${rest.length}`);
      return { kind: 'not', body: parseFormula(rest[0], where) };
    case 'imply':
      if (rest.length !== 2) throw pddlError(where, `'imply' takes two conditions, found ${rest.length}`);
      return { kind: 'or', parts: [{ kind: 'not', body: parseFormula(rest[0], where) }, parseFormula(rest[1], where)] };
    case 'exists':
    case 'forall': {
      if (rest.length !== 2 || !isList(rest[0])) throw pddlError(where, `'${head}' takes a variable list and a condition`);
      return { kind: head, vars: parseTypedList(rest[0], where), body: parseFormula(rest[1], where) };
    }
    case '=':
      if (rest.length !== 2) throw pddlError(where, `'=' takes two arguments, found ${rest.length}`);
      return { kind: 'eq', args: [asToken(rest[0], where, 'a term'), asToken(rest[1], where, 'a term')] };
    default:
      return { kind: 'atom', pred: head, args: rest.map((a) => asToken(a, where, `an argument of ${head}`)) };
  }
}

function parseEffect(e: SExpr, where: string, vars: TypedName[], condition: Formula, out: EffectLiteral[]): void {
  if (!isList(e)) throw pddlError(where, `expected an effect, found ${JSON.stringify(e)}`);
  if (e.length === 0) return;
  const head = asToken(e[0], where, 'an effect keyword or predicate');
  const rest = e.slice(1);
  switch (head) {
    case 'and':
      for (const part of rest) parseEffect(part, where, vars, condition, out);
      return;
    case 'forall':
      if (rest.length !== 2 || !isList(rest[0])) throw pddlError(where, "'forall' takes a variable list and an effect");
      parseEffect(rest[1], where, [...vars, ...parseTypedList(rest[0], where)], condition, out);
      return;
    case 'when': {
      if (rest.length !== 2) throw pddlError(where, "'when' takes a condition and an effect");
      const inner = parseFormula(rest[0], where);
      parseEffect(rest[1], where, vars, condition.kind === 'true' ? inner : { kind: 'and', parts: [condition, inner] }, out);
      return;
    }
    case 'increase':
    case 'decrease':
    case 'assign':
    case 'scale-up':
    case 'scale-down':
      // Action costs (`total-cost`): they change no fact, so nothing the game shows.
      return;
    case 'not': {
      const atom = rest[0];
      if (rest.length !== 1 || !isList(atom) || atom.length === 0) throw pddlError(where, "'not' in an effect takes one atom");
      out.push({
        vars,
        condition,
        negated: true,
        pred: asToken(atom[0], where, 'a predicate'),
        args: atom.slice(1).map((a) => asToken(a, where, 'an argument')),
      });
      return;
    }
    default:
      out.push({ vars, condition, negated: false, pred: head, args: rest.map((a) => asToken(a, where, `an argument of ${head}`)) });
  }
}

/** Keyword arguments of a list such as `(:action name :parameters (...) :precondition ... :effect ...)`. */
function keywordArgs(items: readonly SExpr[], where: string): Map<string, SExpr> {
  const out = new Map<string, SExpr>();
  for (let i = 0; i < items.length; i += 2) {
    const key = asToken(items[i], where, 'a keyword');
    if (!key.startsWith(':')) throw pddlError(where, `expected a keyword such as :parameters, found ${JSON.stringify(key)}`);
    if (i + 1 >= items.length) throw pddlError(where, `${key} has no value`);
    out.set(key, items[i + 1]);
  }
  return out;
}

export function parseDomain(text: string, where = 'pddl_domain'): Domain {
  const top = parseSExpr(text, where);
  if (top[0] !== 'define' || !isList(top[1]) || top[1][0] !== 'domain') throw pddlError(where, 'expected (define (domain NAME) ...)');
  const domain: Domain = {
    name: asToken(top[1][1], where, 'the domain name'),
    types: new Map([['object', null]]),
    typeOrder: ['object'],
    constants: [],
    actions: [],
  };
  for (const section of top.slice(2)) {
    if (!isList(section) || section.length === 0) throw pddlError(where, 'expected a (:section ...) in the domain');
    const key = asToken(section[0], where, 'a section keyword');
    if (key === ':types') {
      for (const t of parseTypedList(section.slice(1), `${where} :types`)) {
        // `object` declared again under itself (ALFWorld lists it among its types) stays the root.
        if (t.name === 'object') continue;
        if (!domain.types.has(t.name)) domain.typeOrder.push(t.name);
        domain.types.set(t.name, t.type);
      }
    } else if (key === ':constants') {
      domain.constants.push(...parseTypedList(section.slice(1), `${where} :constants`));
    } else if (key === ':action') {
      const name = asToken(section[1], where, 'an action name');
      const at = `${where} action ${name}`;
      const args = keywordArgs(section.slice(2), at);
      const params = args.get(':parameters');
      const effects: EffectLiteral[] = [];
      const effect = args.get(':effect');
      if (effect !== undefined) parseEffect(effect, at, [], { kind: 'true' }, effects);
      domain.actions.push({
        name,
        parameters: params === undefined ? [] : parseTypedList(isList(params) ? params : [params], at),
        precondition: args.has(':precondition') ? parseFormula(args.get(':precondition')!, at) : { kind: 'true' },
        effects,
      });
    }
    // :requirements, :predicates and :functions declare nothing the game needs.
  }
  return domain;
}

export function parseProblem(text: string, where = 'pddl_problem'): Problem {
  const top = parseSExpr(text, where);
  if (top[0] !== 'define' || !isList(top[1]) || top[1][0] !== 'problem') throw pddlError(where, 'expected (define (problem NAME) ...)');
  const problem: Problem = { name: asToken(top[1][1], where, 'the problem name'), objects: [], init: [], goal: { kind: 'true' } };
  let hasGoal = false;
  for (const section of top.slice(2)) {
    if (!isList(section) || section.length === 0) throw pddlError(where, 'expected a (:section ...) in the problem');
    const key = asToken(section[0], where, 'a section keyword');
    if (key === ':objects') {
      problem.objects.push(...parseTypedList(section.slice(1), `${where} :objects`));
    } else if (key === ':init') {
      for (const fact of section.slice(1)) {
        if (!isList(fact) || fact.length === 0) throw pddlError(where, ':init holds atoms such as (atLocation agent1 loc1)');
        const pred = asToken(fact[0], where, 'a predicate in :init');
        // Numeric fluents (`(= (total-cost) 0)`, distances) change no fact.
        if (pred === '=') continue;
        problem.init.push({ pred, args: fact.slice(1).map((a) => asToken(a, where, `an argument of ${pred} in :init`)) });
      }
    } else if (key === ':goal') {
      problem.goal = parseFormula(section[1], `${where} :goal`);
      hasGoal = true;
    }
  }
  if (!hasGoal) throw pddlError(where, 'no :goal section');
  return problem;
}
