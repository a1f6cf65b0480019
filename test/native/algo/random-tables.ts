// Random row tables for property tests: random group sizes, 1..3 episodes per trial, reflect rows (with either
// episode-index convention, sometimes trailing), anchors repeated across trials and groups, singleton groups and
// clusters, rewards from tiny to extreme, trials of different groups interleaved.

import type { Rng } from '../../../src/util/rng.js';
import type { AdvantageOptions } from '../../../src/algo/index.js';
import { ESTIMATORS } from '../../../src/native/types.js';
import { rowTableFromColumns } from '../../../src/rollout/rows.js';
import type { RowTable } from '../../../src/rollout/rows.js';

interface RawRow {
  group: number;
  trial: number;
  episode: number;
  turn: number;
  phase: number;
  reward: number;
  valid: number;
  anchor: string;
}

function randomReward(rng: Rng): number {
  switch (rng.int(6)) {
    case 0:
      return 0;
    case 1:
      return rng.pick([-1, -0.1, 0.5, 1, 2, 10]);
    case 2:
      return (rng.next() - 0.5) * 20;
    case 3:
      return rng.pick([1e4, -1e4, 1e6, -1e6, 3.4e7]); // extreme
    case 4:
      return (rng.next() - 0.5) * 1e-6; // tiny
    default:
      return Math.round(rng.next() * 10) / 10;
  }
}

export function randomTable(rng: Rng): RowTable {
  const groups = 1 + rng.int(5);
  const shared = ['shared-start', 'shared-mid', 'shared-end'];
  const trials: RawRow[][] = [];
  const perGroupTrialIds = rng.int(2) === 0;
  let globalTrial = rng.int(1000) - 500;
  const usedGroups = new Set<number>();
  for (let gi = 0; gi < groups; gi++) {
    let group: number;
    do group = rng.pick([gi, gi * 7919 - 3, -gi - 1, 2147483647 - gi, -2147483648 + gi, rng.int(100)]);
    while (usedGroups.has(group));
    usedGroups.add(group);
    const size = rng.int(4) === 0 ? 1 : 1 + rng.int(8); // many singleton groups
    const pool = Array.from({ length: 1 + rng.int(6) }, (_, k) => `g${gi}-state-${k}`);
    const reflectBefore = rng.int(2) === 0; // reflect row carries the next episode's index, or the failed one's
    for (let k = 0; k < size; k++) {
      const trial = perGroupTrialIds ? k : globalTrial++;
      const rows: RawRow[] = [];
      const episodes = 1 + rng.int(3);
      for (let ep = 0; ep < episodes; ep++) {
        if (ep > 0 && rng.int(5) !== 0) {
          rows.push({ group, trial, episode: reflectBefore ? ep : ep - 1, turn: 0, phase: 1, reward: 0, valid: rng.int(8) ? 1 : 0, anchor: 'reflection' });
        }
        const turns = 1 + rng.int(5);
        let turn = rng.int(2);
        for (let t = 0; t < turns; t++) {
          const anchor = t === 0 ? `g${gi}-initial` : rng.int(6) === 0 ? rng.pick(shared) : rng.pick(pool);
          rows.push({ group, trial, episode: ep, turn, phase: 0, reward: randomReward(rng), valid: rng.int(8) ? 1 : 0, anchor });
          turn += 1 + rng.int(2);
        }
      }
      if (rng.int(10) === 0) {
        // a reflection after the last episode (rollout cut off before the next one)
        const last = rows[rows.length - 1];
        rows.push({ group, trial, episode: last.episode + (reflectBefore ? 1 : 0), turn: 0, phase: 1, reward: 0, valid: 1, anchor: 'reflection' });
      }
      trials.push(rows);
    }
  }
  if (rng.int(2) === 0) rng.shuffle(trials); // interleave groups
  const rows = trials.flat();
  const n = rows.length;
  return rowTableFromColumns({
    group: Int32Array.from(rows, (r) => r.group),
    trial: Int32Array.from(rows, (r) => r.trial),
    episode: Int32Array.from(rows, (r) => r.episode),
    turn: Int32Array.from(rows, (r) => r.turn),
    phase: Uint8Array.from(rows, (r) => r.phase),
    reward: Float32Array.from(rows, (r) => r.reward),
    valid: Uint8Array.from(rows, (r) => r.valid),
    won: new Uint8Array(n),
    anchor: rows.map((r) => r.anchor),
  });
}

export function randomOptions(rng: Rng): AdvantageOptions {
  const gamma = () => rng.pick([0, 1, 0.95, 0.6, 0.9, rng.next()]);
  return {
    // GiGPO three times in four; every other estimator of the boundary's list (a new one is tested here by itself).
    estimator: rng.int(4) === 0 ? rng.pick(ESTIMATORS.filter((e) => e !== 'gigpo')) : 'gigpo',
    returns: rng.pick(['recursive', 'paper'] as const),
    gammaStep: gamma(),
    gammaTraj: gamma(),
    invalidPenalty: rng.pick([0, 0.5, 1, rng.next() * 3]),
    mode: rng.pick(['mean_norm', 'mean_std_norm'] as const),
    omega: rng.pick([1, 0, 0.5, 2, -1]),
    eps: rng.pick([1e-6, 1e-3, 1e-8]),
    normByStd: rng.int(2) === 0,
    stepGrouping: rng.int(20) === 0 ? 'similarity' : 'exact',
  };
}
