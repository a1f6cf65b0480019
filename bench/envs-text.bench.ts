// Throughput of the text environments (WebShop, ALFWorld): steps per second under a random player that picks among
// the admissible actions (WebShop searches with the request's words, since a random query string says nothing),
// with restarts and new tasks whenever an episode ends; plus WebShop searches and ALFWorld task generation.
// bench/run.ts collects `benches`; running this file directly prints the figures.

import { pathToFileURL } from 'node:url';
import { Rng } from '../src/util/rng.js';
import { createAlfWorldEnv } from '../src/envs/alfworld/index.js';
import { createWebShopEnv, searchQueryFor } from '../src/envs/webshop/index.js';
import type { Environment } from '../src/envs/types.js';

/** Long enough to average out timer noise, short enough for 2 shared cores. */
const SECONDS = 1;

function timed(body: () => number): () => Promise<number> {
  return async () => {
    let count = 0;
    const start = performance.now();
    const end = start + SECONDS * 1000;
    while (performance.now() < end) count += body();
    return count / ((performance.now() - start) / 1000);
  };
}

function randomPlayer(env: Environment, chooseSearch: () => string): () => number {
  const rng = new Rng(1);
  let seed = 0;
  let episodes = 0;
  env.reset(seed);
  return () => {
    for (let i = 0; i < 100; i++) {
      const actions = env.admissibleActions();
      const action = actions[0]?.startsWith('search[') ? chooseSearch() : rng.pick(actions);
      const r = env.step(`I choose.\n<action>${action}</action>`);
      if (r.done) {
        // Alternate restart (same task, as in later episodes of a trial) and reset (a new task).
        if (++episodes % 2 === 0) env.restart();
        else env.reset(++seed);
      }
    }
    return 100;
  };
}

function webShopSteps(): () => Promise<number> {
  const env = createWebShopEnv();
  return timed(randomPlayer(env, () => `search[${searchQueryFor(env.goal)}]`));
}

function webShopSearches(): () => Promise<number> {
  const env = createWebShopEnv();
  let seed = 0;
  return timed(() => {
    env.reset(seed++);
    env.searchResults(searchQueryFor(env.goal));
    return 1;
  });
}

function alfWorldSteps(): () => Promise<number> {
  const env = createAlfWorldEnv();
  return timed(randomPlayer(env, () => 'look'));
}

function alfWorldResets(): () => Promise<number> {
  const env = createAlfWorldEnv();
  let seed = 0;
  return timed(() => {
    env.reset(seed++);
    return 1;
  });
}

export const benches = [
  { name: 'webshop.step', unit: 'steps/s', run: async () => webShopSteps()() },
  { name: 'webshop.search', unit: 'searches/s', run: async () => webShopSearches()() },
  { name: 'alfworld.step', unit: 'steps/s', run: async () => alfWorldSteps()() },
  { name: 'alfworld.reset', unit: 'resets/s', run: async () => alfWorldResets()() },
];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const b of benches) console.log(`${b.name}: ${(await b.run()).toFixed(0)} ${b.unit}`);
}
