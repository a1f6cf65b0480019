// The TS reference of GiGPO and GRPO advantages (SPEC §4): Maps keyed by group id and by anchor text, sums in row
// order, nothing clever. The native kernel must agree with this within 1e-5 on every table.

import type { RowTable } from '../rollout/rows.js';
import type { ResolvedAdvantageOptions } from './options.js';
import { episodeRewards, stepReturns } from './returns.js';

export interface AdvantageResult {
  /** Undiscounted reward of the row's episode (0 for reflect rows). */
  episodeReward: Float32Array;
  /** G_t (SPEC §3): the step-level signal. */
  stepReturn: Float32Array;
  /** The advantage applied to every response token of the row. */
  advantage: Float32Array;
}

/**
 * Normalised value of each member of each group: (x - mean) or (x - mean) / (std + eps) with the unbiased std.
 * `singleton` is what a group of one gets.
 */
export function groupNormalize<K>(keys: readonly K[], values: Float64Array, divideByStd: boolean, eps: number, singleton: (x: number) => number): Float64Array {
  const members = new Map<K, number[]>();
  for (let i = 0; i < keys.length; i++) {
    let list = members.get(keys[i]);
    if (!list) members.set(keys[i], (list = []));
    list.push(i);
  }
  const out = new Float64Array(keys.length);
  for (const rows of members.values()) {
    if (rows.length === 1) {
      out[rows[0]] = singleton(values[rows[0]]);
      continue;
    }
    let sum = 0;
    for (const i of rows) sum += values[i];
    const mean = sum / rows.length;
    let squares = 0;
    for (const i of rows) squares += (values[i] - mean) * (values[i] - mean);
    const std = Math.sqrt(squares / (rows.length - 1));
    for (const i of rows) out[i] = divideByStd ? (values[i] - mean) / (std + eps) : values[i] - mean;
  }
  return out;
}

/**
 * Advantages of a validated table. `stepCluster`, when given, replaces exact anchor text as the step-level key
 * (the similarity grouping); it must already be unique per group.
 */
export function referenceAdvantages(table: RowTable, options: ResolvedAdvantageOptions, stepCluster?: Int32Array): AdvantageResult {
  const n = table.length;
  const episodeReward = episodeRewards(table);
  const G = stepReturns(table, options.returns, options.gammaStep, options.gammaTraj);
  const score = new Float64Array(n);
  for (let i = 0; i < n; i++) score[i] = episodeReward[i] - options.invalidPenalty * (1 - table.valid[i]);

  const groups = Array.from(table.group);
  let advantage: Float64Array;
  if (options.estimator === 'grpo') {
    // A lone trajectory keeps its raw score (mean 0, std 1).
    advantage = groupNormalize(groups, score, options.normByStd, options.eps, (x) => x);
  } else {
    const divide = options.mode === 'mean_std_norm';
    const episodeLevel = groupNormalize(groups, score, divide, options.eps, (x) => x);
    // Step clusters live inside a group: the key pairs the group id with the anchor text (or cluster id).
    const stepKeys = groups.map((g, i) => JSON.stringify([g, stepCluster ? stepCluster[i] : table.anchor[i]]));
    const stepLevel = groupNormalize(stepKeys, G, divide, options.eps, () => 0);
    advantage = new Float64Array(n);
    for (let i = 0; i < n; i++) advantage[i] = episodeLevel[i] + options.omega * stepLevel[i];
  }
  return {
    episodeReward: Float32Array.from(episodeReward),
    stepReturn: Float32Array.from(G),
    advantage: Float32Array.from(advantage),
  };
}
