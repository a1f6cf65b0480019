// The WebShop browser: it opens the first listed product within the price limit that it has not bought before (what
// the page shows), states in its reflections exactly the products it bought, and with them wins later episodes that
// the same shopper without memory loses.
import { describe, expect, it } from 'vitest';
import { taskSeed } from '../../src/envs/common/seeds.js';
import { createWebShopEnv } from '../../src/envs/webshop/index.js';
import { WebShopBrowser, boughtInEpisode, listedPrice } from '../../src/envs/webshop/browser.js';
import type { WebShopEnv } from '../../src/envs/webshop/env.js';
import type { TrajectoryStep } from '../../src/envs/types.js';

function playEpisode(env: WebShopEnv, player: WebShopBrowser): { steps: TrajectoryStep[]; won: boolean } {
  const steps: TrajectoryStep[] = [];
  for (;;) {
    const r = env.step(player.act());
    steps.push({ action: r.historyAction ?? '', observation: r.observation.text });
    if (r.won || r.done) return { steps, won: r.won };
  }
}

describe('the WebShop browser', () => {
  it('reads listed prices as the page shows them', () => {
    expect(listedPrice('$19.35')).toBe(19.35);
    expect(listedPrice('$25.41 to $30.41')).toBe(25.41);
    expect(listedPrice('$1,299.00')).toBe(1299);
    expect(listedPrice('N.A.')).toBe(Infinity);
    expect(
      boughtInEpisode([
        { action: 'click[B0X7TR299G]', observation: '' },
        { action: 'click[buy now]', observation: '' },
      ]),
    ).toEqual(['b0x7tr299g']);
    expect(
      boughtInEpisode([
        { action: 'click[b0x7tr299g]', observation: '' },
        { action: 'click[< prev]', observation: '' },
      ]),
    ).toEqual([]);
    // A product click the page refused (marked by trial.markRefused) opened nothing: the purchase is the open one's.
    expect(
      boughtInEpisode([
        { action: 'click[b0x7tr299g]', observation: '' },
        { action: 'click[b0aaaaaaaa]', observation: '', refused: true },
        { action: 'click[buy now]', observation: '' },
      ]),
    ).toEqual(['b0x7tr299g']);
  });

  it('refusedClicks: every click it offers the page refuses; a product page lacking a requested value offers those', () => {
    const env = createWebShopEnv({ maxTurns: 12 });
    const seen = { results: 0, item: 0, lacking: 0 };
    for (let i = 0; i < 60; i++) {
      env.reset(taskSeed('train', i));
      const player = new WebShopBrowser(env, { style: 'compact' });
      const steps: TrajectoryStep[] = [];
      for (let turn = 0; turn < 6; turn++) {
        const page = env.view().page;
        const refused = player.refusedClicks(steps);
        if (page === 'results' || page === 'item') seen[page]++;
        if (page === 'item') {
          const offered = new Set(env.admissibleActions());
          const requested = [...env.goal.goalOptions].map((v) => `click[${(typeof v === 'string' ? v : v[1]).toLowerCase()}]`);
          const missing = requested.filter((a) => !offered.has(a));
          if (missing.length > 0) {
            seen.lacking++;
            for (const click of missing) expect(refused).toContain(click);
          }
        }
        // Each offered click is refused by a copy of the environment in the same state: nothing changes.
        for (const click of refused) {
          const probe = createWebShopEnv({ maxTurns: 12 });
          probe.reset(taskSeed('train', i));
          for (const s of steps) probe.step(`<action>${s.action}</action>`);
          const before = probe.view();
          expect(probe.step(`<action>${click}</action>`).valid, click).toBe(false);
          expect(probe.view()).toEqual(before);
        }
        const r = env.step(player.act());
        steps.push({ action: r.historyAction ?? '', observation: r.observation.text });
        if (r.done || r.won) break;
      }
    }
    expect(seen.results).toBeGreaterThan(30);
    expect(seen.item).toBeGreaterThan(30);
    expect(seen.lacking).toBeGreaterThan(5);
  });

  it('opens the first affordable listed product, then the next one after its reflection names the first as wrong', () => {
    const env = createWebShopEnv({ maxTurns: 12 });
    let checked = 0;
    for (let i = 0; i < 40 && checked < 5; i++) {
      env.reset(taskSeed('train', i));
      const player = new WebShopBrowser(env, { style: 'compact' });
      const first = playEpisode(env, player);
      if (first.won) continue;
      const bought = boughtInEpisode(first.steps);
      if (bought.length === 0) continue;
      // It searched exactly what the search page offered.
      env.restart();
      expect(env.admissibleActions()[0]).toBe(first.steps[0].action);
      // The first product it opened is the first listed one within the price limit.
      const hits = env.searchResults(first.steps[0].action.slice('search['.length, -1)).slice(0, 10);
      const affordable = hits.find((h) => listedPrice(env.products[h].priceTag) <= env.goal.priceUpper);
      expect(bought[0]).toBe(env.products[affordable!].asin.toLowerCase());
      expect(player.reflect(first.steps)).toBe(`<remark>wrong: ${bought.join(', ')}.</remark>`);
      player.endEpisode(first.steps);
      env.restart();
      const second = playEpisode(env, player);
      expect(boughtInEpisode(second.steps)).not.toContain(bought[0]);
      checked++;
    }
    expect(checked).toBe(5);
  });

  it('with its reflections wins later episodes; the same shopper without memory repeats its first', () => {
    const env = createWebShopEnv({ maxTurns: 12 });
    const withMemory = [0, 0, 0];
    const without = [0, 0, 0];
    for (let i = 0; i < 60; i++) {
      for (const memory of [true, false]) {
        env.reset(taskSeed('train', i));
        let player = new WebShopBrowser(env, { style: 'compact' });
        for (let e = 0; e < 3; e++) {
          if (e > 0) env.restart();
          if (!memory) player = new WebShopBrowser(env, { style: 'compact' });
          const run = playEpisode(env, player);
          if (run.won) {
            for (let k = e; k < 3; k++) (memory ? withMemory : without)[k]++;
            break;
          }
          player.endEpisode(run.steps);
        }
      }
    }
    expect(without[2]).toBe(without[0]);
    expect(withMemory[0]).toBe(without[0]);
    expect(withMemory[2]).toBeGreaterThanOrEqual(withMemory[0] + 8);
  });
});
