// The warm start's demonstrations: the MineSweeper logic player's later episodes follow only what its reflections
// state, and the row weights repeat reflections and memory-reading rows as configured.
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/train/config.js';
import { collectDemonstrations } from '../../src/train/demonstrations.js';

function config(sft: Record<string, number | string | null>) {
  return validateConfig({
    name: 'demo',
    model: { init: { preset: 'tiny', tokenizer: 'compact', seed: 0 }, promptStyle: 'compact' },
    env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2, maxTurns: 7 } },
    trial: { episodes: 3 },
    rollout: { groupSize: 4 },
    sft: { trials: 64, steps: 1, ...sft },
  });
}

const isReflection = (r: string) => r.startsWith('<remark>');

describe('warm-start demonstrations (MineSweeper)', () => {
  it('repeats reflection rows reflectionWeight times and later-episode rows memoryWeight times', async () => {
    const one = await collectDemonstrations(config({ reflectionWeight: 1, memoryWeight: 1 }));
    const weighted = await collectDemonstrations(config({ reflectionWeight: 5, memoryWeight: 2 }));
    const reflections = one.responses.filter(isReflection).length;
    expect(reflections).toBeGreaterThan(5);
    expect(weighted.responses.filter(isReflection).length).toBe(5 * reflections);
    const laterPlay = one.prompts.filter((p, i) => !isReflection(one.responses[i]) && p.includes('mem:')).length;
    const firstPlay = one.prompts.length - reflections - laterPlay;
    expect(weighted.prompts.length).toBe(firstPlay + 2 * laterPlay + 5 * reflections);
    expect(weighted.reflect).toEqual(weighted.responses.map(isReflection));
  });

  it('a later episode opens first the safe cells the reflections in its prompt list, never their mines', async () => {
    const demos = await collectDemonstrations(config({ reflectionWeight: 1, memoryWeight: 1 }));
    let checked = 0;
    for (let i = 0; i < demos.prompts.length; i++) {
      const prompt = demos.prompts[i];
      const mem = /mem: (.*?) \| now:/.exec(prompt);
      if (!mem || isReflection(demos.responses[i]) || prompt.includes('acts:')) continue; // first move of a later episode
      const cell = /<action>(\(\d, \d\))<\/action>/.exec(demos.responses[i])![1];
      const mines = [...mem[1].matchAll(/mine (\(\d, \d\))/g)].map((m) => m[1]);
      const safe = [...mem[1].matchAll(/safe ([^;]*?)(?: ;|$)/g)].flatMap((m) => m[1].match(/\(\d, \d\)/g) ?? []);
      expect(mines).not.toContain(cell);
      if (safe.length > 0) expect(cell).toBe(safe[0]);
      checked++;
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('with sft.guess=ordered the demonstrator answers a prompt always the same way; with random guesses it does not', async () => {
    const answers = async (guess: string) => {
      const demos = await collectDemonstrations(config({ reflectionWeight: 1, memoryWeight: 1, guess }));
      const byPrompt = new Map<string, Set<string>>();
      demos.prompts.forEach((p, i) => {
        if (isReflection(demos.responses[i])) return;
        if (!byPrompt.has(p)) byPrompt.set(p, new Set());
        byPrompt.get(p)!.add(demos.responses[i]);
      });
      return [...byPrompt.values()].map((s) => s.size);
    };
    const ordered = await answers('ordered');
    expect(ordered.length).toBeGreaterThan(20);
    expect(Math.max(...ordered)).toBe(1);
    expect(Math.max(...(await answers('random')))).toBeGreaterThan(1);
  });

  it('sft.trialsPerTask spreads the same number of trials over more distinct boards', async () => {
    const boards = async (trialsPerTask?: number) => {
      const demos = await collectDemonstrations(
        config({ reflectionWeight: 1, memoryWeight: 1, guess: 'ordered', ...(trialsPerTask ? { trialsPerTask } : {}) }),
      );
      return { trials: demos.trials, boards: new Set(demos.prompts.filter((p) => p.startsWith('mine T1 | now:'))).size };
    };
    const grouped = await boards(); // rollout.groupSize 4: 16 tasks x 4 trials
    const spread = await boards(1); // 64 tasks x 1 trial
    expect(grouped.trials).toBe(64);
    expect(spread.trials).toBe(64);
    expect(grouped.boards).toBeLessThanOrEqual(16);
    expect(spread.boards).toBeGreaterThan(2 * grouped.boards); // distinct first boards (two tasks can show the same one)
  });
});
