// How the WebShop browser (a shopper that acts only on what the pages show and on its own reflections) does on the
// generated catalog, with and without its memory: pass@1..3 over trials of three episodes, and the mean score.
//
//   npx tsx scripts/webshop-browser.ts [--turns 12] [--tasks 300] [--split train|eval]
import { parseArgs } from 'node:util';
import { WebShopEnv } from '../src/envs/webshop/env.js';
import { WebShopBrowser } from '../src/envs/webshop/browser.js';
import { taskSeed, type SeedSplit } from '../src/envs/common/seeds.js';
import type { TrajectoryStep } from '../src/envs/types.js';

const { values } = parseArgs({
  options: { turns: { type: 'string', default: '12' }, tasks: { type: 'string', default: '300' }, split: { type: 'string', default: 'train' } },
});
if (values.split !== 'train' && values.split !== 'eval') {
  console.error(`--split: expected train or eval, found ${values.split}`);
  process.exit(2);
}
const env = new WebShopEnv({ maxTurns: Number(values.turns) });
const tasks = Number(values.tasks);

function trial(seed: number, memory: boolean): { won: number; firstReward: number } {
  env.reset(seed);
  let player = new WebShopBrowser(env, { style: 'compact' });
  let firstReward = 0;
  for (let e = 0; e < 3; e++) {
    if (e > 0) env.restart();
    if (!memory) player = new WebShopBrowser(env, { style: 'compact' });
    const steps: TrajectoryStep[] = [];
    for (;;) {
      const r = env.step(player.act());
      steps.push({ action: r.historyAction ?? '', observation: r.observation.text });
      if (e === 0) firstReward += r.reward;
      if (r.won) return { won: e, firstReward };
      if (r.done) break;
    }
    player.endEpisode(steps);
  }
  return { won: -1, firstReward };
}

for (const memory of [true, false]) {
  const wins = [0, 0, 0];
  let reward = 0;
  for (let i = 0; i < tasks; i++) {
    const t = trial(taskSeed(values.split as SeedSplit, i), memory);
    if (t.won >= 0) wins[t.won]++;
    reward += t.firstReward;
  }
  const pass = (k: number) => ((100 * wins.slice(0, k).reduce((a, b) => a + b, 0)) / tasks).toFixed(1);
  console.log(
    `${memory ? 'with memory' : 'without memory'}: ${values.turns} turns, ${tasks} ${values.split} goals: pass@1 ${pass(1)} pass@2 ${pass(2)} ` +
      `pass@3 ${pass(3)}; mean first-episode reward ${(reward / tasks).toFixed(2)}`,
  );
}
