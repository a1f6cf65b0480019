// TextWorld's text grammar for PDDL games (`.twl2`): the document of grammar blocks and actions, the production
// rules (the first rule whose condition holds is used), the symbols of a rule's right-hand side, their stack-based
// derivation, and the conjunctive queries that conditions and `{expr | query}` symbols run over the fact mirror.
// Behaviour that decides the text, read from TextWorld's code (textworld/envs/pddl/textgen/__init__.py and
// textgen.ebnf) and not compared with a run of it:
//   * action grammar blocks drop lines whose first non-blank character is `#`; blocks merge in document order, a
//     later key replacing an earlier one;
//   * `[{...}]` lists read `nothing`, `a`, or `a, b, ..., and z` through the `list_empty`, `list_separator` and
//     `list_last_separator` rules;
//   * queries assign placeholders injectively, taking candidate facts in sorted order (by predicate, then arguments
//     by id and type), so ALFWorld's ids derive `cabinet 15, cabinet 14, ..., cabinet 1`;
//   * tabs between symbols are skipped (a tab inside literal text stays), text the symbol syntax cannot read ends the
//     rule silently, and a right-hand side that starts at a line start loses its leading white space (the parser's
//     comment rule).
// A derivation, its queries included, spends from a WorkBudget (limits.ts: MAX_DERIVATION_STEPS, and
// MAX_DERIVED_CHARS of text), so a rule that derives itself, a text that grows forever or a query joining many facts
// stops with E_ENV naming the game and the limit; a query has at most MAX_QUERY_PREDICATES predicates, as its search
// recurses once per predicate.

import { LamerError } from '../../../errors.js';
import { HELD, MAX_DERIVATION_STEPS, MAX_DERIVED_CHARS, MAX_QUERY_PREDICATES, WorkBudget } from './limits.js';

/** What a symbol evaluates against: the entities bound to placeholders, and the mapping queries start from. */
export interface Entity {
  id: string;
  type: string;
  name: string | null;
  definite: string | null;
  indefinite: string | null;
}

/** A placeholder `name:type` bound to an object (with the type it is bound under). */
export interface Bound {
  name: string;
  type: string;
}

export interface DeriveContext {
  /** Placeholder name to entity (what `{o.name}` reads). */
  variables: Map<string, Entity>;
  /** `name:type` of a placeholder to the object bound to it (what queries start from). */
  mapping: Map<string, Bound>;
}

/** The facts a grammar reads: sorted facts per predicate with their argument types, and the type hierarchy. */
export interface FactView {
  /** Facts of a predicate, each as argument ids, sorted by compareFacts (TextWorld's Proposition order). */
  facts(pred: string): ReadonlyArray<readonly string[]>;
  typeOf(id: string): string;
  /** Children of a type, sorted by name (TextWorld's TypeHierarchy). */
  children(type: string): readonly string[];
  hasType(type: string): boolean;
  entity(id: string): Entity;
}

type Sym =
  | { kind: 'terminal'; text: string }
  | { kind: 'nonterminal'; name: string }
  | { kind: 'eval'; expr: string }
  | { kind: 'conditional'; expr: Sym; given: string | null }
  | { kind: 'list'; cond: Extract<Sym, { kind: 'conditional' }> };

export interface Rule {
  rhs: Sym[];
  condition: string;
}

export interface ActionText {
  name: string;
  template: string;
  feedback: string;
}

function grammarError(where: string, message: string): LamerError {
  return new LamerError('E_ENV', `${where}: ${message}`);
}

/** Python's textwrap.dedent: the longest common leading white space of the non-blank lines is removed. */
export function dedent(text: string): string {
  const lines = text.split('\n');
  let margin: string | null = null;
  for (const line of lines) {
    if (line.trim().length === 0) continue;
    const indent = /^[ \t]*/.exec(line)![0];
    if (margin === null) margin = indent;
    else {
      let i = 0;
      while (i < margin.length && i < indent.length && margin[i] === indent[i]) i++;
      margin = margin.slice(0, i);
    }
  }
  return lines.map((line) => (line.trim().length === 0 ? line.replace(/^[ \t]+$/, '') : line.slice(margin?.length ?? 0))).join('\n');
}

/** A `.twl2` document: the action texts and the merged rules. */
export function parseTwl2(text: string, where = 'grammar'): { actions: Map<string, ActionText>; rules: Map<string, Rule[]> } {
  const actions = new Map<string, ActionText>();
  const merged: Record<string, unknown> = {};
  let i = 0;
  const skip = () => {
    for (;;) {
      const m = /^(?:\s+|#[^\n]*)/.exec(text.slice(i, i + 4096));
      if (!m || m[0].length === 0) return;
      i += m[0].length;
    }
  };
  const expect = (token: string) => {
    skip();
    if (!text.startsWith(token, i))
      throw grammarError(where, `expected ${JSON.stringify(token)} at character ${i}, found ${JSON.stringify(text.slice(i, i + 20))}`);
    i += token.length;
  };
  const block = (): string => {
    skip();
    if (!text.startsWith('"""', i)) throw grammarError(where, `expected a """ block at character ${i}`);
    const end = text.indexOf('"""', i + 3);
    if (end < 0) throw grammarError(where, `a """ block opened at character ${i} is never closed`);
    const body = text.slice(i + 3, end);
    i = end + 3;
    return dedent(body);
  };
  const str = (): string => {
    skip();
    const m = /^"[^"]*"/.exec(text.slice(i));
    if (!m) throw grammarError(where, `expected a "string" at character ${i}`);
    i += m[0].length;
    return m[0].slice(1, -1);
  };
  const json = (body: string, what: string): Record<string, unknown> => {
    try {
      const value = JSON.parse(body) as unknown;
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
      return value as Record<string, unknown>;
    } catch (e) {
      throw grammarError(where, `${what}: not a JSON object (${(e as Error).message})`);
    }
  };
  for (;;) {
    skip();
    if (i >= text.length) break;
    const word = /^[\w/-]+/.exec(text.slice(i))?.[0];
    if (word === 'grammar') {
      i += word.length;
      expect('::');
      Object.assign(merged, json(block(), 'a grammar block'));
      expect(';');
    } else if (word === 'action') {
      i += word.length;
      skip();
      const name = /^[\w/-]+/.exec(text.slice(i))?.[0];
      if (!name) throw grammarError(where, `expected an action name at character ${i}`);
      i += name.length;
      expect('{');
      const action: ActionText = { name, template: '', feedback: '' };
      for (;;) {
        skip();
        if (text.startsWith('}', i)) {
          i++;
          break;
        }
        const key = /^\w+/.exec(text.slice(i))?.[0];
        if (!key) throw grammarError(where, `action ${name}: expected template, feedback, pddl or grammar at character ${i}`);
        i += key.length;
        expect('::');
        if (key === 'template') action.template = str();
        else if (key === 'feedback') action.feedback = str();
        else if (key === 'pddl') block();
        else if (key === 'grammar') {
          const body = block()
            .split('\n')
            .filter((line) => !line.trimStart().startsWith('#'))
            .join('\n');
          Object.assign(merged, json(body, `the grammar of action ${name}`));
        } else throw grammarError(where, `action ${name}: unknown field ${key}`);
        expect(';');
      }
      actions.set(name.toLowerCase(), action);
    } else {
      throw grammarError(where, `expected 'grammar ::' or 'action NAME {' at character ${i}, found ${JSON.stringify(text.slice(i, i + 20))}`);
    }
  }
  const rules = new Map<string, Rule[]>();
  for (const [name, list] of Object.entries(merged)) {
    if (!Array.isArray(list)) throw grammarError(where, `rule ${name}: expected a list of {rhs, condition}`);
    rules.set(
      name,
      list.map((r: { rhs?: unknown; condition?: unknown }, k) => {
        if (typeof r?.rhs !== 'string') throw grammarError(where, `rule ${name} #${k + 1}: rhs must be a string`);
        return { rhs: parseSymbols(r.rhs), condition: typeof r.condition === 'string' ? r.condition : '' };
      }),
    );
  }
  return { actions, rules };
}

// The symbol syntax (TextWorld's textgen.ebnf), as regular expressions anchored at the position.
const TAG = /^[\w()/!<>\-\s,.]+/;
const GIVEN = /^[^;|{}\n[\]#]+/;
const STATEMENT = /^[^|[\]{}\n<>]+/;
const LITERAL = /^[^;|"<>[\]#{}]*/;

/** Parses a right-hand side; text it cannot read ends it (as the original parser stops there). */
export function parseSymbols(text: string): Sym[] {
  let i = 0;
  // White space between symbols: tabs, and at a line start blank text up to a newline (the parser's comment rule).
  const skip = () => {
    for (;;) {
      const start = i;
      while (text[i] === '\t') i++;
      if (i === 0 || text[i - 1] === '\n') {
        const m = /^(?:\/\/[^\n]*|\s*)\n?/.exec(text.slice(i));
        if (m && m[0].length > 0) i += m[0].length;
      }
      if (i === start) return;
    }
  };
  const nonterminal = (): Sym | null => {
    const save = i;
    skip();
    if (text[i] !== '#') return ((i = save), null);
    const m = TAG.exec(text.slice(i + 1));
    if (!m || text[i + 1 + m[0].length] !== '#') return ((i = save), null);
    i += m[0].length + 2;
    return { kind: 'nonterminal', name: m[0] };
  };
  const conditional = (): Extract<Sym, { kind: 'conditional' }> | null => {
    const save = i;
    skip();
    if (text[i] !== '{') return ((i = save), null);
    i++;
    let expr: Sym | null = nonterminal();
    if (expr === null) {
      skip();
      const m = STATEMENT.exec(text.slice(i));
      if (!m) return ((i = save), null);
      i += m[0].length;
      expr = { kind: 'eval', expr: m[0] };
    }
    let given: string | null = null;
    const bar = /^\s*\|\s*/.exec(text.slice(i));
    if (bar) {
      const g = GIVEN.exec(text.slice(i + bar[0].length));
      if (!g) return ((i = save), null);
      i += bar[0].length + g[0].length;
      given = g[0];
    }
    skip();
    if (text[i] !== '}') return ((i = save), null);
    i++;
    return { kind: 'conditional', expr, given };
  };
  const list = (): Sym | null => {
    const save = i;
    skip();
    if (text[i] !== '[') return ((i = save), null);
    i++;
    const cond = conditional();
    if (cond === null) return ((i = save), null);
    skip();
    if (text[i] !== ']') return ((i = save), null);
    i++;
    return { kind: 'list', cond };
  };
  const terminal = (): Sym | null => {
    const save = i;
    skip();
    if (text[i] === '"') {
      const m = LITERAL.exec(text.slice(i + 1));
      if (m && text[i + 1 + m[0].length] === '"') {
        i += m[0].length + 2;
        return { kind: 'terminal', text: m[0] };
      }
    }
    const m = LITERAL.exec(text.slice(i))!;
    if (m[0].length === 0) return ((i = save), null);
    i += m[0].length;
    return { kind: 'terminal', text: m[0] };
  };
  const out: Sym[] = [];
  while (i < text.length) {
    const sym = list() ?? conditional() ?? nonterminal() ?? terminal();
    if (sym === null) break;
    out.push(sym);
  }
  return out;
}

interface QueryPredicate {
  name: string;
  params: Array<{ name: string; type: string }>;
}

const queryCache = new Map<string, QueryPredicate[]>();

/** `p(a:t, b:u) & not_q(...)` as predicates with typed placeholders. */
export function parseQuery(expr: string, where: string): QueryPredicate[] {
  let parsed = queryCache.get(expr);
  if (parsed === undefined) {
    const parts = expr.split('&');
    if (parts.length > MAX_QUERY_PREDICATES) {
      throw grammarError(
        where,
        `a query of ${parts.length} predicates, more than the engine's limit of ${MAX_QUERY_PREDICATES}: ${JSON.stringify(expr.slice(0, 80))}...`,
      );
    }
    parsed = parts.map((part) => {
      const m = /^\s*([\w-]+)\s*\(([^)]*)\)\s*$/.exec(part);
      if (!m) throw grammarError(where, `cannot read the query ${JSON.stringify(expr)} (expected p(x:type) & q(...))`);
      const params =
        m[2].trim().length === 0
          ? []
          : m[2].split(',').map((p) => {
              const pm = /^\s*([\w-]+)\s*:\s*([\w-]+)\s*$/.exec(p);
              if (!pm) throw grammarError(where, `cannot read the placeholder ${JSON.stringify(p.trim())} in ${JSON.stringify(expr)} (expected name:type)`);
              return { name: pm[1], type: pm[2] };
            });
      return { name: m[1], params };
    });
    queryCache.set(expr, parsed);
  }
  return parsed;
}

const key = (p: { name: string; type: string }) => `${p.name}:${p.type}`;

/**
 * Type tuples a query signature reaches (itself, then its descendants breadth first), as TextWorld orders them. Each
 * tuple made costs its length, held.
 */
function signatures(view: FactView, types: readonly string[], budget: WorkBudget): string[][] {
  const expand = (ts: readonly string[]): string[][] => {
    const out: string[][] = [];
    for (let i = 0; i < ts.length; i++) {
      for (const child of view.children(ts[i])) {
        budget.spend(HELD * (1 + ts.length));
        const next = ts.slice();
        next[i] = child;
        out.push(next);
      }
    }
    return out;
  };
  const result: string[][] = [types.slice()];
  const seen = new Set<string>();
  const queue = expand(types);
  for (let head = 0; head < queue.length; head++) {
    const item = queue[head];
    result.push(item);
    for (const e of expand(item)) {
      const k = e.join('\u0000');
      if (!seen.has(k)) {
        seen.add(k);
        queue.push(e);
      }
    }
  }
  return result;
}

/** Propositions of one predicate in TextWorld's order: arguments compared as (id, type), element by element. */
export function compareFacts(view: FactView, a: readonly string[], b: readonly string[]): number {
  for (let k = 0; k < Math.min(a.length, b.length); k++) {
    if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
    const ta = view.typeOf(a[k]);
    const tb = view.typeOf(b[k]);
    if (ta !== tb) return ta < tb ? -1 : 1;
  }
  return a.length - b.length;
}

export interface QueryOptions {
  /** What the search spends from (default: a budget of MAX_DERIVATION_STEPS of its own). */
  budget?: WorkBudget;
  /** Stop after this many assignments (a rule's condition needs one). */
  limit?: number;
}

/**
 * Every assignment of a query's placeholders (`name:type` to object) that the facts satisfy, extending `mapping`,
 * injective over all assigned objects, in TextWorld's order (the first `limit` of them). One budget unit per fact
 * tried, and an assignment found costs its size, held.
 */
export function queryAssignments(
  view: FactView,
  expr: string,
  mapping: ReadonlyMap<string, Bound>,
  where: string,
  options: QueryOptions = {},
): Array<Map<string, Bound>> {
  const budget = options.budget ?? new WorkBudget(MAX_DERIVATION_STEPS, where, `the query ${JSON.stringify(expr.slice(0, 80))}`);
  const limit = options.limit ?? Infinity;
  const preds = parseQuery(expr, where);
  const current = new Map(mapping);
  const used = new Set([...mapping.values()].map((b) => `${b.name}:${b.type}`));
  const seenPh = new Set(mapping.keys());
  const newByDepth = preds.map((p) => {
    const fresh: string[] = [];
    for (const ph of p.params) {
      const k = key(ph);
      if (!seenPh.has(k)) {
        seenPh.add(k);
        fresh.push(k);
      }
    }
    return fresh;
  });
  const out: Array<Map<string, Bound>> = [];
  // The type tuples of each predicate, made when the search first reaches it.
  const sigsByDepth: Array<string[][] | undefined> = [];
  const rec = (depth: number): void => {
    if (depth === preds.length) {
      budget.spend(HELD * (1 + current.size));
      out.push(new Map(current));
      return;
    }
    const pred = preds[depth];
    let sigs = sigsByDepth[depth];
    if (sigs === undefined) {
      for (const t of pred.params) if (!view.hasType(t.type)) throw grammarError(where, `the query ${JSON.stringify(expr)} names the unknown type ${t.type}`);
      sigs = sigsByDepth[depth] = signatures(
        view,
        pred.params.map((p) => p.type),
        budget,
      );
    }
    for (const sig of sigs) {
      for (const fact of view.facts(pred.name)) {
        if (out.length >= limit) return;
        budget.spend(1 + fact.length);
        if (fact.length !== sig.length || !fact.every((arg, k) => view.typeOf(arg) === sig[k])) continue;
        let ok = true;
        for (let k = 0; k < pred.params.length; k++) {
          const ph = key(pred.params[k]);
          const value: Bound = { name: fact[k], type: view.typeOf(fact[k]) };
          const existing = current.get(ph);
          if (existing === undefined) {
            const vk = `${value.name}:${value.type}`;
            if (used.has(vk)) {
              ok = false;
              break;
            }
            current.set(ph, value);
            used.add(vk);
          } else if (existing.name !== value.name || existing.type !== value.type) {
            ok = false;
            break;
          }
        }
        if (ok) rec(depth + 1);
        for (const ph of newByDepth[depth]) {
          const v = current.get(ph);
          current.delete(ph);
          if (v) used.delete(`${v.name}:${v.type}`);
        }
      }
    }
  };
  rec(0);
  return out;
}

/** The grammar of a game: rules, action texts, derivation. */
export class Grammar {
  readonly actions: Map<string, ActionText>;
  readonly rules: Map<string, Rule[]>;
  private readonly parsed = new Map<string, Sym[]>();

  constructor(
    text: string,
    readonly where = 'grammar',
  ) {
    const doc = parseTwl2(text, where);
    this.actions = doc.actions;
    this.rules = doc.rules;
  }

  /** The text a start string (a template, a feedback rule such as `#look.feedback#`, `#intro#`) derives to. */
  /**
   * `budget` is what the derivation spends from (default: MAX_DERIVATION_STEPS of its own); the text may have at most
   * MAX_DERIVED_CHARS characters.
   */
  derive(start: string, context: DeriveContext, view: FactView, budget?: WorkBudget): string {
    const what = () => `deriving ${JSON.stringify(start.length > 60 ? `${start.slice(0, 60)}...` : start)}`;
    budget ??= new WorkBudget(MAX_DERIVATION_STEPS, this.where, what());
    let symbols = this.parsed.get(start);
    if (symbols === undefined) this.parsed.set(start, (symbols = parseSymbols(start)));
    const stack: Array<{ sym: Sym; ctx: DeriveContext }> = symbols.map((sym) => ({ sym, ctx: context })).reverse();
    let out = '';
    while (stack.length > 0) {
      budget.spend();
      if (out.length > MAX_DERIVED_CHARS) {
        throw grammarError(this.where, `${what()} makes a text of more than ${MAX_DERIVED_CHARS} characters (the engine's limit)`);
      }
      const { sym, ctx } = stack.pop()!;
      switch (sym.kind) {
        case 'terminal':
          out += sym.text;
          break;
        case 'nonterminal': {
          const rules = this.rules.get(sym.name);
          if (!rules || rules.length === 0) throw grammarError(this.where, `no rule for the symbol #${sym.name}#`);
          const rule = rules.find(
            (r) => r.condition.trim().length === 0 || queryAssignments(view, r.condition, ctx.mapping, this.where, { budget, limit: 1 }).length > 0,
          );
          if (!rule) throw grammarError(this.where, `no rule of #${sym.name}# applies (every rule has a condition and none holds)`);
          budget.spend(HELD * rule.rhs.length);
          for (let k = rule.rhs.length - 1; k >= 0; k--) stack.push({ sym: rule.rhs[k], ctx });
          break;
        }
        case 'eval':
          out += this.evaluate(sym.expr, ctx, budget);
          break;
        case 'conditional':
          for (const item of this.expand(sym, ctx, view, budget).reverse()) stack.push(item);
          break;
        case 'list': {
          const items = this.expand(sym.cond, ctx, view, budget);
          const display: Array<{ sym: Sym; ctx: DeriveContext }> = [];
          if (items.length === 0) display.push({ sym: { kind: 'nonterminal', name: 'list_empty' }, ctx });
          else {
            items.forEach((item, k) => {
              if (k > 0) display.push({ sym: { kind: 'nonterminal', name: k === items.length - 1 ? 'list_last_separator' : 'list_separator' }, ctx });
              display.push(item);
            });
          }
          budget.spend(HELD * display.length);
          for (let k = display.length - 1; k >= 0; k--) stack.push(display[k]);
          break;
        }
      }
    }
    return out;
  }

  /** One copy of the symbol's expression per result of its query (one, without a query). */
  private expand(sym: Extract<Sym, { kind: 'conditional' }>, ctx: DeriveContext, view: FactView, budget: WorkBudget): Array<{ sym: Sym; ctx: DeriveContext }> {
    if (sym.given === null) return [{ sym: sym.expr, ctx }];
    return queryAssignments(view, sym.given, ctx.mapping, this.where, { budget }).map((mapping) => {
      budget.spend(HELD * (1 + ctx.variables.size + mapping.size));
      const variables = new Map(ctx.variables);
      for (const [ph, bound] of mapping) variables.set(ph.slice(0, ph.indexOf(':')), view.entity(bound.name));
      return { sym: sym.expr, ctx: { variables, mapping } };
    });
  }

  /** `{...}` expressions: `x.name`, `x.id`, `x.indefinite`, string literals, `+` and `or` (Python's). */
  private evaluate(expr: string, ctx: DeriveContext, budget: WorkBudget): string {
    const value = evalExpression(expr, ctx, this.where, budget);
    if (value === null) throw grammarError(this.where, `{${expr}} evaluates to None`);
    return typeof value === 'string' ? value : (value.name ?? '');
  }
}

type Value = string | Entity | null;

/** A small evaluator for the expressions of grammar symbols (Python semantics for the operators used). */
function evalExpression(expr: string, ctx: DeriveContext, where: string, budget: WorkBudget): Value {
  const tokens = expr.match(/'[^']*'|"[^"]*"|[A-Za-z_]\w*|\.|\+|\S/g) ?? [];
  budget.spend(1 + tokens.length);
  let i = 0;
  const fail = (why: string): never => {
    throw grammarError(where, `cannot evaluate {${expr}}: ${why}`);
  };
  const atom = (): Value => {
    const t = tokens[i++];
    if (t === undefined) return fail('it ends too early');
    if (t.startsWith("'") || t.startsWith('"')) return t.slice(1, -1);
    if (!/^[A-Za-z_]\w*$/.test(t)) return fail(`unexpected ${JSON.stringify(t)}`);
    const entity = ctx.variables.get(t);
    if (entity === undefined) return fail(`${t} is not bound`);
    if (tokens[i] !== '.') return entity;
    i++;
    const attr = tokens[i++];
    if (attr === 'name' || attr === 'id' || attr === 'type' || attr === 'definite' || attr === 'indefinite') return entity[attr];
    return fail(`unknown attribute ${attr}`);
  };
  const truthy = (v: Value) => (typeof v === 'string' ? v.length > 0 : v !== null);
  const sum = (): Value => {
    let v = atom();
    while (tokens[i] === '+') {
      i++;
      const w = atom();
      if (typeof v !== 'string' || typeof w !== 'string') return fail("'+' joins strings only");
      if (v.length + w.length > MAX_DERIVED_CHARS) return fail(`it makes a text of more than ${MAX_DERIVED_CHARS} characters (the engine's limit)`);
      v = v + w;
    }
    return v;
  };
  let v = sum();
  while (tokens[i] === 'or') {
    i++;
    const w = sum();
    if (!truthy(v)) v = w;
  }
  if (i !== tokens.length) fail(`unexpected ${JSON.stringify(tokens[i])}`);
  return v;
}
