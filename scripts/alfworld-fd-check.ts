// Compares lamer's ALFWorld grounding with Fast Downward's translator on one game file:
//
//   npx tsx scripts/alfworld-fd-check.ts DOWNWARD_SRC GAME.tw-pddl [COMMAND ...]
//
// Plays the commands (default: the game's walkthrough) with lamer's engine, then hands the domain, the problem and the
// applied operators to scripts/py/alfworld_fd_reference.py (Fast Downward's translator from a checkout of
// github.com/aibasel/downward, and a simulation of the SAS task as TextWorld's libdownward runs it), and compares the
// operator count, the applicable operators before every command and after the last, each applied operator's effects
// and the goal after every command. Exits 1 on any difference, printing it. Needs python3.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadGameFile } from '../src/envs/alfworld/games/data.js';
import { GameLogic, TwPddlGame } from '../src/envs/alfworld/engine/game.js';

const [downward, file, ...given] = process.argv.slice(2);
if (!downward || !file) {
  console.error('usage: npx tsx scripts/alfworld-fd-check.ts DOWNWARD_SRC GAME.tw-pddl [COMMAND ...]');
  process.exit(2);
}
const { game: data } = loadGameFile(file);
const game = new TwPddlGame(new GameLogic(data, file));
game.reset();
const commands = given.length > 0 ? given : [...(data.walkthrough ?? [])];
const atomText = (e: { atom: number; negated: boolean }) => {
  const a = game.logic.task.atoms[e.atom];
  return `${e.negated ? 'NegatedAtom' : 'Atom'} ${a.pred}(${a.args.join(', ')})`;
};
const applicable = () => [...new Set(game.logic.task.operators.filter((op) => game.commandOf(op) !== undefined).map((op) => op.name))].sort();
const mine: Array<{ applicable: string[]; effects?: string[]; goal?: boolean }> = [];
const ops: string[] = [];
for (const command of commands) {
  const op = game.logic.task.operators.find((o) => game.commandOf(o) === command);
  if (op === undefined) {
    console.error(`${command}: not admissible in lamer's engine`);
    process.exit(1);
  }
  mine.push({ applicable: applicable(), effects: op.effects.map(atomText).sort() });
  ops.push(op.name);
  game.step(command);
  mine[mine.length - 1].goal = game.won();
}
mine.push({ applicable: applicable() });
const spec = join(mkdtempSync(join(tmpdir(), 'alfworld-fd-')), 'spec.json');
writeFileSync(spec, JSON.stringify({ domain: data.pddl_domain, problem: data.pddl_problem, ops }));
const script = join(dirname(fileURLToPath(import.meta.url)), 'py', 'alfworld_fd_reference.py');
const run = spawnSync('python3', [script, downward, spec], { encoding: 'utf8', maxBuffer: 1 << 28 });
if (run.status !== 0) {
  console.error(run.stderr);
  process.exit(1);
}
const ref = JSON.parse(run.stdout) as { operators: number; trace: Array<{ applicable: string[]; effects?: string[]; goal?: boolean }> };
const problems: string[] = [];
if (ref.operators !== game.logic.task.operators.length) problems.push(`operators: lamer ${game.logic.task.operators.length}, Fast Downward ${ref.operators}`);
mine.forEach((m, i) => {
  const r = ref.trace[i];
  const at = i < commands.length ? `before ${JSON.stringify(commands[i])}` : 'at the end';
  if (r === undefined) return void problems.push(`${at}: Fast Downward's trace ends early`);
  if (JSON.stringify(m.applicable) !== JSON.stringify(r.applicable)) problems.push(`${at}: applicable operators differ`);
  if (m.effects && JSON.stringify(m.effects) !== JSON.stringify([...(r.effects ?? [])].sort())) problems.push(`${at}: effects differ`);
  if (m.goal !== r.goal) problems.push(`${at}: goal ${m.goal} against ${r.goal}`);
});
console.log(problems.length === 0 ? `equal: ${ref.operators} operators, ${commands.length} commands` : problems.join('\n'));
process.exit(problems.length === 0 ? 0 : 1);
