// The warm start's last phase (sft.mistakeTrials): the model's own refused moves, each kept with the state it was made
// at and the moves the environment accepts there. Played here by a test policy that answers from the prompt alone
// (a click on a fixed value no product offers, or the first listed action), so which moves are refused is known.
// With sft.mistakeLabels each refused state also keeps the browser's move there, checked here against the page the
// prompt shows: the first listed product whose price is within the request's limit and that no earlier episode bought.
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

/**
 * The first product the results page of `prompt` lists whose lowest listed price is within the request's limit and that
 * is not in `tried`: read from the prompt's text alone (`asin / title / $price` triples after `now:`).
 */
function firstAffordable(prompt: string, tried: string[]): string | undefined {
  const limit = Number(/price lower than ([\d.]+) dollars/.exec(prompt)![1]);
  const page = prompt.slice(prompt.lastIndexOf('now: ') + 5, prompt.lastIndexOf(' / available actions: ')).split(' / ');
  for (let i = 0; i + 2 < page.length; i++) {
    if (!/^b[0-9a-z]{9}$/.test(page[i]) || tried.includes(page[i])) continue;
    if (Number(/\$([\d.]+)/.exec(page[i + 2])![1]) <= limit) return page[i];
  }
  return undefined;
}

/** Episode 1's last prompt per request (the buyer below records it), to read what it bought. */
const episodeOne = new Map<string, string>();

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

  it("play the demonstration tasks after the previous round's in each round of sft.mistakeRounds, wrapping around", async () => {
    const prompts = async (sft: Record<string, number>, round: number) =>
      (await collectMistakes(webShop(sft), testPolicy, undefined, round)).mistakes.map((m) => m.prompt).sort();
    const [first, second, third] = [await prompts({}, 0), await prompts({}, 1), await prompts({}, 2)];
    // 16 demonstration tasks, 8 a round: rounds 0 and 1 together play what one round of 16 plays, round 2 round 0's.
    expect([...first, ...second].sort()).toEqual(await prompts({ mistakeTrials: 16 }, 0));
    const goal = (p: string) => p.slice(0, p.indexOf(' T'));
    expect(new Set(first.map(goal)).size).toBeGreaterThan(1);
    expect(first.some((p) => new Set(second.map(goal)).has(goal(p)))).toBe(false);
    expect(third).toEqual(first);
  });

  it("label each refused state with the browser's move there when sft.mistakeLabels is set (none without)", async () => {
    expect((await collectMistakes(webShop({}), testPolicy)).mistakes.every((m) => m.label === undefined)).toBe(true);
    const own = await collectMistakes(webShop({ mistakeLabels: 2 }), testPolicy);
    expect(own.mistakes.length).toBeGreaterThan(8);
    for (const m of own.mistakes) expect(m.label).toBe(`<action>click[${firstAffordable(m.prompt, [])}]</action>`);
  });

  it("label a later episode's refused states past the products its earlier episodes bought", async () => {
    // Episode 1 opens the first listed product and buys it; episode 2 clicks a value no product offers on the results.
    const buyer: PolicyClient = {
      async generate(request) {
        const p = request.prompt;
        if (p.includes('<remark>') || !p.includes('available actions: ')) return scriptedResult(request, '<remark>none</remark>');
        const text = p.slice(p.lastIndexOf('available actions: ') + 19, p.lastIndexOf(' | act:'));
        if (text.startsWith('search[')) return scriptedResult(request, `<action>${text}</action>`); // the one search offered
        const listed = text.split(', ');
        if (listed.includes('click[buy now]')) {
          episodeOne.set(p.slice(0, p.indexOf(' T1 |')), p);
          return scriptedResult(request, '<action>click[buy now]</action>');
        }
        const first = listed.find((a) => /^click\[b[0-9a-z]{9}\]$/.test(a))!;
        return scriptedResult(request, `<action>${/ T1 \|/.test(p) ? first : 'click[zzz-none]'}</action>`);
      },
    };
    const own = await collectMistakes(webShop({ mistakeLabels: 1 }), buyer);
    expect(own.mistakes.length).toBeGreaterThan(0);
    let skipped = 0;
    for (const m of own.mistakes) {
      expect(m.prompt).toMatch(/ T2 \|/);
      const bought = /acts: search\[[^\]]*\] ; click\[(b[0-9a-z]{9})\]/.exec(episodeOne.get(m.prompt.slice(0, m.prompt.indexOf(' T2 |')))!)![1];
      const label = `<action>click[${firstAffordable(m.prompt, [bought])}]</action>`;
      expect(m.label).toBe(label);
      if (label !== `<action>click[${firstAffordable(m.prompt, [])}]</action>`) skipped++;
    }
    // The first affordable product is the one bought in episode 1 wherever it is listed first: labels skip it.
    expect(skipped).toBeGreaterThan(0);
  });

  it("label ALFWorld's refused states with the search player's move: the first unsearched receptacle", async () => {
    const config = validateConfig({
      name: 'mistakes',
      model: { init: { preset: 'tiny', tokenizer: 'compact-alfworld', seed: 0 }, promptStyle: 'compact' },
      env: { name: 'alfworld', options: { household: 'small', maxTurns: 6, valid: 'admissible' } },
      trial: { episodes: 2, markRefused: true },
      rollout: { groupSize: 4 },
      sft: { trials: 16, trialsPerTask: 1, steps: 1, unlikelihood: 1, mistakeTrials: 6, mistakeSteps: 1, mistakeLabels: 1 },
    });
    // A command no room has, then `look`: the episode never sees inside a receptacle, so the player's next move is
    // always to search the first receptacle the room lists that is not where the task puts the object.
    const policy: PolicyClient = {
      async generate(request) {
        const p = request.prompt;
        if (p.endsWith('note:')) return scriptedResult(request, '<remark>none</remark>');
        return scriptedResult(request, `<action>${(p.match(/ ; /g) ?? []).length % 2 === 0 ? 'go to zzz 9' : 'look'}</action>`);
      },
    };
    const own = await collectMistakes(config, policy);
    expect(own.mistakes.length).toBeGreaterThan(6);
    for (const m of own.mistakes) {
      const destination = / (?:in|on) ([a-z]+)\. T\d/.exec(m.prompt)?.[1];
      const listed = m.prompt.slice(m.prompt.lastIndexOf('can: ') + 5, m.prompt.lastIndexOf(' | act:')).split(', ');
      const first = listed.find((c) => c.startsWith('go to ') && c.slice(6, c.lastIndexOf(' ')) !== destination);
      expect(m.label, m.prompt).toBe(`<action>${first}</action>`);
    }
  });

  it('need a weight for their rows (unlikelihood or labels), both counts, and ALFWorld or WebShop', () => {
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
    expect(bad({ ...base, sft: { mistakeTrials: 8, mistakeSteps: 1 } })).toMatch(/needs 'sft.unlikelihood' > 0 or 'sft.mistakeLabels' > 0/);
    expect(bad({ ...base, sft: { mistakeLabels: 1 } })).toMatch(/'sft.mistakeLabels' needs 'sft.mistakeTrials'/);
    expect(bad({ ...base, sft: { mistakeTrials: 8, mistakeSteps: 1, mistakeLabels: 1 } })).toBe('');
    expect(bad({ ...base, sft: { mistakeTrials: 8, unlikelihood: 1 } })).toMatch(/go together/);
    expect(bad({ ...base, sft: { mistakeRounds: 2 } })).toMatch(/'sft.mistakeRounds' needs 'sft.mistakeTrials'/);
    expect(bad({ ...base, sft: { mistakeTrials: 8, mistakeSteps: 1, unlikelihood: 1, mistakeRounds: 0 } })).toMatch(/mistakeRounds/);
    expect(bad({ ...base, sft: { mistakeTrials: 8, mistakeSteps: 1, unlikelihood: 1, mistakeRounds: 3 } })).toBe('');
    expect(bad({ name: 'm', env: { name: 'minesweeper' }, sft: { mistakeTrials: 8, mistakeSteps: 1, unlikelihood: 1 } })).toMatch(
      /is for ALFWorld and WebShop/,
    );
    expect(bad({ ...base, sft: { mistakeTrials: 8, mistakeSteps: 1, unlikelihood: 1 } })).toBe('');
  });
});
