// Reference returns (SPEC §3), written as plainly as the formulas: the tests check these against hand-computed
// numbers, and the native kernel against these.

import type { RowTable } from '../rollout/rows.js';
import { PHASE_PLAY } from '../rollout/rows.js';
import type { ReturnsFormula } from './options.js';

/** Half-open row ranges [start, end) of each trial, a trial being a run of rows with the same (group, trial). */
export function trialRanges(table: Pick<RowTable, 'length' | 'group' | 'trial'>): [number, number][] {
  const ranges: [number, number][] = [];
  let start = 0;
  for (let i = 1; i <= table.length; i++) {
    if (i === table.length || table.group[i] !== table.group[start] || table.trial[i] !== table.trial[start]) {
      if (table.length > 0) ranges.push([start, i]);
      start = i;
    }
  }
  return ranges;
}

/** Undiscounted sum of the rewards of each play row's own episode; 0 for reflect rows. */
export function episodeRewards(table: RowTable): Float64Array {
  const out = new Float64Array(table.length);
  for (const [start, end] of trialRanges(table)) {
    const sums = new Map<number, number>();
    for (let i = start; i < end; i++) {
      if (table.phase[i] !== PHASE_PLAY) continue;
      sums.set(table.episode[i], (sums.get(table.episode[i]) ?? 0) + table.reward[i]);
    }
    for (let i = start; i < end; i++) {
      out[i] = table.phase[i] === PHASE_PLAY ? sums.get(table.episode[i])! : 0;
    }
  }
  return out;
}

/** The SPEC §3 recursion, line for line: gamma_traj links the last turn of an episode to G_0 of the next one. */
function recursiveReturns(table: RowTable, start: number, end: number, gammaStep: number, gammaTraj: number, out: Float64Array): void {
  let running = 0;
  let cur = table.episode[end - 1];
  for (let t = end - 1; t >= start; t--) {
    if (table.phase[t] === PHASE_PLAY) {
      running = table.reward[t] + (table.episode[t] === cur ? gammaStep : gammaTraj) * running;
      cur = table.episode[t];
      out[t] = running;
    } else {
      out[t] = running; // a reflect row gets G_0 of the episode that follows it
    }
  }
}

/**
 * The paper's formula: G_t(n) = g_t(n) + sum_{m>n} gamma_traj^(m-n) g_0(m), with g the within-episode discounted
 * return. m - n counts the episodes the trial actually holds after episode n (episodes of a trial are consecutive).
 */
function paperReturns(table: RowTable, start: number, end: number, gammaStep: number, gammaTraj: number, out: Float64Array): void {
  // The trial's episodes in order, each with its play rows.
  const episodes: number[][] = [];
  let lastEpisode = NaN;
  for (let t = start; t < end; t++) {
    if (table.phase[t] !== PHASE_PLAY) continue;
    if (table.episode[t] !== lastEpisode) episodes.push([]);
    episodes[episodes.length - 1].push(t);
    lastEpisode = table.episode[t];
  }
  const within = new Map<number, number>(); // row -> g_t(n)
  const g0: number[] = [];
  for (const rows of episodes) {
    let g = 0;
    for (let k = rows.length - 1; k >= 0; k--) {
      g = table.reward[rows[k]] + gammaStep * g;
      within.set(rows[k], g);
    }
    g0.push(within.get(rows[0])!);
  }
  // tail[n] = sum_{m>n} gamma_traj^(m-n) g_0(m), evaluated in Horner form from the last episode backwards
  // (tail[n] = gamma_traj * (g_0(n+1) + tail[n+1])), the same order of operations the native kernel uses.
  const tail = new Array<number>(episodes.length).fill(0);
  for (let n = episodes.length - 2; n >= 0; n--) tail[n] = gammaTraj * (g0[n + 1] + tail[n + 1]);
  for (let n = 0; n < episodes.length; n++) {
    for (const t of episodes[n]) out[t] = within.get(t)! + tail[n];
  }
  // A reflect row gets G_0 of the next episode, i.e. g_0(m) + its own later terms; 0 when none follows.
  for (let t = start; t < end; t++) {
    if (table.phase[t] === PHASE_PLAY) continue;
    let next = -1;
    for (let u = t + 1; u < end && next < 0; u++) if (table.phase[u] === PHASE_PLAY) next = u;
    out[t] = next < 0 ? 0 : out[next];
  }
}

/** G per row (SPEC §3). */
export function stepReturns(table: RowTable, formula: ReturnsFormula, gammaStep: number, gammaTraj: number): Float64Array {
  const out = new Float64Array(table.length);
  for (const [start, end] of trialRanges(table)) {
    if (formula === 'recursive') recursiveReturns(table, start, end, gammaStep, gammaTraj, out);
    else paperReturns(table, start, end, gammaStep, gammaTraj, out);
  }
  return out;
}
