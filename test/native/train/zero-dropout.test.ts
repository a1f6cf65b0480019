// LoRA dropout under ZeRO (one process): the dropout masks of a step are seeded from the optimizer's step counter, so
// every stage must advance the same counter. With the learning rate 0 the parameters never move and a step's loss
// depends on its masks alone: two steps' losses differ (new masks each step), and stages 1 and 2 give stage 0's loss
// at every step (the same masks). With a learning rate the three stages end at the same parameters, and the `step`
// metric counts the updates at every stage.
import { describe, expect, it } from 'vitest';
import { Optimizer } from '../../../src/train/optimizer.js';
import type { TrainRow } from '../../../src/train/batch.js';
import { tinyPolicy } from './step-helpers.js';
import { randomIds, rng } from '../../helpers/index.js';

const STEPS = 3;

function rows(): TrainRow[] {
  const r = rng(23);
  return Array.from({ length: 5 }, (_, i) => {
    const response = randomIds(r, 3 + (i % 3), 50);
    return { prompt: randomIds(r, 4 + (i % 2), 50), response, advantage: r() * 2 - 1, oldLogprobs: Float32Array.from(response, () => -3 - r()) };
  });
}

interface Run {
  losses: number[];
  steps: number[];
  stepCount: number;
  params: Map<string, Float64Array>;
}

/** STEPS steps (learning rate `lr`) over the same rows at ZeRO stage `zero`, on a fresh float64 model with a LoRA adapter (dropout 0.3). */
async function run(zero: 0 | 1 | 2, lr: number): Promise<Run> {
  await using policy = await tinyPolicy(11, {}, 'float64');
  await policy.addLora({ r: 3, alpha: 6, dropout: 0.3, targets: 'all-linear', seed: 4 });
  // B off zero, so that the adapter (and so its dropout) changes the loss from the first step.
  for (const [name, t] of Object.entries(policy.native.loraParameters())) {
    const data = t.data as Float64Array;
    if (name.includes('lora_B')) for (let i = 0; i < data.length; i++) data[i] = 0.05 * Math.sin(i + 1);
    t.dispose();
  }
  using opt = Optimizer.create(policy, { lr: 1e-2, weightDecay: 0, gradClip: 0, zero });
  const losses: number[] = [];
  const steps: number[] = [];
  for (let s = 0; s < STEPS; s++) {
    const m = await opt.trainStep(rows(), { microBatchTokens: 24, lr });
    losses.push(m.loss);
    steps.push(m.step);
  }
  const params = new Map<string, Float64Array>();
  for (const [name, t] of Object.entries(policy.native.loraParameters())) {
    params.set(name, Float64Array.from(t.data as Float64Array));
    t.dispose();
  }
  return { losses, steps, stepCount: opt.stepCount, params };
}

function maxDiff(a: Map<string, Float64Array>, b: Map<string, Float64Array>): number {
  let m = 0;
  expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
  for (const [name, x] of a) {
    const y = b.get(name)!;
    for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i] - y[i]));
  }
  return m;
}

describe('LoRA dropout under ZeRO stages 1 and 2', () => {
  it('with lr 0 each step draws new masks, the same at every stage; the step metric counts the updates', async () => {
    const stage0 = await run(0, 0);
    // New masks every step: the parameters are those of the first step, the losses are not.
    for (let s = 1; s < STEPS; s++) expect(Math.abs(stage0.losses[s] - stage0.losses[0]), `stage 0, step ${s + 1}`).toBeGreaterThan(1e-6);
    expect(stage0.steps).toEqual([1, 2, 3]);
    for (const zero of [1, 2] as const) {
      const r = await run(zero, 0);
      expect(r.steps, `stage ${zero}: step metric`).toEqual([1, 2, 3]);
      expect(r.stepCount, `stage ${zero}: stepCount`).toBe(STEPS);
      for (let s = 0; s < STEPS; s++) {
        expect(Math.abs(r.losses[s] - stage0.losses[s]), `stage ${zero}, step ${s + 1}: the masks of stage 0`).toBeLessThan(1e-12);
      }
    }
  });

  it('with a learning rate, stages 1 and 2 end where stage 0 does', async () => {
    const stage0 = await run(0, 1e-2);
    for (const zero of [1, 2] as const) {
      const r = await run(zero, 1e-2);
      expect(maxDiff(r.params, stage0.params), `stage ${zero}`).toBeLessThan(1e-12);
      for (let s = 0; s < STEPS; s++) expect(Math.abs(r.losses[s] - stage0.losses[s])).toBeLessThan(1e-12);
    }
  });
});
