// The fixed-slot KV cache in both layouts (packed: rows move down into freed slots, the CPU default; fixed: rows never
// move and steps round rows and width up to powers of two, the GPU default that CUDA graphs replay), and prompts
// prefilled in chunks across calls. Checked against greedy decoding by repeated full forwards (no cache of any kind).
import { describe, expect, it } from 'vitest';
import { Engine, type EngineResult } from '../../../src/engine/index.js';
import { tinyPolicy } from '../train/step-helpers.js';
import { greedyByFullForwards } from './full-forwards.js';
import { randomIds, rng } from '../../helpers/index.js';

const V = 60;

describe('fixed-slot KV cache', () => {
  for (const slotLayout of ['packed', 'fixed'] as const) {
    it(`${slotLayout}: prompts longer than the prefill budget, prefix reuse, joins and leaves decode as full forwards do`, async () => {
      await using policy = await tinyPolicy(31, { vocab: V, layers: 2 });
      const r = rng(8);
      // Two tasks whose trials share an opening (prefix cache), some prompts several prefill chunks long.
      const openings = [randomIds(r, 40, V), randomIds(r, 23, V)];
      const requests = Array.from({ length: 11 }, (_, i) => ({
        prompt:
          i === 4
            ? randomIds(r, 100, V)
            : i % 3 === 2
              ? randomIds(r, 3 + Math.floor(r() * 90), V)
              : [...openings[i % 2], ...randomIds(r, Math.floor(r() * 30), V)],
        maxNew: 2 + Math.floor(r() * 30),
      }));
      await using engine = new Engine(policy, { slots: 5, prefillTokens: 16, stepsPerCall: 3, slotLayout });
      const first = requests.slice(0, 6).map((q) => engine.generate({ promptIds: q.prompt, maxNewTokens: q.maxNew, temperature: 0, stopIds: [] }));
      await new Promise((res) => setTimeout(res, 2));
      const rest = requests.slice(6).map((q) => engine.generate({ promptIds: q.prompt, maxNewTokens: q.maxNew, temperature: 0, stopIds: [] }));
      const ours = (await Promise.all([...first, ...rest])).map((x) => Array.from(x.tokens));
      for (const [i, q] of requests.entries()) {
        expect(ours[i], `request ${i}`).toEqual(await greedyByFullForwards(policy, q.prompt, q.maxNew));
      }
      const s = engine.stats();
      expect(s.reusedPromptTokens).toBeGreaterThan(0);
      expect(Math.max(...requests.map((q) => q.prompt.length))).toBeGreaterThan(4 * 16);
      expect(s.peakActive).toBe(5);
    });
  }

  it('a row that is decoding gets steps between the chunks of a long prompt instead of waiting for it whole', async () => {
    await using policy = await tinyPolicy(32, { vocab: V, layers: 2 });
    const r = rng(9);
    const short = randomIds(r, 5, V);
    const long = randomIds(r, 160, V);
    // Tokens the short request streams while the long one is being prefilled (from its submission to its first token).
    const during = async (prefillTokens: number): Promise<{ streamed: number; long: EngineResult }> => {
      await using engine = new Engine(policy, { slots: 4, prefillTokens, stepsPerCall: 1, prefixCacheBytes: 0 });
      let streamed = 0;
      let counting = false;
      let longDone: Promise<EngineResult> | undefined;
      let shortDone: Promise<EngineResult> | undefined;
      const started = new Promise<void>((resolve) => {
        shortDone = engine.generate({
          promptIds: short,
          maxNewTokens: 80,
          temperature: 0,
          stopIds: [],
          onTokens: (t) => {
            if (counting) streamed += t.length;
            if (!longDone) {
              longDone = engine.generate({ promptIds: long, maxNewTokens: 1, temperature: 0, stopIds: [] });
              counting = true;
              void longDone.then(() => (counting = false));
              resolve();
            }
          },
        });
      });
      await started;
      const finished = await longDone!;
      await shortDone;
      return { streamed, long: finished };
    };
    const chunked = await during(16);
    const whole = await during(8192);
    expect(chunked.streamed).toBeGreaterThanOrEqual(8); // 160 tokens in chunks of 16: ten calls, a step in each
    expect(whole.streamed).toBeLessThanOrEqual(2);
    const reference = await greedyByFullForwards(policy, long, 1);
    expect(Array.from(chunked.long.tokens)).toEqual(reference);
    expect(Array.from(whole.long.tokens)).toEqual(reference);
  });

  it('counts the keys/values decode attention reads: up to the longest row (packed), the rounded width (fixed)', async () => {
    // Two rows joining together (prompts of 5 and 9 tokens; 4 and 6 new tokens, the first of each from the prefill),
    // then 5 decode steps. A row of length L sees L + 1 columns; packed steps attend to the longest row's columns,
    // fixed ones to the width rounded up to 64 over 2 rows (a power of two), and the live columns are the same.
    const layers = 2;
    const kvHeads = 2;
    const headDim = 8;
    await using policy = await tinyPolicy(34, { vocab: V, layers, kvHeads, headDim });
    const columnBytes = 2 * layers * kvHeads * headDim * 4;
    const r = rng(10);
    const prompts = [randomIds(r, 5, V), randomIds(r, 9, V)];
    const tokens: Record<string, number[][]> = {};
    for (const slotLayout of ['packed', 'fixed'] as const) {
      await using engine = new Engine(policy, { slots: 4, stepsPerCall: 1, slotLayout, prefixCacheBytes: 0 });
      const out = await Promise.all(prompts.map((p, i) => engine.generate({ promptIds: p, maxNewTokens: [4, 6][i], temperature: 0, stopIds: [] })));
      tokens[slotLayout] = out.map((x) => Array.from(x.tokens));
      const s = engine.stats();
      expect(s.decodeSteps).toBe(5);
      // Live columns: steps 1-3 both rows (6 + 10, 7 + 11, 8 + 12), steps 4-5 the longer alone (13, 14).
      expect(s.kvBytesLive).toBe((16 + 18 + 20 + 13 + 14) * columnBytes);
      // Read: packed, every computed row sees the longest row's columns (2 x 10, 2 x 11, 2 x 12, 13, 14); fixed,
      // two rows (the finished one's slot stays below the other) of 64 columns in every step.
      expect(s.kvBytesRead).toBe((slotLayout === 'packed' ? 20 + 22 + 24 + 13 + 14 : 5 * 2 * 64) * columnBytes);
    }
    expect(tokens.fixed).toEqual(tokens.packed);
  });

  it('precapture captures nothing on the CPU and refuses a busy engine', async () => {
    await using policy = await tinyPolicy(35, { vocab: V, layers: 1 });
    await using engine = new Engine(policy, { slots: 2, precapture: { columns: 64, temperature: 0 } });
    expect(await engine.precapture({ columns: 64 })).toMatchObject({ graphs: 0 });
    await expect(engine.precapture({ columns: 0 })).rejects.toMatchObject({ code: 'E_ARG' });
    const pending = engine.generate({ promptIds: [1, 2, 3], maxNewTokens: 3, temperature: 0, stopIds: [] });
    await expect(engine.precapture({ columns: 64 })).rejects.toMatchObject({ code: 'E_ARG' });
    expect((await pending).tokens.length).toBe(3);
    expect(engine.stats().graphs).toBe(0);
  });

  it('rejects an unknown slot layout with E_ARG', async () => {
    await using policy = await tinyPolicy(33, { vocab: V, layers: 1 });
    expect(() => new Engine(policy, { slotLayout: 'sparse' as 'packed' })).toThrow(expect.objectContaining({ code: 'E_ARG' }));
  });
});
