// `lamer serve` against the engine called directly, in the same run: generated tokens per second with 1, 8 and 32
// concurrent clients, each asking for 64 new tokens of the same prompt (token ids, so both sides decode exactly the
// same sequences: same seeds), through the official `openai` client over HTTP on loopback, or through
// Engine.generate. Rounds alternate the two sides; the figures are medians. The HTTP layer's overhead is
// 1 - served / direct.
// bench/run.ts collects `benches`; `npx tsx bench/serve.bench.ts` prints the figures alone.
import { pathToFileURL } from 'node:url';
import OpenAI from 'openai';
import { Policy } from '../src/model/policy.js';
import { presetCheckpoint } from '../src/model/presets.js';
import { serve } from '../src/serve/server.js';
import type { Bench, BenchResult, Emit } from './run.js';

const NEW_TOKENS = 64;
const ROUNDS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function run(emit?: Emit): Promise<BenchResult[]> {
  const preset = await presetCheckpoint('tiny', 'compact');
  const policy = await Policy.init(preset.config, { seed: 1, assets: preset.assets });
  const server = await serve(policy, { port: 0, slots: 32 });
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
  const prompt = policy.encode('mine T1 | mem: none | acts: none | now: a board of cells to open | act:');
  const out: BenchResult[] = [];
  try {
    for (const clients of [1, 8, 32]) {
      const direct: number[] = [];
      const served: number[] = [];
      for (let round = 0; round < ROUNDS + 1; round++) {
        // Direct: the engine the server uses, called as a library would.
        let t = performance.now();
        const a = await Promise.all(
          Array.from({ length: clients }, (_, i) =>
            server.engine.generate({ promptIds: prompt, maxNewTokens: NEW_TOKENS, temperature: 1, seed: round * 100 + i }),
          ),
        );
        const directRate = a.reduce((s, r) => s + r.tokens.length, 0) / ((performance.now() - t) / 1000);
        t = performance.now();
        const b = await Promise.all(
          Array.from({ length: clients }, (_, i) =>
            client.completions.create({ model: 'lamer', prompt, max_tokens: NEW_TOKENS, temperature: 1, seed: round * 100 + i }),
          ),
        );
        const servedRate = b.reduce((s, r) => s + (r.usage?.completion_tokens ?? 0), 0) / ((performance.now() - t) / 1000);
        if (round === 0) continue; // warm-up
        direct.push(directRate);
        served.push(servedRate);
      }
      const rows: BenchResult[] = [
        { name: `serve: engine direct, ${clients} concurrent (tiny model, CPU)`, value: median(direct), unit: 'tokens/s' },
        { name: `serve: openai client over HTTP, ${clients} concurrent`, value: median(served), unit: 'tokens/s' },
        { name: `serve: HTTP layer overhead, ${clients} concurrent`, value: 100 * (1 - median(served) / median(direct)), unit: '%' },
      ];
      for (const r of rows) emit?.(r);
      out.push(...rows);
    }
  } finally {
    await server.close();
    policy.dispose();
  }
  return out;
}

export const benches: Bench[] = [{ name: 'serve: HTTP against the engine direct', unit: 'tokens/s', run: (emit) => run(emit) }];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const r of await run()) console.log(`${r.name}: ${r.value.toFixed(1)} ${r.unit}`);
}
