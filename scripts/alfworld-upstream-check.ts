// Checks lamer's ALFWorld engine against the upstream code it follows, on upstream game files:
//
//   npx tsx scripts/alfworld-upstream-check.ts TEXTWORLD ALFWORLD DOWNWARD_SRC [GAME.tw-pddl ...]
//
// TEXTWORLD, ALFWORLD: checkouts of github.com/microsoft/TextWorld and github.com/alfworld/alfworld; DOWNWARD_SRC: the
// src folder of a checkout of github.com/aibasel/downward. The games: TextWorld's own ALFWorld test game (its
// textworld/envs/pddl/tests domain.pddl, problem.pddl and grammar.twl2, the game TextWorld's test plays to a win with
// its policy commands), ALFWorld's domain and grammar (alfworld/data/alfred.pddl and alfred.twl2, the goal sentence
// filled in) with that problem, and any game files given. For each game it plays the planner's commands from the
// start and checks:
//   * every admissible command at every state of the walk executes (never "Nothing happens."), and the goal holds at
//     the end;
//   * the entity names equal those of ALFWorld's Demangler run on the same ids (scripts/py/alfworld_demangle_reference.py);
//   * the grounding along the walk equals Fast Downward's translator's (scripts/alfworld-fd-check.ts);
//   * for a generated game (the project's domain and grammar, engine/logic-text.ts): the same game with ALFWorld's
//     alfred.pddl and alfred.twl2 in their place gives the same intro, admissible commands (but `help`, whose text is
//     the project's), feedback and goal along the walk, both played by lamer's engine.
// Prints one line per game and exits 1 on any difference. Needs python3. It does not run TextWorld itself (its PDDL
// backend needs a compiled fork of Fast Downward): the texts are not compared with TextWorld's.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { demangleNames } from '../src/envs/alfworld/engine/demangle.js';
import { GameLogic, NOTHING_HAPPENS, TwPddlGame, type GameFile } from '../src/envs/alfworld/engine/game.js';
import { planOperators } from '../src/envs/alfworld/engine/planner.js';
import { GENERATED_DOMAIN } from '../src/envs/alfworld/engine/logic-text.js';
import { loadGameFile } from '../src/envs/alfworld/games/data.js';

const [textworld, alfworld, downward, ...given] = process.argv.slice(2);
if (!textworld || !alfworld || !downward) {
  console.error('usage: npx tsx scripts/alfworld-upstream-check.ts TEXTWORLD ALFWORLD DOWNWARD_SRC [GAME.tw-pddl ...]');
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const read = (root: string, path: string) => readFileSync(join(root, path), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'alfworld-upstream-'));
const tests = 'textworld/envs/pddl/tests';
const problem = read(textworld, `${tests}/problem.pddl`);
const alfredDomain = read(alfworld, 'alfworld/data/alfred.pddl');
const alfredGrammar = read(alfworld, 'alfworld/data/alfred.twl2');
const games: Array<{ label: string; file: string }> = [];
const write = (label: string, game: GameFile) => {
  const file = join(dir, `${label}.tw-pddl`);
  writeFileSync(file, JSON.stringify(game));
  games.push({ label, file });
};
write('textworld-test', { pddl_domain: read(textworld, `${tests}/domain.pddl`), pddl_problem: problem, grammar: read(textworld, `${tests}/grammar.twl2`) });
write('alfworld-domain', {
  pddl_domain: alfredDomain,
  pddl_problem: problem,
  grammar: alfredGrammar.replace('UNKNOWN GOAL', 'examine the cd with the desklamp'),
});
for (const file of given) games.push({ label: file, file });

/** Differences between a generated game and the same problem under ALFWorld's domain and grammar, along `commands`. */
function alfredDifferences(data: GameFile, file: string, commands: readonly string[]): string[] {
  const goal = /Your task is to: ([^"]*?)\."/.exec(data.grammar)?.[1] ?? 'UNKNOWN GOAL';
  const mine = new TwPddlGame(new GameLogic(data, file));
  const theirs = new TwPddlGame(new GameLogic({ ...data, pddl_domain: alfredDomain, grammar: alfredGrammar.replace('UNKNOWN GOAL', goal) }, file));
  const out: string[] = [];
  const compare = (what: string, a: unknown, b: unknown) => {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${what}: ${JSON.stringify(a)}, under ALFWorld's ${JSON.stringify(b)}`);
  };
  compare('intro', mine.reset(), theirs.reset());
  const listed = (g: TwPddlGame) => g.admissible().filter((c) => c !== 'help');
  for (const command of commands) {
    compare(`admissible before ${command}`, listed(mine), listed(theirs));
    compare(`feedback of ${command}`, mine.step(command).feedback, theirs.step(command).feedback);
    compare(`goal after ${command}`, mine.won(), theirs.won());
  }
  compare('admissible at the end', listed(mine), listed(theirs));
  return out;
}

let failed = 0;
for (const { label, file } of games) {
  const problems: string[] = [];
  const data = loadGameFile(file).game;
  const game = new TwPddlGame(new GameLogic(data, file));
  game.reset();
  const plan = planOperators(game.logic.task, game.trueState());
  const commands: string[] = [];
  let listed = 0;
  if (plan === null) problems.push('the planner finds no plan');
  for (let i = 0; plan !== null && i <= plan.length; i++) {
    for (const command of game.admissible()) {
      listed++;
      const r = game.fork().step(command);
      if (!r.applied || r.feedback === NOTHING_HAPPENS) problems.push(`after [${commands.join(', ')}]: ${JSON.stringify(command)} is listed but does nothing`);
    }
    if (i === plan.length) break;
    const command = game.commandOf(plan[i]);
    if (command === undefined) {
      problems.push(`after [${commands.join(', ')}]: the planned operator ${plan[i].name} has no admissible command`);
      break;
    }
    commands.push(command);
    if (!game.step(command).applied) {
      problems.push(`after [${commands.join(', ')}]: the planned command does nothing`);
      break;
    }
  }
  if (!game.won()) problems.push("the goal does not hold after the planner's commands");

  const ids = [...game.logic.entities.keys()];
  const names = demangleNames(ids);
  const ref = spawnSync('python3', [join(here, 'py', 'alfworld_demangle_reference.py'), alfworld], { input: JSON.stringify(ids), encoding: 'utf8' });
  if (ref.status !== 0) problems.push(`ALFWorld's Demangler did not run: ${ref.stderr.trim()}`);
  else {
    const upstream = JSON.parse(ref.stdout) as Record<string, string>;
    for (const id of ids)
      if (upstream[id] !== names.get(id)) problems.push(`${id}: lamer names it ${JSON.stringify(names.get(id))}, ALFWorld ${JSON.stringify(upstream[id])}`);
  }

  const fd = spawnSync('npx', ['tsx', join(here, 'alfworld-fd-check.ts'), downward, file, ...commands], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const fdLine = (fd.stdout + fd.stderr).trim();
  if (fd.status !== 0) problems.push(`Fast Downward: ${fdLine}`);

  const generated = data.pddl_domain === GENERATED_DOMAIN;
  if (generated) problems.push(...alfredDifferences(data, file, commands));

  if (problems.length > 0) failed++;
  const summary =
    `${ids.length} names as ALFWorld's, ${listed} listed commands along ${commands.length} planned, ` +
    `${fd.status === 0 ? fdLine : 'Fast Downward differs'}${generated ? ", texts as under ALFWorld's domain and grammar" : ''}`;
  console.log(`${problems.length === 0 ? 'ok  ' : 'FAIL'}  ${label}  ${summary}`);
  for (const p of problems.slice(0, 10)) console.log(`      ${p}`);
}
console.log(`alfworld upstream check: ${games.length} games, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
