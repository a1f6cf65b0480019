// How much of the engine's bounds (src/envs/alfworld/engine/limits.ts, and the planner's MAX_PLAN_STEPS) real games
// use: the work units of grounding, of deriving one text and of deriving the admissible commands of a state, and of a
// planner search, at most over the games given, each played along its walkthrough (every admissible command of every
// state along it tried once on a copy) and planned from six states reached by random commands.
//
//   npx tsx scripts/alfworld-work.ts [--games N] [--textworld TEXTWORLD] [--alfworld ALFWORLD] [GAME.tw-pddl ...]
//
// --games N: N generated games (default 120); --textworld / --alfworld: checkouts of microsoft/TextWorld and
// alfworld/alfworld, for TextWorld's ALFWorld test game (textworld/envs/pddl/tests) under its own domain and grammar
// and under ALFWorld's alfred.pddl and alfred.twl2.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GameLogic, TwPddlGame, type GameFile } from '../src/envs/alfworld/engine/game.js';
import { MAX_DERIVATION_STEPS, MAX_GROUNDING_STEPS, WorkBudget } from '../src/envs/alfworld/engine/limits.js';
import { MAX_PLAN_STEPS, planOperators } from '../src/envs/alfworld/engine/planner.js';
import { loadGameFile } from '../src/envs/alfworld/games/data.js';
import { householdGame, householdProblem, withWalkthrough } from '../src/envs/alfworld/games/generate.js';
import { TASK_TYPES } from '../src/envs/alfworld/games/tasks.js';
import { generateHousehold } from '../src/envs/alfworld/games/world.js';
import { Rng } from '../src/util/rng.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { games: { type: 'string', default: '120' }, textworld: { type: 'string' }, alfworld: { type: 'string' } },
});

// The most any one budget of each kind spent (budgets are made per game, per derivation and per admissible list).
const most = { derive: 0, admissible: 0 };
const spend = WorkBudget.prototype.spend;
WorkBudget.prototype.spend = function (this: WorkBudget, units = 1) {
  spend.call(this, units);
  const kind = this.what.startsWith('deriving the admissible') ? 'admissible' : this.what.startsWith('deriving') ? 'derive' : null;
  if (kind !== null) most[kind] = Math.max(most[kind], this.spent);
};

interface Row {
  name: string;
  games: number;
  operators: number;
  ground: number;
  derive: number;
  admissible: number;
  plan: number;
}

const rng = new Rng(1);

function measure(row: Row, file: GameFile, where: string): void {
  most.derive = most.admissible = 0;
  const logic = new GameLogic(file, where);
  const game = new TwPddlGame(logic);
  game.reset();
  for (const command of logic.walkthrough ?? withWalkthrough(logic).walkthrough!) {
    for (const c of game.admissible()) game.fork().step(c);
    game.step(command);
  }
  game.reset();
  for (let k = 0; k < 6; k++) {
    const stats = { steps: 0 };
    planOperators(logic.task, game.trueState(), { stats });
    row.plan = Math.max(row.plan, stats.steps);
    const commands = game.admissible().filter((c) => c !== 'help');
    for (let r = 0; r < 3; r++) game.step(commands[rng.int(commands.length)] ?? 'look');
  }
  row.games++;
  row.operators = Math.max(row.operators, logic.task.operators.length);
  row.ground = Math.max(row.ground, logic.task.steps);
  row.derive = Math.max(row.derive, most.derive);
  row.admissible = Math.max(row.admissible, most.admissible);
}

const newRow = (name: string): Row => ({ name, games: 0, operators: 0, ground: 0, derive: 0, admissible: 0, plan: 0 });
const rows: Row[] = [];
const generated = newRow('generated');
for (let i = 0; i < Number(values.games); i++) {
  let problem = '';
  const house = generateHousehold(i, TASK_TYPES, (h) => ((problem = householdProblem(h)), true));
  measure(generated, householdGame(house, problem), `generated ${i}`);
}
rows.push(generated);
if (values.textworld) {
  const tests = join(values.textworld, 'textworld/envs/pddl/tests');
  const read = (dir: string, f: string) => readFileSync(join(dir, f), 'utf8');
  const problem = read(tests, 'problem.pddl');
  const own = newRow("TextWorld's test game");
  measure(own, { pddl_domain: read(tests, 'domain.pddl'), pddl_problem: problem, grammar: read(tests, 'grammar.twl2') }, 'textworld test');
  rows.push(own);
  if (values.alfworld) {
    const data = join(values.alfworld, 'alfworld/data');
    const alfred = newRow('the same, alfred.pddl/.twl2');
    measure(alfred, { pddl_domain: read(data, 'alfred.pddl'), pddl_problem: problem, grammar: read(data, 'alfred.twl2') }, 'alfred');
    rows.push(alfred);
  }
}
if (positionals.length > 0) {
  const given = newRow('games given');
  for (const file of positionals) measure(given, loadGameFile(file).game, file);
  rows.push(given);
}

const cell = (n: number, limit?: number) => `${n.toLocaleString('en-US')}${limit ? ` (${((100 * n) / limit).toFixed(2)}%)` : ''}`;
console.log('| games | count | operators | grounding | one text | admissible list | planner |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.name} | ${r.games} | ${cell(r.operators)} | ${cell(r.ground, MAX_GROUNDING_STEPS)} | ${cell(r.derive, MAX_DERIVATION_STEPS)} | ${cell(r.admissible, MAX_DERIVATION_STEPS)} | ${cell(r.plan, MAX_PLAN_STEPS)} |`,
  );
}
console.log(`(most work of one game, text, list or search; in parentheses the share of the engine's limit)`);
