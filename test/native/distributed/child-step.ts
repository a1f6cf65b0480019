// One rank of the data-parallel step test (test/native/distributed/step.test.ts): a seeded tiny model, 9 seeded rows of
// which this rank takes i mod WORLD_SIZE = RANK (all 9 without WORLD_SIZE), one policy step and one supervised step
// through the process group; writes the losses and every parameter after the steps to argv[2] (JSON). argv[4] 'lora':
// the same with a LoRA adapter on the model (only the adapter trains; its tensors are written too).
import { writeFileSync } from 'node:fs';
import { DistContext } from '../../../src/train/distributed.js';
import { Optimizer } from '../../../src/train/optimizer.js';
import type { TrainRow } from '../../../src/train/batch.js';
import { snapshot, tinyPolicy } from '../train/step-helpers.js';
import { randomIds, rng } from '../../helpers/index.js';

const out = process.argv[2];
const aggregation = (process.argv[3] ?? 'token-mean') as 'token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum';
const dist = DistContext.fromEnv();
// float64, so that the comparison measures the algorithm (global normalisation, summed gradients) and not float32
// summation order, which AdamW's first step (about lr * sign(g)) amplifies for near-zero gradients.
const policy = await tinyPolicy(11, {}, 'float64');
const lora = process.argv[4] === 'lora';
if (lora) {
  await policy.addLora({ r: 3, alpha: 6, dropout: 0, targets: ['q_proj', 'o_proj', 'up_proj'], seed: 4 });
  // B away from zero, differently on each rank: the broadcast below must make them rank 0's.
  for (const [name, t] of Object.entries(policy.native.loraParameters())) {
    const data = t.data as Float64Array;
    if (name.includes('lora_B')) for (let i = 0; i < data.length; i++) data[i] = 0.01 * Math.sin(i + 1 + (dist?.rank ?? 0));
    t.dispose();
  }
  // Only rank 0's values survive the broadcast: a single process uses rank 0's.
  if (dist) await dist.native.broadcastModel(policy.native);
}
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
if (lora) {
  for (const [name, t] of Object.entries(policy.native.loraParameters())) {
    params[name] = Array.from(t.data as Float64Array);
    t.dispose();
  }
}
writeFileSync(out, JSON.stringify({ loss: m.loss, entropy: m.entropy, gradNorm: m.gradNorm, tokens: m.tokens, rows: m.rows, sftLoss: sft.loss, params }));
await dist?.close();
opt.dispose();
policy.dispose();
