// How varied a method's attempts at one task are, and whether it uses what a failed attempt showed, from the evaluation
// transcripts (one trial of N attempts per task):
//
//   entropy   per trial with at least two attempts, the plug-in (maximum-likelihood) entropy in bits of the distribution
//             of distinct action sequences among its attempts: -sum_s p_s log2 p_s, p_s = (attempts playing sequence
//             s) / (attempts). 0 when every attempt played the same actions, log2 N when all N differ. The mean over
//             trials is reported. With N = 3 it takes the values 0, 0.918 and 1.585 only: a coarse, biased-low estimate
//             of the entropy of the method's experience distribution, comparable between methods at the same N.
//   repeats   of the attempts that follow a failed attempt, how many play (at any turn) the action that ended it: the
//             mine clicked again on MineSweeper, the last command before the turn limit on ALFWorld.
//
// An action is the text inside <action>...</action> (the whole response when there is none), trimmed, lowercased,
// with runs of white space as one space; an action sequence is an attempt's actions in order.

import { extractAction } from '../envs/common/tags.js';
import type { TrialTranscript } from './transcripts.js';

export interface AttemptDiversity {
  /** Trials with at least two attempts played. */
  trials: number;
  /** Mean over those trials of the entropy (bits) of their attempts' action sequences. */
  meanEntropyBits: number;
  /** Attempts that followed a failed attempt of the same trial. */
  afterFailure: number;
  /** Of those, how many played the action that ended the failed attempt before them. */
  repeatedEnd: number;
}

function normalized(response: string): string {
  return (extractAction(response) ?? response).trim().toLowerCase().replace(/\s+/g, ' ');
}

/** The plug-in entropy (bits) of the distribution of `items`. */
export function pluginEntropyBits(items: readonly string[]): number {
  const counts = new Map<string, number>();
  for (const s of items) counts.set(s, (counts.get(s) ?? 0) + 1);
  let h = 0;
  for (const c of counts.values()) {
    const p = c / items.length;
    h -= p * Math.log2(p);
  }
  return h === 0 ? 0 : h;
}

export function attemptDiversity(transcripts: readonly TrialTranscript[]): AttemptDiversity {
  let trials = 0;
  let entropy = 0;
  let afterFailure = 0;
  let repeatedEnd = 0;
  for (const t of transcripts) {
    const attempts = t.episodes.map((e) => e.turns.map((turn) => normalized(turn.response)));
    if (attempts.length >= 2) {
      trials++;
      entropy += pluginEntropyBits(attempts.map((a) => JSON.stringify(a)));
    }
    for (let k = 1; k < t.episodes.length; k++) {
      const previous = t.episodes[k - 1];
      if (previous.won || attempts[k - 1].length === 0) continue;
      afterFailure++;
      if (attempts[k].includes(attempts[k - 1].at(-1)!)) repeatedEnd++;
    }
  }
  return { trials, meanEntropyBits: trials > 0 ? entropy / trials : 0, afterFailure, repeatedEnd };
}

/** "lamer: attempts' entropy 0.912 bits (256 trials); 12 of 340 attempts after a failure repeated its last action (3.5%)". */
export function formatDiversity(method: string, d: AttemptDiversity): string {
  const share = d.afterFailure > 0 ? ((100 * d.repeatedEnd) / d.afterFailure).toFixed(1) : '0.0';
  return (
    `${method}: attempts' entropy ${d.meanEntropyBits.toFixed(3)} bits (${d.trials} trials); ` +
    `${d.repeatedEnd} of ${d.afterFailure} attempts after a failure repeated its last action (${share}%)`
  );
}
