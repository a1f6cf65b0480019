// Supervised warm-start steps: a tiny model memorises a fixed set of sequences (loss close to zero).
// test/parity/train/step-sft.test.ts runs the same steps in transformers + torch.optim.AdamW.
import { describe, expect, it } from 'vitest';
import { Policy } from '../../../src/model/policy.js';
import { Optimizer } from '../../../src/train/optimizer.js';
import { SFT_SETTINGS as SETTINGS, SFT_STEPS as STEPS, sftRows as fixedRows, tinyConfig } from './step-helpers.js';

describe('supervised steps', () => {
  it(`memorise ${6} sequences: the loss falls close to zero`, async () => {
    await using policy = await Policy.init(tinyConfig({ vocab: 64 }), { seed: 3, std: 0.02 });
    using opt = Optimizer.create(policy, SETTINGS);
    const rows = fixedRows(64);
    const losses: number[] = [];
    for (let s = 0; s < STEPS; s++) losses.push((await opt.sftStep(rows, { microBatchTokens: 4096 })).loss);
    expect(losses[0]).toBeGreaterThan(Math.log(64) - 0.2); // starts near uniform
    expect(losses[STEPS - 1]).toBeLessThan(0.05);
    // Greedy check: the model now puts most of its mass on each memorised token.
    const lp = await policy.logprobs({ prompts: rows.map((r) => r.prompt), completions: rows.map((r) => r.response) });
    for (const row of lp) for (const x of row) expect(x).toBeGreaterThan(Math.log(0.5));
  }, 300_000);
});
