// Hostile game files: every parser of a game file is depth-limited, every derivation and grounding is bounded in
// steps and memory (a coded E_ENV naming the game and the limit, tripping in well under a second), PDDL that Fast
// Downward's translator (aibasel/downward 5ea8024, src/translate/pddl_parser) rejects is refused instead of played,
// a split folder must lie inside the data folder by path segments, and a game folder's files are read only when they
// are regular files of bounded size.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GameLogic, TwPddlGame, type GameFile } from '../../../src/envs/alfworld/engine/game.js';
import { collectGames, loadGameFile, trajTaskType } from '../../../src/envs/alfworld/games/data.js';
import { replayGame } from '../../../src/envs/alfworld/games/check.js';
import { MAX_PLAN_STEPS, planOperators } from '../../../src/envs/alfworld/engine/planner.js';
import { MAX_GAME_FILE_BYTES, MAX_PDDL_DEPTH } from '../../../src/envs/alfworld/engine/limits.js';
import { kitchenFile } from './fixtures.js';

const things = (n: number) => Array.from({ length: n }, (_, i) => `t${i + 1}`);

/** A one-type domain: `look ?x` marks a thing seen; more actions can be added. */
function tinyDomain(actions = '', predicates = ''): string {
  return `(define (domain tiny)
  (:requirements :adl :typing)
  (:types thing)
  (:predicates (p ?x - thing) (q ?x - thing) (seen ?x - thing) ${predicates})
  (:action look :parameters (?x - thing) :precondition (p ?x) :effect (seen ?x))
  ${actions})`;
}

function tinyProblem(n: number, init = '', goal = '(seen t1)'): string {
  return `(define (problem tiny1) (:domain tiny)
  (:objects ${things(n).join(' ')} - thing)
  (:init ${things(n)
    .map((t) => `(p ${t})`)
    .join(' ')} ${init})
  (:goal ${goal}))`;
}

function tinyGrammar(rules: Record<string, Array<{ rhs: string; condition?: string }>> = {}): string {
  const all = { intro: [{ rhs: 'You see things.' }], ...rules };
  return `grammar :: """${JSON.stringify(all)}""";\naction look { template :: "look at {x}"; feedback :: "You look."; }\n`;
}

function tinyFile(parts: Partial<GameFile> = {}): GameFile {
  return { pddl_domain: tinyDomain(), pddl_problem: tinyProblem(3), grammar: tinyGrammar(), solvable: true, walkthrough: null, ...parts };
}

/** Runs `f`, expecting a LamerError E_ENV whose message has every piece, in well under the test's timeout. */
function refused(f: () => unknown, ...pieces: Array<string | RegExp>): void {
  const t0 = performance.now();
  let error: unknown;
  try {
    f();
  } catch (e) {
    error = e;
  }
  const ms = performance.now() - t0;
  expect(error, 'expected a refusal').toBeInstanceOf(Error);
  expect((error as { code?: string }).code, (error as Error).message).toBe('E_ENV');
  for (const p of pieces) expect((error as Error).message).toMatch(p);
  expect(ms).toBeLessThan(5000);
}

const play = (file: GameFile, where = 'hostile game') => new TwPddlGame(new GameLogic(file, where)).reset();

describe('alfworld game files: parsers are depth-limited', () => {
  it('PDDL nested 100,000 deep is refused with E_ENV naming the game, the file part and the limit', () => {
    const deep = '(and '.repeat(100_000) + '(p ?x)' + ')'.repeat(100_000);
    const domain = tinyDomain(`(:action deep :parameters (?x - thing) :precondition ${deep} :effect (q ?x))`);
    refused(() => play(tinyFile({ pddl_domain: domain })), 'hostile game pddl_domain', `${MAX_PDDL_DEPTH}`);
    const goal = '(not '.repeat(100_000) + '(seen t1)' + ')'.repeat(100_000);
    refused(() => play(tinyFile({ pddl_problem: tinyProblem(3, '', goal) })), 'hostile game pddl_problem', `${MAX_PDDL_DEPTH}`);
    // The deepest nesting allowed still plays.
    const ok = '(not '.repeat(MAX_PDDL_DEPTH - 4) + '(seen t1)' + ')'.repeat(MAX_PDDL_DEPTH - 4);
    expect(play(tinyFile({ pddl_problem: tinyProblem(3, '', ok) }))).toBe('You see things.');
  });

  it('a grammar query of 100,000 predicates is refused (its search was recursive in the predicates)', () => {
    const condition = Array.from({ length: 100_000 }, () => 'p(x:thing)').join(' & ');
    refused(() => play(tinyFile({ grammar: tinyGrammar({ intro: [{ rhs: 'long', condition }, { rhs: 'short' }] }) })), 'hostile game grammar', /predicates/);
  });

  it('a flat precondition of 100,000 literals is refused (its binding search was recursive in the literals)', () => {
    const wide = `(and ${'(p ?x) '.repeat(100_000)})`;
    refused(
      () => play(tinyFile({ pddl_domain: tinyDomain(`(:action wide :parameters (?x - thing) :precondition ${wide} :effect (q ?x))`) })),
      'hostile game',
      /literals/,
    );
  });
});

describe('alfworld game files: derivations are bounded', () => {
  it('a rule that derives itself, or grows its text forever, stops with E_ENV naming the game and the limit', () => {
    refused(
      () => play(tinyFile({ grammar: tinyGrammar({ intro: [{ rhs: '#loop#' }], loop: [{ rhs: '#loop#' }] }) })),
      'hostile game grammar',
      /#intro#.*steps/,
    );
    refused(
      () => play(tinyFile({ grammar: tinyGrammar({ intro: [{ rhs: '#grow#' }], grow: [{ rhs: 'more text #grow#' }] }) })),
      'hostile game grammar',
      /#intro#/,
    );
  });

  it('a condition joining six queries over 60 facts, with no result, stops with E_ENV', () => {
    const condition = ['a', 'b', 'c', 'd', 'e', 'f'].map((v) => `p(${v}:thing)`).join(' & ') + ' & q(z:thing)';
    refused(
      () => play(tinyFile({ pddl_problem: tinyProblem(60), grammar: tinyGrammar({ intro: [{ rhs: 'joined', condition }, { rhs: 'plain' }] }) })),
      'hostile game grammar',
      /steps/,
    );
  });

  it('a list over a six-way join (36 billion items) stops with E_ENV', () => {
    const query = ['a', 'b', 'c', 'd', 'e', 'f'].map((v) => `p(${v}:thing)`).join(' & ');
    refused(
      () => play(tinyFile({ pddl_problem: tinyProblem(60), grammar: tinyGrammar({ intro: [{ rhs: `[{a.name | ${query}}]` }] }) })),
      'hostile game grammar',
    );
  });
});

describe('alfworld game files: grounding is bounded', () => {
  it('a precondition with 25 `or`s (2^25 disjuncts) is refused', () => {
    const ors = Array.from({ length: 25 }, () => '(or (p ?x) (q ?x))').join(' ');
    refused(
      () => play(tinyFile({ pddl_domain: tinyDomain(`(:action many :parameters (?x - thing) :precondition (and ${ors}) :effect (q ?x))`) })),
      'hostile game',
      /steps/,
    );
  });

  it('an action with four unconstrained parameters over 200 objects (1.6 billion bindings) is refused', () => {
    const action = '(:action four :parameters (?a ?b ?c ?d - thing) :precondition () :effect (q ?a))';
    refused(() => play(tinyFile({ pddl_domain: tinyDomain(action), pddl_problem: tinyProblem(200) })), 'hostile game', /steps/);
  });

  it('a forall over four variables in a precondition, and one in an effect, are refused', () => {
    const pre = '(:action all :parameters (?x - thing) :precondition (forall (?a ?b ?c ?d - thing) (p ?a)) :effect (q ?x))';
    refused(() => play(tinyFile({ pddl_domain: tinyDomain(pre), pddl_problem: tinyProblem(200) })), 'hostile game', /steps/);
    const eff = '(:action all :parameters (?x - thing) :precondition (p ?x) :effect (forall (?a ?b ?c ?d - thing) (q ?a)))';
    refused(() => play(tinyFile({ pddl_domain: tinyDomain(eff), pddl_problem: tinyProblem(200) })), 'hostile game', /steps/);
  });

  it('the fixture games still ground and play', () => {
    expect(play(kitchenFile(), 'kitchen')).toContain('Your task is to: put a hot apple in cabinet.');
  });

  it('the planner gives up (no plan) past its work bound, and reports the work done', () => {
    const logic = new GameLogic(kitchenFile(), 'kitchen');
    const start = new TwPddlGame(logic).trueState();
    const stats = { steps: 0 };
    expect(planOperators(logic.task, start, { stats })?.length).toBeGreaterThan(0);
    expect(stats.steps).toBeGreaterThan(0);
    expect(stats.steps).toBeLessThan(MAX_PLAN_STEPS / 100);
    expect(planOperators(logic.task, start, { maxSteps: stats.steps / 10, stats })).toBeNull();
  });
});

describe("alfworld game files: PDDL that Fast Downward's translator rejects is refused", () => {
  it('text after the last `)` of the domain or the problem', () => {
    refused(() => play(tinyFile({ pddl_domain: `${tinyDomain()} (extra)` })), 'pddl_domain', /after the closing/);
    refused(() => play(tinyFile({ pddl_problem: `${tinyProblem(3)} x` })), 'pddl_problem', /after the closing/);
    // A comment after it is no text.
    expect(play(tinyFile({ pddl_problem: `${tinyProblem(3)} ; the end` }))).toBe('You see things.');
  });

  it('undeclared predicates in a precondition, an effect, :init or the goal', () => {
    refused(
      () => play(tinyFile({ pddl_domain: tinyDomain('(:action a :parameters (?x - thing) :precondition (r ?x) :effect (q ?x))') })),
      /undeclared predicate r/,
    );
    refused(
      () => play(tinyFile({ pddl_domain: tinyDomain('(:action a :parameters (?x - thing) :precondition (p ?x) :effect (r ?x))') })),
      /undeclared predicate r/,
    );
    refused(() => play(tinyFile({ pddl_problem: tinyProblem(3, '(r t1)') })), 'pddl_problem', /undeclared predicate r/);
    refused(() => play(tinyFile({ pddl_problem: tinyProblem(3, '', '(r t1)') })), 'pddl_problem', /undeclared predicate r/);
    // A predicate used with another number of arguments than declared.
    refused(() => play(tinyFile({ pddl_problem: tinyProblem(3, '(p t1 t2)') })), /p takes 1 argument/);
  });

  it('objects of an undeclared type, and objects or variables never declared', () => {
    refused(() => play(tinyFile({ pddl_problem: tinyProblem(3).replace('(:objects', '(:objects w1 - widget') })), /undeclared type widget/);
    refused(() => play(tinyFile({ pddl_problem: tinyProblem(3, '(q t9)') })), 'pddl_problem', /undeclared object t9/);
    refused(() => play(tinyFile({ pddl_problem: tinyProblem(3, '', '(seen t9)') })), 'pddl_problem', /undeclared object t9/);
    refused(
      () => play(tinyFile({ pddl_domain: tinyDomain('(:action a :parameters (?x - thing) :precondition (p ?y) :effect (q ?x))') })),
      /undeclared variable \?y/,
    );
    refused(
      () => play(tinyFile({ pddl_domain: tinyDomain('(:action a :parameters (?x - thing) :precondition (p t9) :effect (q ?x))') })),
      'with the domain',
      /undeclared object t9/,
    );
    // An action may name an object the problem declares (ALFWorld's domain names `SinkBasinType`, which each problem
    // declares): TextWorld's translator takes a domain's constants from the problem.
    const withA = { grammar: `${tinyGrammar()}action a { template :: "a {x}"; feedback :: "A."; }\n` };
    expect(play(tinyFile({ pddl_domain: tinyDomain('(:action a :parameters (?x - thing) :precondition (p t1) :effect (q ?x))'), ...withA }))).toBe(
      'You see things.',
    );
    refused(() => play(tinyFile({ pddl_problem: tinyProblem(3).replace('(:objects', '(:objects t1 - thing') })), /t1 is declared twice/);
  });

  it("a problem for another domain than the game's", () => {
    refused(() => play(tinyFile({ pddl_problem: tinyProblem(3).replace('(:domain tiny)', '(:domain other)') })), 'pddl_problem', /domain other/);
    refused(() => play(tinyFile({ pddl_problem: tinyProblem(3).replace('(:domain tiny)', '') })), 'pddl_problem', /no \(:domain NAME\)/);
  });

  it('a cycle in the type hierarchy', () => {
    const domain = tinyDomain().replace('(:types thing)', '(:types thing - a a - b b - thing)');
    refused(() => play(tinyFile({ pddl_domain: domain })), 'pddl_domain', /type cycle/);
    // `object` declared under itself (ALFWorld's domains list it among their types) is the root, not a cycle.
    expect(play(tinyFile({ pddl_domain: tinyDomain().replace('(:types thing)', '(:types thing object)') }))).toBe('You see things.');
  });

  it('characters outside ASCII outside comments', () => {
    refused(() => play(tinyFile({ pddl_problem: tinyProblem(3).replace('(:init', '(:init (p tü)') })), /ASCII/);
    expect(play(tinyFile({ pddl_problem: tinyProblem(3).replace('(:init', '(:init ; tü\n') }))).toBe('You see things.');
  });
});

/** A data folder with one valid game under d1/train and one under the sibling d1x/train. */
function dataFolders(): { root: string; d1: string } {
  const root = mkdtempSync(join(tmpdir(), 'lamer-alfw-hostile-'));
  for (const top of ['d1', 'd1x']) {
    const dir = join(root, top, 'train', 'pick_and_place_simple-Apple-None-Cabinet-1', 'trial_1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'game.tw-pddl'), JSON.stringify(kitchenFile()));
    writeFileSync(join(dir, 'traj_data.json'), JSON.stringify({ task_type: 'pick_and_place_simple' }));
  }
  return { root, d1: join(root, 'd1') };
}

const hasMkfifo = (() => {
  try {
    execFileSync('mkfifo', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('alfworld data folders', () => {
  it('a split folder must lie inside dataDir by path segments: ../d1x/train under d1 is refused', () => {
    const { d1 } = dataFolders();
    expect(collectGames(d1, ['train'], ['pick_and_place_simple']).games).toHaveLength(1);
    refused(() => collectGames(d1, ['../d1x/train'], ['pick_and_place_simple']), /not a folder under/);
    refused(() => collectGames(d1, ['..'], ['pick_and_place_simple']), /not a folder under/);
  });

  it.skipIf(!hasMkfifo)('a named pipe as game.tw-pddl or traj_data.json is refused at once, not read', () => {
    const { d1 } = dataFolders();
    const trial = join(d1, 'train', 'pick_and_place_simple-Apple-None-Cabinet-1', 'trial_1');
    const game = join(trial, 'game.tw-pddl');
    truncateSync(game, 0);
    execFileSync('rm', [game]);
    execFileSync('mkfifo', [game]);
    refused(() => loadGameFile(game), game, /named pipe/);
    expect(collectGames(d1, ['train'], ['pick_and_place_simple']).skipped).toEqual({ 'game.tw-pddl unreadable': 1 });
    expect(replayGame(game, '.', null)).toMatchObject({ ok: false, problem: expect.stringMatching(/named pipe/) });
    const traj = join(trial, 'traj_data.json');
    execFileSync('rm', [traj]);
    execFileSync('mkfifo', [traj]);
    expect(trajTaskType(trial)).toMatch(/named pipe/);
  });

  it('/dev/zero behind a game file name, and a game file past the size bound, are refused without reading them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-alfw-hostile-'));
    const zero = join(dir, 'zero.tw-pddl');
    symlinkSync('/dev/zero', zero);
    refused(() => loadGameFile(zero), zero, /device/);
    const big = join(dir, 'big.tw-pddl');
    writeFileSync(big, '');
    truncateSync(big, MAX_GAME_FILE_BYTES + 1);
    refused(() => loadGameFile(big), big, `${MAX_GAME_FILE_BYTES}`);
  });
});
