// The PDDL subset of ALFWorld's game files, read the way Fast Downward's translator (which TextWorld's PDDL backend
// runs) reads it: comments start at `;`, everything is lowercased, `(` and `)` are split off and a space goes before
// every `?`, and tokens are split on whitespace only. The last rule is why `(?l - location, ?r - receptacle)` gives
// `?l` the type `location,` (a type with no objects), which decides what `examine` offers in ALFWorld. The grounding of
// what this reads is compared with the translator's (aibasel/downward src/translate) by scripts/alfworld-fd-check.ts.

import { LamerError } from '../../../errors.js';
import { MAX_PDDL_DEPTH } from './limits.js';

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
  /** Predicate name to its number of arguments (with `=` when the domain has a :predicates section); null without one. */
  predicates: Map<string, number> | null;
  actions: ActionSchema[];
}

export interface Problem {
  name: string;
  /** The domain its `(:domain NAME)` names (null without one). */
  domain: string | null;
  objects: TypedName[];
  /** Ground atoms of `:init` (numeric assignments and `=` are left out). */
  init: Array<{ pred: string; args: string[] }>;
  goal: Formula;
}

/**
 * Fast Downward's tokenizer (see the file comment). Lines end at `\n`, `\r\n` or `\r` (Python's universal newlines) and
 * white space is Python's (ASCII's, with \x1c-\x1f); like the translator, it refuses characters outside ASCII anywhere
 * but in comments.
 */
export function tokenize(text: string, where = 'PDDL'): string[] {
  const tokens: string[] = [];
  let lineNo = 0;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    lineNo++;
    const code = raw.split(';', 1)[0];
    const bad = /[\u0080-\uffff]/.exec(code);
    if (bad) throw pddlError(where, `line ${lineNo}: the character ${JSON.stringify(bad[0])} is not ASCII (only comments may hold other characters)`);
    const line = code.replace(/\(/g, ' ( ').replace(/\)/g, ' ) ').replace(/\?/g, ' ?');
    // eslint-disable-next-line no-control-regex -- Python's str.split() also splits on the separators \x1c-\x1f
    for (const token of line.split(/[\s\x1c-\x1f]+/)) if (token.length > 0) tokens.push(token.toLowerCase());
  }
  return tokens;
}

/**
 * The s-expression of a text (the `(define ...)`), read without recursion: nesting deeper than MAX_PDDL_DEPTH and
 * anything after the closing `)` but comments are refused, as Fast Downward's parser refuses the latter.
 */
export function parseSExpr(text: string, where: string): SExpr[] {
  const tokens = tokenize(text, where);
  if (tokens[0] !== '(') throw pddlError(where, `expected '(' at the start, found ${JSON.stringify(tokens[0] ?? 'the end')}`);
  const open: SExpr[][] = [[]];
  for (let i = 1; ;) {
    if (i >= tokens.length) throw pddlError(where, "missing ')': the text ends inside a list");
    const t = tokens[i++];
    if (t === '(') {
      if (open.length >= MAX_PDDL_DEPTH) throw pddlError(where, `lists nested more than ${MAX_PDDL_DEPTH} deep (the engine's limit)`);
      const list: SExpr[] = [];
      open[open.length - 1].push(list);
      open.push(list);
    } else if (t === ')') {
      const done = open.pop()!;
      if (open.length === 0) {
        if (i < tokens.length) {
          const rest = tokens.slice(i, i + 8).join(' ');
          throw pddlError(where, `text after the closing ')' of the definition: ${JSON.stringify(rest.length > 60 ? `${rest.slice(0, 60)}...` : rest)}`);
        }
        return done;
      }
    } else {
      open[open.length - 1].push(t);
    }
  }
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
    predicates: null,
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
    } else if (key === ':predicates') {
      domain.predicates ??= new Map([['=', 2]]);
      for (const entry of section.slice(1)) {
        if (!isList(entry) || entry.length === 0) throw pddlError(where, ':predicates holds declarations such as (atLocation ?a - agent ?l - location)');
        domain.predicates.set(asToken(entry[0], where, 'a predicate name'), arityOf(entry.slice(1)));
      }
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
    // :requirements and :functions declare nothing the game needs.
  }
  checkTypes(domain, where);
  checkDomainNames(domain, where);
  return domain;
}

export function parseProblem(text: string, where = 'pddl_problem'): Problem {
  const top = parseSExpr(text, where);
  if (top[0] !== 'define' || !isList(top[1]) || top[1][0] !== 'problem') throw pddlError(where, 'expected (define (problem NAME) ...)');
  const problem: Problem = { name: asToken(top[1][1], where, 'the problem name'), domain: null, objects: [], init: [], goal: { kind: 'true' } };
  let hasGoal = false;
  for (const section of top.slice(2)) {
    if (!isList(section) || section.length === 0) throw pddlError(where, 'expected a (:section ...) in the problem');
    const key = asToken(section[0], where, 'a section keyword');
    if (key === ':domain') {
      problem.domain = asToken(section[1], where, 'the domain name after :domain');
    } else if (key === ':objects') {
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

// Declarations, checked as Fast Downward's translator checks them (src/translate/pddl_parser/parsing_functions.py and
// pddl_to_prolog.py at aibasel/downward 5ea8024), so a file the translator refuses is refused here instead of played:
// every predicate of a condition, an effect, :init or the goal declared in :predicates, with its number of arguments;
// every term a declared variable in scope or a declared object; every object of a declared type, and no object
// declared twice. An action may name the problem's objects (ALFWorld's name `SinkBasinType`, declared in each problem):
// TextWorld's fork of the translator takes a domain's constants from the problem, so the objects an action names are
// checked against the domain's constants and the problem's objects together. Type cycles are refused too (the
// translator would make every type of a cycle a supertype of itself). Parameter types are not checked: ALFWorld's
// `?l - location,` is a type with no objects, which the translator accepts.

/** The number of arguments of a predicate declaration's typed list (`?a - agent ?l - location` has 2). */
function arityOf(items: readonly SExpr[]): number {
  let n = 0;
  for (let i = 0; i < items.length; i++) {
    if (items[i] === '-') i++;
    else n++;
  }
  return n;
}

/** Refuses a type that is its own ancestor (`object` declared under itself is the root). */
function checkTypes(domain: Domain, where: string): void {
  for (const start of domain.types.keys()) {
    const chain = [start];
    for (let t = domain.types.get(start); t !== null && t !== undefined; t = domain.types.get(t)) {
      if (chain.includes(t)) throw pddlError(where, `type cycle: ${[...chain.slice(chain.indexOf(t)), t].join(' - ')} (each type's parent follows it)`);
      chain.push(t);
    }
  }
  for (const c of domain.constants) {
    if (!domain.types.has(c.type)) throw pddlError(where, `the constant ${c.name} is of the undeclared type ${c.type}`);
  }
  checkUnique(domain.constants, where);
}

function checkUnique(objects: readonly TypedName[], where: string): void {
  const seen = new Set<string>();
  for (const o of objects) {
    if (seen.has(o.name)) throw pddlError(where, `${o.name} is declared twice (among the domain's constants and the problem's objects)`);
    seen.add(o.name);
  }
}

/** Names a condition may use: its variables in scope, and objects (null: objects are checked with the problem). */
interface Scope {
  vars: ReadonlySet<string>;
  objects: ReadonlySet<string> | null;
}

function checkAtom(domain: Domain, pred: string, args: readonly string[], scope: Scope, where: string): void {
  const arity = domain.predicates?.get(pred);
  if (arity === undefined) {
    throw pddlError(where, `undeclared predicate ${pred}${domain.predicates === null ? ' (the domain has no :predicates section)' : ''}`);
  }
  if (arity !== args.length) {
    throw pddlError(where, `${pred} takes ${arity} argument${arity === 1 ? '' : 's'}, found ${args.length}: (${[pred, ...args].join(' ')})`);
  }
  for (const a of args) {
    const variable = a.startsWith('?');
    if (variable ? !scope.vars.has(a) : scope.objects !== null && !scope.objects.has(a)) {
      throw pddlError(where, `undeclared ${variable ? 'variable' : 'object'} ${a} in (${[pred, ...args].join(' ')})`);
    }
  }
}

/** Every atom and equality of a condition declared, over the names of `scope` and the variables it quantifies. */
function checkFormula(domain: Domain, f: Formula, scope: Scope, where: string): void {
  switch (f.kind) {
    case 'true':
      return;
    case 'atom':
      return checkAtom(domain, f.pred, f.args, scope, where);
    case 'eq':
      return checkAtom(domain, '=', f.args, scope, where);
    case 'not':
      return checkFormula(domain, f.body, scope, where);
    case 'and':
    case 'or':
      for (const p of f.parts) checkFormula(domain, p, scope, where);
      return;
    case 'exists':
    case 'forall':
      return checkFormula(domain, f.body, { vars: new Set([...scope.vars, ...f.vars.map((v) => v.name)]), objects: scope.objects }, where);
  }
}

/**
 * The actions' conditions and effects: declared predicates over parameters and quantified variables, and over the
 * given objects (null: not yet known, checked again with the problem's).
 */
function checkDomainNames(domain: Domain, where: string, objects: ReadonlySet<string> | null = null): void {
  for (const a of domain.actions) {
    const at = `${where} action ${a.name}`;
    const scope: Scope = { vars: new Set(a.parameters.map((p) => p.name)), objects };
    checkFormula(domain, a.precondition, scope, at);
    for (const e of a.effects) {
      const inner = e.vars.length === 0 ? scope : { vars: new Set([...scope.vars, ...e.vars.map((v) => v.name)]), objects };
      checkFormula(domain, e.condition, inner, at);
      checkAtom(domain, e.pred, e.args, inner, at);
    }
  }
}

/**
 * The problem's declarations against its domain (see above): objects of declared types, declared once; :init, the
 * goal and the objects the domain's actions name, over declared predicates and objects. `where` names the problem in
 * errors (and the domain, for an object an action names that neither declares).
 */
export function checkProblem(domain: Domain, problem: Problem, where: string): void {
  if (problem.domain !== domain.name) {
    throw pddlError(where, `the problem is for the domain ${problem.domain ?? '(none: no (:domain NAME))'}, the game's domain is ${domain.name}`);
  }
  for (const o of problem.objects) {
    if (!domain.types.has(o.type)) throw pddlError(where, `the object ${o.name} is of the undeclared type ${o.type}`);
  }
  checkUnique([...domain.constants, ...problem.objects], where);
  const objects = new Set([...domain.constants, ...problem.objects].map((o) => o.name));
  const scope: Scope = { vars: new Set(), objects };
  for (const f of problem.init) checkAtom(domain, f.pred, f.args, scope, `${where} :init`);
  checkFormula(domain, problem.goal, scope, `${where} :goal`);
  checkDomainNames(domain, `${where}, with the domain`, objects);
}
