// Advantage cases worked out by hand from SPEC §3 and §4. Rewards and discounts are chosen so the arithmetic is exact
// in binary (halves and quarters) wherever the check is exact.

import { describe, expect, it } from 'vitest';
import { computeAdvantages } from '../../src/algo/index.js';
import type { AdvantageOptions } from '../../src/algo/index.js';
import { tableOf } from './helpers.js';
import type { TestRow } from './helpers.js';

/** The hand-worked cases, for one backend: test/algo/reference.test.ts runs them on the TS reference, and
 * test/native/algo/reference.test.ts on the native kernel. */
export function handWorkedCases(backend: 'reference' | 'native'): void {
  const ref = (rows: TestRow[], options: AdvantageOptions = {}) => computeAdvantages(tableOf(rows), { backend, ...options });

  describe(`${backend}: returns (SPEC §3)`, () => {
    // One trial: episode 0 (rewards 1, 2), a reflection, episode 1 (rewards 4, 8). gamma_step 0.5, gamma_traj 0.25.
    //   recursive, backwards: r4: 8; r3: 4 + 0.5*8 = 8; reflect: 8; r1 (episode changes): 2 + 0.25*8 = 4;
    //   r0: 1 + 0.5*4 = 3.
    const twoEpisodes: TestRow[] = [
      [0, 0, 0, 0, 'play', 1, 1, 's0'],
      [0, 0, 0, 1, 'play', 2, 1, 's1'],
      [0, 0, 1, 0, 'reflect', 0, 1, 'reflection'],
      [0, 0, 1, 0, 'play', 4, 1, 's0'],
      [0, 0, 1, 1, 'play', 8, 1, 's2'],
    ];

    it('gives a reflect row the first return of the episode after it', () => {
      const out = ref(twoEpisodes, { gammaStep: 0.5, gammaTraj: 0.25 });
      expect(Array.from(out.stepReturn)).toEqual([3, 4, 8, 8, 8]);
      expect(out.stepReturn[2]).toBe(out.stepReturn[3]);
      // episodeReward: undiscounted sum of the row's own episode, 0 for the reflection.
      expect(Array.from(out.episodeReward)).toEqual([3, 3, 0, 12, 12]);
    });

    it('matches the closed form G_t(n) = sum gamma_step^(k-t) r_k + gamma_step^(L-1-t) gamma_traj G_0(n+1)', () => {
      const out = ref(twoEpisodes, { gammaStep: 0.5, gammaTraj: 0.25 });
      const g0next = 4 + 0.5 * 8;
      expect(out.stepReturn[0]).toBe(1 + 0.5 * 2 + 0.5 * 0.25 * g0next);
      expect(out.stepReturn[1]).toBe(2 + 0.25 * g0next);
    });

    // Three episodes with one turn, two turns, one turn; gamma_step = gamma_traj = 0.5.
    //   recursive: ep2: 4; reflect: 4; ep1 t1: 2 + 0.5*4 = 4; ep1 t0: 0 + 0.5*4 = 2; reflect: 2; ep0: 1 + 0.5*2 = 2.
    //   paper: g = ep0 [1], ep1 [1, 2], ep2 [4]; g_0 = 1, 1, 4.
    //     ep2: 4.  ep1: + 0.5*4 = 2 -> [3, 4].  ep0: 1 + 0.5*1 + 0.25*4 = 2.5.  reflects: 3 and 4.
    const threeEpisodes: TestRow[] = [
      [0, 0, 0, 0, 'play', 1, 1, 's0'],
      [0, 0, 1, 0, 'reflect', 0, 1, 'reflection'],
      [0, 0, 1, 0, 'play', 0, 1, 's0'],
      [0, 0, 1, 1, 'play', 2, 1, 's1'],
      [0, 0, 2, 0, 'reflect', 0, 1, 'reflection'],
      [0, 0, 2, 0, 'play', 4, 1, 's0'],
    ];

    it('recursive and paper returns differ on the same trial as worked out', () => {
      const options = { gammaStep: 0.5, gammaTraj: 0.5 };
      expect(Array.from(ref(threeEpisodes, { ...options, returns: 'recursive' }).stepReturn)).toEqual([2, 2, 2, 4, 4, 4]);
      expect(Array.from(ref(threeEpisodes, { ...options, returns: 'paper' }).stepReturn)).toEqual([2.5, 3, 3, 4, 4, 4]);
    });

    it('the two formulas agree on single-episode trials and when gamma_step is 1', () => {
      const single: TestRow[] = [
        [0, 0, 0, 0, 'play', 1, 1, 'a'],
        [0, 0, 0, 1, 'play', 2, 1, 'b'],
      ];
      expect(Array.from(ref(single, { returns: 'paper', gammaStep: 0.5 }).stepReturn)).toEqual([2, 2]);
      expect(Array.from(ref(single, { returns: 'recursive', gammaStep: 0.5 }).stepReturn)).toEqual([2, 2]);
      const r = ref(threeEpisodes, { gammaStep: 1, gammaTraj: 0.5, returns: 'recursive' }).stepReturn;
      const p = ref(threeEpisodes, { gammaStep: 1, gammaTraj: 0.5, returns: 'paper' }).stepReturn;
      expect(Array.from(r)).toEqual(Array.from(p));
    });

    it('a reflect row with no episode after it gets 0', () => {
      const out = ref(
        [
          [0, 0, 0, 0, 'play', 1, 1, 'a'],
          [0, 0, 1, 0, 'reflect', 0, 1, 'reflection'],
        ],
        { gammaStep: 0.5 },
      );
      expect(Array.from(out.stepReturn)).toEqual([1, 0]);
    });

    it('trials are independent: returns never leak across a trial boundary', () => {
      const out = ref(
        [
          [0, 0, 0, 0, 'play', 1, 1, 'a'],
          [0, 1, 0, 0, 'play', 10, 1, 'a'],
        ],
        { gammaStep: 0.5 },
      );
      expect(Array.from(out.stepReturn)).toEqual([1, 10]);
    });
  });

  describe(`${backend}: GiGPO (SPEC §4)`, () => {
    it('singleton groups: the episode level keeps the raw score, the step level gives 0', () => {
      for (const mode of ['mean_norm', 'mean_std_norm'] as const) {
        const out = ref([[7, 0, 0, 0, 'play', 3, 1, 'a']], { mode });
        expect(Array.from(out.advantage)).toEqual([3]);
        // with an invalid action the raw score is 3 - 0.5
        expect(Array.from(ref([[7, 0, 0, 0, 'play', 3, 0, 'a']], { mode }).advantage)).toEqual([2.5]);
      }
    });

    // Group 0, two one-episode trials; gamma_step 0.5.
    //   A: s0 (r 0), x (r 1)  -> G = [0.5, 1], episode reward 1
    //   B: s0 (r 0), y (r 0)  -> G = [0, 0],   episode reward 0
    // Episode level: scores [1, 1, 0, 0], mean 0.5, deviations ±0.5, unbiased var = 4*0.25/3 = 1/3.
    // Step level: cluster s0 = {0.5, 0}: mean 0.25, deviations ±0.25, unbiased var = 2*0.0625/1 = 0.125;
    //   x and y are singletons -> 0.
    const twoTrials: TestRow[] = [
      [0, 0, 0, 0, 'play', 0, 1, 's0'],
      [0, 0, 0, 1, 'play', 1, 1, 'x'],
      [0, 1, 0, 0, 'play', 0, 1, 's0'],
      [0, 1, 0, 1, 'play', 0, 1, 'y'],
    ];

    it('mean_norm: score - mean at both levels', () => {
      const out = ref(twoTrials, { gammaStep: 0.5, mode: 'mean_norm' });
      expect(Array.from(out.stepReturn)).toEqual([0.5, 1, 0, 0]);
      expect(Array.from(out.advantage)).toEqual([0.5 + 0.25, 0.5 + 0, -0.5 - 0.25, -0.5 + 0]);
    });

    it('mean_std_norm divides by the unbiased std plus eps', () => {
      const eps = 1e-6;
      const episodeStd = Math.sqrt(1 / 3); // biased would be 0.5
      const stepStd = Math.sqrt(0.125); // biased would be 0.25
      const aE = 0.5 / (episodeStd + eps);
      const aS = 0.25 / (stepStd + eps);
      const out = ref(twoTrials, { gammaStep: 0.5, mode: 'mean_std_norm' });
      const expected = [aE + aS, aE, -aE - aS, -aE];
      for (let i = 0; i < 4; i++) expect(out.advantage[i]).toBeCloseTo(expected[i], 6);
      expect(out.advantage[0]).toBeCloseTo(0.8660254 + 0.7071048, 5);
    });

    it('omega weights the step level', () => {
      const out = ref(twoTrials, { gammaStep: 0.5, omega: 2 });
      expect(Array.from(out.advantage)).toEqual([0.5 + 0.5, 0.5, -0.5 - 0.5, -0.5]);
    });

    it('the invalid penalty hits the episode-level score only, not G', () => {
      // Two one-row trials with equal reward and anchor; the first response was invalid.
      const out = ref([
        [0, 0, 0, 0, 'play', 1, 0, 's'],
        [0, 1, 0, 0, 'play', 1, 1, 's'],
      ]);
      expect(Array.from(out.stepReturn)).toEqual([1, 1]); // G untouched: equal, so the step level is 0
      expect(Array.from(out.episodeReward)).toEqual([1, 1]);
      // scores 0.5 and 1, mean 0.75
      expect(Array.from(out.advantage)).toEqual([-0.25, 0.25]);
      const doubled = ref(
        [
          [0, 0, 0, 0, 'play', 1, 0, 's'],
          [0, 1, 0, 0, 'play', 1, 1, 's'],
        ],
        { invalidPenalty: 1 },
      );
      expect(Array.from(doubled.advantage)).toEqual([-0.5, 0.5]);
    });

    it('reflections of a group form one step cluster credited by the episode after them', () => {
      // Two trials fail episode 0, reflect, then play episode 1 (one turn each). gamma_step 0.5, gamma_traj 0.5.
      //   T0: ep0 r 0 -> G = 0 + 0.5*4 = 2 ; reflect G = 4 ; ep1 r 4 -> 4.  episode rewards 0, 0, 4.
      //   T1: ep0 r 0 -> G = 0 + 0.5*0 = 0 ; reflect G = 0 ; ep1 r 0 -> 0.  episode rewards 0, 0, 0.
      // Episode level over all six rows: scores [0, 0, 4, 0, 0, 0], mean 2/3.
      // Step level: 'start' = {2, 4, 0, 0} (turn 0 of every episode shares the initial state), mean 1.5;
      //   'reflection' = {4, 0}, mean 2.
      const rows: TestRow[] = [
        [0, 0, 0, 0, 'play', 0, 1, 'start'],
        [0, 0, 1, 0, 'reflect', 0, 1, 'reflection'],
        [0, 0, 1, 0, 'play', 4, 1, 'start'],
        [0, 1, 0, 0, 'play', 0, 1, 'start'],
        [0, 1, 1, 0, 'reflect', 0, 1, 'reflection'],
        [0, 1, 1, 0, 'play', 0, 1, 'start'],
      ];
      const out = ref(rows, { gammaStep: 0.5, gammaTraj: 0.5 });
      expect(Array.from(out.stepReturn)).toEqual([2, 4, 4, 0, 0, 0]);
      const m = 2 / 3;
      const expected = [0 - m + (2 - 1.5), 0 - m + (4 - 2), 4 - m + (4 - 1.5), 0 - m + (0 - 1.5), 0 - m + (0 - 2), 0 - m + (0 - 1.5)];
      for (let i = 0; i < 6; i++) expect(out.advantage[i]).toBeCloseTo(expected[i], 6);
    });

    it('groups by exact anchor text: near-identical anchors are different clusters', () => {
      const out = ref([
        [0, 0, 0, 0, 'play', 1, 1, 'room A'],
        [0, 1, 0, 0, 'play', 0, 1, 'room A '],
      ]);
      // Episode level: scores 1, 0 -> ±0.5; step level: two singletons -> 0.
      expect(Array.from(out.advantage)).toEqual([0.5, -0.5]);
    });

    it('step clusters never cross groups', () => {
      const out = ref([
        [0, 0, 0, 0, 'play', 1, 1, 'same'],
        [1, 0, 0, 0, 'play', 0, 1, 'same'],
      ]);
      // both are singletons at both levels
      expect(Array.from(out.advantage)).toEqual([1, 0]);
    });

    it('similarity grouping (off by default) merges anchors at or above the threshold', () => {
      const a = '1: # _ P X _ #\n2: # O _ _ _ #';
      const b = '1: # _ _ P X #\n2: # O _ _ _ #'; // difflib ratio 0.931
      const rows: TestRow[] = [
        [0, 0, 0, 0, 'play', 1, 1, a],
        [0, 1, 0, 0, 'play', 0, 1, b],
      ];
      expect(Array.from(ref(rows).advantage)).toEqual([0.5, -0.5]);
      const merged = ref(rows, { stepGrouping: 'similarity', similarityThreshold: 0.9 });
      expect(Array.from(merged.advantage)).toEqual([1, -1]);
      const strict = ref(rows, { stepGrouping: 'similarity' }); // 0.95 default: not merged
      expect(Array.from(strict.advantage)).toEqual([0.5, -0.5]);
    });
  });

  describe(`${backend}: GRPO (SPEC §4)`, () => {
    // One group of three one-row trials, rewards 0, 1, 2: mean 1, unbiased std 1. Different anchors and returns would
    // change GiGPO's step level; GRPO has none.
    const rows: TestRow[] = [
      [0, 0, 0, 0, 'play', 0, 1, 'a'],
      [0, 1, 0, 0, 'play', 1, 1, 'a'],
      [0, 2, 0, 0, 'play', 2, 1, 'a'],
    ];
    it('normalises by the std by default', () => {
      const out = ref(rows, { estimator: 'grpo' });
      const s = 1 / (1 + 1e-6);
      expect(out.advantage[0]).toBeCloseTo(-s, 7);
      expect(out.advantage[1]).toBe(0);
      expect(out.advantage[2]).toBeCloseTo(s, 7);
    });
    it('normByStd: false gives score - mean; singletons keep their score', () => {
      expect(Array.from(ref(rows, { estimator: 'grpo', normByStd: false }).advantage)).toEqual([-1, 0, 1]);
      expect(Array.from(ref([[3, 0, 0, 0, 'play', 2, 0, 'a']], { estimator: 'grpo' }).advantage)).toEqual([1.5]);
    });
  });
}
