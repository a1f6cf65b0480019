// Environment throughput: steps per second of each environment under a random player (its own admissible actions,
// wrapped in <action> tags), resets included whenever an episode ends, and task generation (reset) per second.
// bench/run.ts collects `benches`; running this file directly prints the figures.

import { pathToFileURL } from 'node:url';
import { Rng } from '../src/util/rng.js';
import { createEnv } from '../src/envs/registry.js';
import type { Environment } from '../src/envs/types.js';

export interface Bench {
  name: string;
  unit: string;
  run: () => Promise<number>;
}

/** Long enough to average out timer noise, short enough for 2 shared cores. */
const SECONDS = 1;

function stepsPerSecond(makeEnv: () => Environment): () => Promise<number> {
  return async () => {
    const env = makeEnv();
    const rng = new Rng(1);
    let seed = 0;
    env.reset(seed);
    // Responses are prepared outside the timed loop only when cheap; admissibleActions() is part of a real step loop.
    let steps = 0;
    const start = performance.now();
    const end = start + SECONDS * 1000;
    while (performance.now() < end) {
      for (let i = 0; i < 100; i++) {
        const actions = env.admissibleActions();
        const action = actions.length > 0 ? rng.pick(actions) : '';
        const r = env.step(`I choose.\n<action>${action}</action>`);
        steps++;
        if (r.done) {
          if (steps % 2 === 0) env.restart();
          else env.reset(++seed);
        }
      }
    }
    return steps / ((performance.now() - start) / 1000);
  };
}

function resetsPerSecond(makeEnv: () => Environment): () => Promise<number> {
  return async () => {
    const env = makeEnv();
    let seed = 0;
    const start = performance.now();
    const end = start + SECONDS * 1000;
    while (performance.now() < end) for (let i = 0; i < 10; i++) env.reset(seed++);
    return seed / ((performance.now() - start) / 1000);
  };
}

export const benches: Bench[] = [
  { name: 'sokoban.step', unit: 'steps/s', run: stepsPerSecond(() => createEnv('sokoban')) },
  { name: 'sokoban.reset', unit: 'resets/s', run: resetsPerSecond(() => createEnv('sokoban')) },
  { name: 'minesweeper.step', unit: 'steps/s', run: stepsPerSecond(() => createEnv('minesweeper')) },
  { name: 'minesweeper.reset', unit: 'resets/s', run: resetsPerSecond(() => createEnv('minesweeper')) },
  { name: 'webshop.step', unit: 'steps/s', run: stepsPerSecond(() => createEnv('webshop')) },
  { name: 'webshop.reset', unit: 'resets/s', run: resetsPerSecond(() => createEnv('webshop')) },
  { name: 'alfworld.step', unit: 'steps/s', run: stepsPerSecond(() => createEnv('alfworld')) },
  { name: 'alfworld.reset', unit: 'resets/s', run: resetsPerSecond(() => createEnv('alfworld')) },
];

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const bench of benches) {
    const value = await bench.run();
    console.log(`${bench.name.padEnd(22)} ${value.toFixed(0).padStart(10)} ${bench.unit}`);
  }
}
