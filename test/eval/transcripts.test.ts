// Evaluation transcripts: every row of a trial lands in its episode, each reflection after the episode it reflects on,
// and the figures in them agree with the trial summaries that pass@k is computed from.

import { describe, expect, it } from 'vitest';
import { createEnv } from '../../src/envs/registry.js';
import { hasCode } from '../../src/errors.js';
import { evaluate } from '../../src/eval/evaluate.js';
import { trialTranscripts } from '../../src/eval/transcripts.js';
import { scriptedPolicy } from '../../src/rollout/scripted.js';

const env = () => createEnv('minesweeper', { rows: 4, cols: 4, mines: 2, maxTurns: 7 });

describe('evaluation transcripts', () => {
  it('hold every turn and reflection of each trial, in place, consistent with the trial summaries', async () => {
    // Mostly random clicks: many failed episodes, some wins.
    const r = await evaluate({
      policy: scriptedPolicy({ noise: 0.6, seed: 11, expert: { style: 'compact' } }),
      env,
      tasks: 32,
      method: 'lamer',
      style: 'compact',
    });
    expect(r.transcripts).toHaveLength(32);
    let turns = 0;
    let reflections = 0;
    r.transcripts.forEach((t, i) => {
      const trial = r.trials[i];
      expect(t.task).toBe(trial.seed);
      expect(t.wonEpisode).toBe(trial.wonEpisode);
      expect(t.episodes.map((e) => e.won)).toEqual(trial.won.slice(0, trial.episodesPlayed));
      t.episodes.forEach((e, k) => {
        expect(e.episode).toBe(k);
        turns += e.turns.length;
        expect(e.turns.length).toBeGreaterThan(0);
        expect(e.turns.reduce((s, x) => s + x.reward, 0)).toBeCloseTo(trial.episodeRewards[k], 5);
        // Compact play prompts name their episode ("mine T2 | ...").
        for (const turn of e.turns) expect(turn.prompt.startsWith(`mine T${k + 1} |`)).toBe(true);
        const last = k === t.episodes.length - 1;
        // A reflection follows every episode but the last one played, and only when it was lost.
        expect(e.reflection !== undefined).toBe(!last);
        if (e.reflection) {
          reflections++;
          expect(e.won).toBe(false);
          expect(e.reflection.prompt.startsWith(`mine R${k + 1} |`)).toBe(true);
          // The reflect prompt lists this episode's actions; the next episode's prompts remember the reflection.
          const lastAction = /<action>(.*)<\/action>/.exec(e.turns.at(-1)!.response)?.[1];
          if (lastAction) expect(e.reflection.prompt).toContain(lastAction);
          const note = /<remark>(.*)<\/remark>/.exec(e.reflection.response)![1];
          expect(t.episodes[k + 1].turns[0].prompt).toContain(note);
          expect(e.reflection.valid).toBe(true);
          expect(e.reflection.correct).toBe(trial.reflectionsCorrect[k]);
        }
      });
    });
    expect(turns).toBe(r.stats.playRows);
    expect(reflections).toBe(r.stats.reflectRows);
    expect(reflections).toBeGreaterThan(10);
    expect(r.transcripts.some((t) => t.wonEpisode >= 0)).toBe(true);
  });

  it('independent attempts have no reflections', async () => {
    const r = await evaluate({ policy: scriptedPolicy({ noise: 1, seed: 2 }), env, tasks: 6, method: 'gigpo', style: 'compact' });
    expect(r.transcripts).toHaveLength(6);
    for (const t of r.transcripts) for (const e of t.episodes) expect(e.reflection).toBeUndefined();
    expect(r.transcripts.flatMap((t) => t.episodes.flatMap((e) => e.turns)).length).toBe(r.stats.playRows);
  });

  it('refuses rows and texts that do not line up', async () => {
    const r = await evaluate({ policy: scriptedPolicy({ noise: 1, seed: 2 }), env, tasks: 2, method: 'gigpo', style: 'compact' });
    const batch = { table: { length: 3 } as never, prompts: ['a'], responses: ['b'], trials: r.trials };
    expect(() => trialTranscripts(batch)).toThrow(expect.objectContaining({ code: 'E_ARG' }));
    try {
      trialTranscripts(batch);
    } catch (e) {
      expect(hasCode(e, 'E_ARG')).toBe(true);
    }
  });
});
