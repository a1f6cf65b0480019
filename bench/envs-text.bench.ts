// Throughput of the text environments (WebShop, ALFWorld): steps per second under a random player that picks among
// the admissible actions (WebShop searches with the request's words, since a random query string says nothing),
// with restarts and new tasks whenever an episode ends; plus WebShop searches and ALFWorld task generation, and the
// time of one WebShop step on a 100,000-character action of each shape (the action text a model writes is unbounded).
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

/** 100,000-character actions: whitespace, brackets and a mix, each whole and inside the brackets of an action. */
export function longActions(n = 100_000): Record<string, string> {
  const mix = ' \t[ ]\t\n '.repeat(Math.ceil(n / 8)).slice(0, n - 8);
  return {
    spaces: ' '.repeat(n),
    'search[spaces]': `search[${' '.repeat(n - 8)}]`,
    'search[a]spaces': `search[a]${' '.repeat(n - 10)}x`,
    tabs: '\t'.repeat(n),
    'search[tabs]': `search[${'\t'.repeat(n - 8)}]`,
    newlines: '\n'.repeat(n),
    'search[newlines]': `search[${'\n'.repeat(n - 8)}]`,
    brackets: `${'['.repeat(n / 2)}${']'.repeat(n / 2)}`,
    'click[brackets]': `click[x${'[]'.repeat(n / 2 - 4)}]`,
    mixed: `a${mix}bcdefgh`,
    'search[mixed]': `search[${mix}]`,
  };
}

/** Milliseconds of one env.step on each long action: the median of 7, after one unmeasured step. */
function webShopLongActions(): Promise<Array<{ name: string; value: number; unit: string }>> {
  const env = createWebShopEnv();
  env.reset(1);
  const rows = Object.entries(longActions()).map(([shape, action]) => {
    const response = `I think so.\n<action>${action}</action>`;
    const times: number[] = [];
    for (let i = 0; i <= 7; i++) {
      env.restart();
      const start = performance.now();
      env.step(response);
      if (i > 0) times.push(performance.now() - start);
    }
    return { name: `webshop.step.100k-action.${shape}`, value: times.sort((a, b) => a - b)[3], unit: 'ms (median of 7)' };
  });
  return Promise.resolve(rows);
}

export const benches = [
  { name: 'webshop.step', unit: 'steps/s', run: async () => webShopSteps()() },
  { name: 'webshop.search', unit: 'searches/s', run: async () => webShopSearches()() },
  { name: 'webshop.step.100k-action', unit: 'ms', run: webShopLongActions },
  { name: 'alfworld.step', unit: 'steps/s', run: async () => alfWorldSteps()() },
  { name: 'alfworld.reset', unit: 'resets/s', run: async () => alfWorldResets()() },
];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const b of benches) {
    const r = await b.run();
    for (const row of typeof r === 'number' ? [{ name: b.name, value: r, unit: b.unit }] : r) console.log(`${row.name}: ${row.value.toFixed(1)} ${row.unit}`);
  }
}
