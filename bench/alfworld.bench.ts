// Speed of the ALFWorld .tw-pddl engine: steps per second on a generated game (random admissible commands, every
// step deriving the feedback and the next admissible list from the grammar), the same through the environment (LaMer's
// projection, the observation text), and the time to load a folder of 1,000 games: collecting them as the
// environment does (read, parse the JSON, hash, sort) and, separately, parsing and grounding every one (what the first
// reset of each game costs). The 1,000 games are lamer's generated ones, written once to a temporary folder.
// bench/run.ts collects `benches`; running this file directly prints the figures.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Rng } from '../src/util/rng.js';
import { taskSeed } from '../src/envs/common/seeds.js';
import {
  GameLogic,
  TwPddlGame,
  collectGames,
  createAlfWorldEnv,
  generateHousehold,
  householdGame,
  loadGameFile,
  writeGeneratedGames,
} from '../src/envs/alfworld/index.js';
import { IN_DISTRIBUTION_TYPES, TASK_TYPES } from '../src/envs/alfworld/games/tasks.js';

const SECONDS = 2;
const GAMES = 1000;

/** Steps per second of random admissible commands on one generated game, restarting it when won. */
async function engineSteps(): Promise<number> {
  const game = new TwPddlGame(new GameLogic(householdGame(generateHousehold(taskSeed('train', 0), TASK_TYPES)), 'bench'));
  game.reset();
  const rng = new Rng(1);
  let steps = 0;
  const start = performance.now();
  while (performance.now() - start < SECONDS * 1000) {
    game.step(rng.pick(game.admissible()));
    if (game.won()) game.reset();
    steps++;
  }
  return steps / ((performance.now() - start) / 1000);
}

/** The same through the environment: a response parsed, the step, the observation with its admissible list. */
async function envSteps(): Promise<number> {
  const env = createAlfWorldEnv({ maxTurns: 30 });
  env.reset(taskSeed('train', 0));
  const rng = new Rng(1);
  let steps = 0;
  const start = performance.now();
  while (performance.now() - start < SECONDS * 1000) {
    const r = env.step(`I choose.\n<action>${rng.pick(env.admissibleActions())}</action>`);
    if (r.done) env.restart();
    steps++;
  }
  return steps / ((performance.now() - start) / 1000);
}

async function loadFolder(): Promise<Array<{ name: string; value: number; unit: string }>> {
  const dir = mkdtempSync(join(tmpdir(), 'alfworld-bench-'));
  try {
    writeGeneratedGames(dir, { train: GAMES, eval: 0, taskTypes: IN_DISTRIBUTION_TYPES });
    let t0 = performance.now();
    const { games } = collectGames(dir, ['train'], IN_DISTRIBUTION_TYPES);
    const collect = (performance.now() - t0) / 1000;
    t0 = performance.now();
    let operators = 0;
    for (const g of games) operators += new GameLogic(loadGameFile(g.file).game, g.path).task.operators.length;
    const ground = (performance.now() - t0) / 1000;
    return [
      { name: `alfworld.load ${games.length} games (collect: read, hash, sort)`, value: collect, unit: 's' },
      {
        name: `alfworld.load ${games.length} games (parse and ground all; ${Math.round(operators / games.length)} operators a game)`,
        value: ground,
        unit: 's',
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benches = [
  { name: 'alfworld.engine.step (generated game, random admissible commands)', unit: 'steps/s', run: engineSteps },
  { name: 'alfworld.env.step (projection, step, observation)', unit: 'steps/s', run: envSteps },
  { name: 'alfworld.load', unit: 's', run: loadFolder },
];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const b of benches) {
    const r = await b.run();
    if (typeof r === 'number') console.log(`${b.name}: ${r.toFixed(0)} ${b.unit}`);
    else for (const x of r) console.log(`${x.name}: ${x.value.toFixed(2)} ${x.unit}`);
  }
}
