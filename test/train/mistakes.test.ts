// The warm start's last phase (sft.mistakeTrials): the model's own refused moves, each kept with the state it was made
// at and the moves the environment accepts there. Played here by a test policy that answers from the prompt alone
// (a click on a fixed value no product offers, or the first listed action), so which moves are refused is known.
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/train/config.js';
import { collectMistakes } from '../../src/train/mistakes.js';
import type { GenerateRequest, GenerateResult, PolicyClient } from '../../src/rollout/policy.js';
import { scriptedResult } from '../../src/rollout/scripted.js';
import { hasCode } from '../../src/errors.js';

const webShop = (sft: Record<string, number>) =>
  validateConfig({
    name: 'mistakes',
    model: { init: { preset: 'tiny', tokenizer: 'compact-webshop', seed: 0 }, promptStyle: 'compact' },
    env: { name: 'webshop', options: { maxTurns: 6 } },
    trial: { episodes: 2, markRefused: true },
    rollout: { groupSize: 4 },
    sft: { trials: 16, trialsPerTask: 1, steps: 1, unlikelihood: 1, mistakeTrials: 8, mistakeSteps: 1, ...sft },
  });

/** Searches first; on any other page clicks `zzz-none` (never offered) every other turn, else the first listed action. */
const testPolicy: PolicyClient = {
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const p = request.prompt;
    if (p.includes('<remark>') || !p.includes('available actions: ')) return scriptedResult(request, '<remark>none</remark>');
    const listed = p.slice(p.lastIndexOf('available actions: ') + 19, p.lastIndexOf(' | act:'));
    if (listed.startsWith('search[')) return scriptedResult(request, `<action>${listed}</action>`); // the one search offered
    const turns = (p.match(/ ; /g) ?? []).length;
    const action = turns % 2 === 1 ? listed.split(', ')[0] : 'click[zzz-none]';
    return scriptedResult(request, `<action>${action}</action>`);
  },
};

describe("the model's own refused moves (sft.mistakeTrials)", () => {
  it('keep each refused move with its prompt and exactly the actions the page lists there', async () => {
    const own = await collectMistakes(webShop({}), testPolicy);
    expect(own.trials).toBe(8);
    expect(own.refused).toBeGreaterThan(8);
    expect(own.mistakes.length).toBe(own.refused);
    for (const m of own.mistakes) {
      expect(m.contrast.refused).toEqual(['<action>click[zzz-none]</action>']);
      const listed = m.prompt.slice(m.prompt.lastIndexOf('available actions: ') + 19, m.prompt.lastIndexOf(' | act:'));
      expect(m.contrast.admissible.map((a) => a.slice('<action>'.length, -'</action>'.length)).join(', ')).toBe(listed);
    }
  });

  it('need the unlikelihood weight, both counts, and ALFWorld or WebShop', () => {
    const bad = (over: Record<string, unknown>) => {
      try {
        validateConfig(over);
        return '';
      } catch (e) {
        expect(hasCode(e, 'E_CONFIG')).toBe(true);
        return (e as Error).message;
      }
    };
    const base = { name: 'm', env: { name: 'webshop' } };
    expect(bad({ ...base, sft: { mistakeTrials: 8, mistakeSteps: 1 } })).toMatch(/needs 'sft.unlikelihood' > 0/);
    expect(bad({ ...base, sft: { mistakeTrials: 8, unlikelihood: 1 } })).toMatch(/go together/);
    expect(bad({ name: 'm', env: { name: 'minesweeper' }, sft: { mistakeTrials: 8, mistakeSteps: 1, unlikelihood: 1 } })).toMatch(
      /is for ALFWorld and WebShop/,
    );
    expect(bad({ ...base, sft: { mistakeTrials: 8, mistakeSteps: 1, unlikelihood: 1 } })).toBe('');
  });
});
