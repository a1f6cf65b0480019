// One rank of the ZeRO tests (test/native/distributed/zero.test.ts): a seeded float64 tiny model, 9 seeded rows of which
// this rank takes i mod WORLD_SIZE = RANK (all 9 without WORLD_SIZE), and optimizer steps at ZeRO stage argv[3]
// with the GiGPO-style policy loss or PPO's (value head and value loss) per argv[4]. The first step's advantages are
// 20x larger, so clipping (gradClip 5) acts there and not in the later steps.
//
//   child-zero.ts OUT STAGE LOSS run STEPS              steps 1..STEPS
//   child-zero.ts OUT STAGE LOSS save STEPS DIR         steps 1..STEPS, then the parameters and the optimizer state into DIR
//   child-zero.ts OUT STAGE LOSS resume STEPS DIR       DIR's parameters and state, then steps (k+1)..STEPS
//
// OUT (JSON): the metrics of each step taken, every parameter, and the bytes the optimizer holds. LAMER_TEST_LORA=1:
// a LoRA adapter on the model (its tensors are written among the parameters), with LAMER_TEST_DROPOUT's dropout
// (default 0).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DistContext } from '../../../src/train/distributed.js';
import { Optimizer } from '../../../src/train/optimizer.js';
import type { TrainRow } from '../../../src/train/batch.js';
import { snapshot, tinyPolicy } from '../train/step-helpers.js';
import { randomIds, rng } from '../../helpers/index.js';

const [out, stageArg, loss, mode, stepsArg, dir] = process.argv.slice(2);
const stage = Number(stageArg) as 0 | 1 | 2;
const steps = Number(stepsArg);
const ppo = loss === 'ppo';
const dist = DistContext.fromEnv();
const policy = await tinyPolicy(11, {}, 'float64');
const lora = process.env.LAMER_TEST_LORA === '1';
if (lora) {
  await policy.addLora({ r: 3, alpha: 6, dropout: Number(process.env.LAMER_TEST_DROPOUT ?? 0), targets: 'all-linear', seed: 4 });
  // B off zero, so that every adapter tensor has a gradient from the first step.
  for (const [name, t] of Object.entries(policy.native.loraParameters())) {
    const data = t.data as Float64Array;
    if (name.includes('lora_B')) for (let i = 0; i < data.length; i++) data[i] = 0.01 * Math.sin(i + 1);
    t.dispose();
  }
}

function rowsOf(step: number): TrainRow[] {
  const r = rng(5 + 17 * step);
  const scale = step === 1 ? 20 : 1;
  return Array.from({ length: 9 }, (_, i) => {
    const response = randomIds(r, 2 + ((i * 5) % 7), 50);
    const row: TrainRow = {
      prompt: randomIds(r, 3 + ((i * 3) % 5), 50),
      response,
      advantage: ppo ? Float32Array.from(response, () => scale * (r() * 2 - 1)) : scale * (r() * 2 - 1),
      oldLogprobs: Float32Array.from(response, () => -3 - r()),
    };
    if (ppo) {
      row.returns = Float32Array.from(response, () => r());
      row.oldValues = Float32Array.from(response, () => 0.1 * r());
    }
    return row;
  });
}

const opt = Optimizer.create(policy, { lr: 1e-2, gradClip: 5, weightDecay: 0.1, zero: stage, valueHead: ppo });
const group = dist?.native;
let first = 1;
if (mode === 'resume') {
  const saved = JSON.parse(readFileSync(join(dir, 'params.json'), 'utf8')) as Record<string, number[]>;
  for (const [name, t] of Object.entries(policy.native.parameters())) {
    (t.data as Float64Array).set(saved[name]);
    t.dispose();
  }
  await opt.load(join(dir, 'optimizer.safetensors'), group);
  first = opt.stepCount + 1;
}
const metrics: { loss: number; gradNorm: number; step: number; valueLoss?: number }[] = [];
for (let step = first; step <= steps; step++) {
  const rows = rowsOf(step);
  const mine = dist ? dist.shard(rows.length).map((i) => rows[i]) : rows;
  const m = await opt.trainStep(mine, { microBatchTokens: 16, group, ...(ppo ? { valueCoef: 1 } : {}) });
  metrics.push({ loss: m.loss, gradNorm: m.gradNorm, step: m.step, ...(ppo ? { valueLoss: m.valueLoss } : {}) });
}
const params = Object.fromEntries([...snapshot(policy)].map(([k, v]) => [k, Array.from(v)]));
if (lora) {
  for (const [name, t] of Object.entries(policy.native.loraParameters())) {
    params[name] = Array.from(t.data as Float64Array);
    t.dispose();
  }
}
if (mode === 'save') {
  const main = !dist || dist.isMain;
  if (main) writeFileSync(join(dir, 'params.json'), JSON.stringify(params));
  await opt.save(main ? join(dir, 'optimizer.safetensors') : null, group);
}
const memory = await opt.memory();
writeFileSync(out, JSON.stringify({ metrics, params, memory, steps: opt.stepCount }));
await dist?.close();
opt.dispose();
policy.dispose();
