// One rank of the data-parallel step test (test/distributed/step.test.ts): a seeded tiny model, 9 seeded rows of
// which this rank takes i mod WORLD_SIZE = RANK (all 9 without WORLD_SIZE), one policy step and one supervised step
// through the process group; writes the losses and every parameter after the steps to argv[2] (JSON).
import { writeFileSync } from 'node:fs';
import { DistContext } from '../../src/train/distributed.js';
import { Optimizer } from '../../src/train/optimizer.js';
import type { TrainRow } from '../../src/train/batch.js';
import { randomIds, rng, snapshot, tinyPolicy } from '../train/step-helpers.js';

const out = process.argv[2];
const aggregation = (process.argv[3] ?? 'token-mean') as 'token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum';
const dist = DistContext.fromEnv();
// float64, so that the comparison measures the algorithm (global normalisation, summed gradients) and not float32
// summation order, which AdamW's first step (about lr * sign(g)) amplifies for near-zero gradients.
const policy = await tinyPolicy(11, {}, 'float64');
const r = rng(5);
const rows: TrainRow[] = Array.from({ length: 9 }, (_, i) => {
  const response = randomIds(r, 2 + ((i * 5) % 7), 50);
  return {
    prompt: randomIds(r, 3 + ((i * 3) % 5), 50),
    response,
    advantage: r() * 2 - 1,
    oldLogprobs: Float32Array.from(response, () => -3 - r()),
  };
});
const mine = dist ? dist.shard(rows.length).map((i) => rows[i]) : rows;
const opt = Optimizer.create(policy, { lr: 1e-2, gradClip: 0.5 });
const group = dist?.native;
const m = await opt.trainStep(mine, { aggregation, microBatchTokens: 16, group });
const sft = await opt.sftStep(
  mine.map((x) => ({ prompt: x.prompt, response: x.response })),
  { microBatchTokens: 16, group },
);
const params = Object.fromEntries([...snapshot(policy)].map(([k, v]) => [k, Array.from(v)]));
writeFileSync(out, JSON.stringify({ loss: m.loss, entropy: m.entropy, gradNorm: m.gradNorm, tokens: m.tokens, rows: m.rows, sftLoss: sft.loss, params }));
await dist?.close();
opt.dispose();
policy.dispose();
