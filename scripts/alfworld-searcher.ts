// How the ALFWorld search player (the warm start's demonstrator) does on generated games, with and without its
// memory: pass@1..3 over trials of three episodes, and per task type the episode of the win.
//
//   npx tsx scripts/alfworld-searcher.ts [--household small|standard] [--turns 10] [--tasks 300] [--split train|eval]
//
// Training seeds play task types 1-4, evaluation seeds all six (the environment's defaults).
import { parseArgs } from 'node:util';
import { AlfWorldEnv, AlfWorldSearchPlayer, type HouseholdSize } from '../src/envs/alfworld/index.js';
import { taskSeed, type SeedSplit } from '../src/envs/common/seeds.js';
import type { TrajectoryStep } from '../src/envs/types.js';

const { values } = parseArgs({
  options: {
    household: { type: 'string', default: 'small' },
    turns: { type: 'string', default: '10' },
    tasks: { type: 'string', default: '300' },
    split: { type: 'string', default: 'train' },
  },
});
if (values.split !== 'train' && values.split !== 'eval') {
  console.error(`--split: expected train or eval, found ${values.split}`);
  process.exit(2);
}
const env = new AlfWorldEnv({ household: values.household as HouseholdSize, maxTurns: Number(values.turns) });
const tasks = Number(values.tasks);

function trial(seed: number, memory: boolean): number {
  env.reset(seed);
  let player = new AlfWorldSearchPlayer(env, { style: 'compact' });
  for (let e = 0; e < 3; e++) {
    if (e > 0) env.restart();
    if (!memory) player = new AlfWorldSearchPlayer(env, { style: 'compact' });
    const steps: TrajectoryStep[] = [];
    for (;;) {
      const r = env.step(player.act(steps));
      steps.push({ action: r.historyAction ?? '', observation: r.observation.text });
      if (r.won) return e;
      if (r.done) break;
    }
    player.endEpisode(steps);
  }
  return -1;
}

for (const memory of [true, false]) {
  const wins = [0, 0, 0];
  const byType = new Map<string, number[]>();
  for (let i = 0; i < tasks; i++) {
    const won = trial(taskSeed(values.split as SeedSplit, i), memory);
    if (won >= 0) wins[won]++;
    const row = byType.get(env.taskType()!) ?? [0, 0, 0, 0];
    row[won < 0 ? 3 : won]++;
    byType.set(env.taskType()!, row);
  }
  const pass = (k: number) => ((100 * wins.slice(0, k).reduce((a, b) => a + b, 0)) / tasks).toFixed(1);
  console.log(
    `${memory ? 'with memory' : 'without memory'}: ${values.household} households, ${values.turns} turns, ${tasks} ${values.split} tasks: ` +
      `pass@1 ${pass(1)} pass@2 ${pass(2)} pass@3 ${pass(3)}`,
  );
  for (const [type, row] of [...byType].sort()) console.log(`  ${type}: won in episode 1/2/3 ${row.slice(0, 3).join('/')}, lost ${row[3]}`);
}
