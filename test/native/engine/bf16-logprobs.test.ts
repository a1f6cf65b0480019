// Engine log-probs with bf16 compute against the model's own log-prob computation of the same tokens, on the CPU, in
// the GPU's fixed slot layout: the workload of the CUDA graph test's bf16 case (test/native/engine/cuda-graphs.test.ts), so
// the tolerance both use (tolerances.ts) is checked here on seeds that reach the measured gaps.
import { describe, expect, it } from 'vitest';
import { Engine, type EngineRequest } from '../../../src/engine/index.js';
import { Policy } from '../../../src/model/policy.js';
import { tinyConfig } from '../train/step-helpers.js';
import { randomIds, rng } from '../../helpers/index.js';
import { BF16_LOGPROB_TOLERANCE } from './tolerances.js';

const V = 64;

async function worstGap(seed: number): Promise<number> {
  await using policy = await Policy.init(tinyConfig({ vocab: V, layers: 3 }), { seed, std: 0.2, device: 'cpu', dtype: 'bfloat16', paramDtype: 'float32' });
  await using engine = new Engine(policy, { slots: 8, stepsPerCall: 8, slotLayout: 'fixed' });
  const r = rng(5);
  const prompts = Array.from({ length: 12 }, (_, i) => randomIds(r, 3 + ((i * 7) % 40), V));
  const sampled = (i: number, p: number[]): EngineRequest => ({ promptIds: p, maxNewTokens: 24, stopIds: [], seed: 7 + i, temperature: 1 });
  const first = prompts.slice(0, 6).map((p, i) => engine.generate(sampled(i, p)));
  await new Promise((res) => setTimeout(res, 5));
  const second = prompts.slice(6).map((p, i) => engine.generate(sampled(6 + i, p)));
  const out = await Promise.all([...first, ...second]);
  const ref = await policy.logprobs({ prompts, completions: out.map((x) => x.tokens) });
  let worst = 0;
  for (let i = 0; i < out.length; i++) {
    for (let t = 0; t < out[i].logprobs.length; t++) worst = Math.max(worst, Math.abs(out[i].logprobs[t] - ref[i][t]));
  }
  return worst;
}

describe('bf16 engine log-probs', () => {
  it(`equal policy.logprobs within ${BF16_LOGPROB_TOLERANCE} on the CPU (seeds 1-10, among them gaps above 2e-2)`, async () => {
    const gaps: number[] = [];
    for (let seed = 1; seed <= 10; seed++) gaps.push(await worstGap(seed));
    expect(Math.max(...gaps), `per-seed gaps ${gaps.map((g) => g.toExponential(2)).join(', ')}`).toBeLessThan(BF16_LOGPROB_TOLERANCE);
    // The gaps are bf16 rounding, not zero: a check that cannot see them would pass anything.
    expect(Math.max(...gaps)).toBeGreaterThan(1e-3);
  });
});
