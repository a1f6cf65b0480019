// LoRA through the whole pipeline on the CPU: the engine decodes with the adapter of the latest step (a step's change
// shows in the very next generation's log-probs), the KL reference is the base with the adapter off, a LoRA run's
// warm start lowers its loss and its checkpoints are peft adapter folders, and a resumed LoRA run reproduces the
// uninterrupted one.
import { describe, expect, it } from 'vitest';
import { withoutTimings } from '../../helpers/index.js';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Policy } from '../../../src/model/policy.js';
import { presetCheckpoint } from '../../../src/model/presets.js';
import { Engine } from '../../../src/engine/index.js';
import { Optimizer } from '../../../src/train/optimizer.js';
import { Trainer } from '../../../src/train/trainer.js';
import { validateConfig, type TrainerConfigInput } from '../../../src/train/config.js';
import { createNativeRuntime } from '../../../src/train/native-runtime.js';
import type { IterationEvent, TrainerEvent } from '../../../src/train/events.js';
import { addon } from '../../../src/native/addon.js';
import { Tensor } from '../../../src/tensor.js';
import { hasCode } from '../../../src/errors.js';
import { collect, tinyNativeConfig } from './helpers.js';

async function tinyPolicy(): Promise<Policy> {
  const preset = await presetCheckpoint('tiny', 'compact');
  return Policy.init(preset.config, { seed: 7, assets: preset.assets });
}

const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => Math.max(...Array.from(a, (x, i) => Math.abs(x - b[i])));

describe('LoRA in the engine and the train step', () => {
  for (const merged of [false, true]) {
    it(`the engine's next generation after a step decodes with the stepped adapter (${merged ? 'merged copies' : 'unmerged'})`, async () => {
      await using policy = await tinyPolicy();
      await policy.addLora({ r: 4, alpha: 8, dropout: 0, targets: 'all-linear', seed: 1 });
      if (merged) await policy.setAdapterMerged(true);
      await using engine = new Engine(policy, { slots: 4 });
      using opt = Optimizer.create(policy, { lr: 3e-2, weightDecay: 0 });
      const prompt = [5, 9, 12, 7, 3, 20];
      const request = { promptIds: prompt, maxNewTokens: 8, temperature: 0, stopIds: [] };
      // One step first, so that B is off zero and the adapter changes the model.
      await opt.sftStep([{ prompt, response: [30, 31, 32, 33] }]);
      const before = await engine.generate(request);
      // The training forward's log-probs (adapter applied unmerged, with gradients) of the engine's tokens.
      const trained = async (tokens: Int32Array) =>
        (await opt.lossAndGrad([{ prompt, response: Array.from(tokens) }], { objective: 'sft', grad: false })).logprobs;
      expect(maxDiff(before.logprobs, await trained(before.tokens))).toBeLessThan(1e-4);
      // One step on the greedy continuation itself, pushing its log-probs up.
      await opt.sftStep([{ prompt, response: Array.from(before.tokens) }]);
      const after = await engine.generate(request);
      const now = await trained(before.tokens);
      // The model changed (the same tokens score differently now) ...
      expect(maxDiff(now, before.logprobs)).toBeGreaterThan(1e-3);
      // ... and the engine decoded with it: where it produced the same tokens, their log-probs are the new ones.
      const same = after.tokens.every((t, i) => t === before.tokens[i]);
      expect(maxDiff(after.logprobs, same ? now : await trained(after.tokens))).toBeLessThan(1e-4);
      // Only the adapter trained: its state is A and B (2 per module), the base has no optimizer state.
      const m = await opt.memory();
      expect(m.trainableCount).toBe(policy.loraParameterCount);
      expect(m.optimizerState).toBe(2 * 4 * m.trainableCount);
      expect(m.gradients).toBe(4 * m.trainableCount);
    });
  }

  it('the KL reference of a LoRA policy is its base: the KL of a fresh adapter (B = 0) is 0, and grows as it trains', async () => {
    await using policy = await tinyPolicy();
    await policy.addLora({ r: 2, alpha: 4, dropout: 0, targets: ['q_proj', 'v_proj', 'down_proj'], seed: 2 });
    using opt = Optimizer.create(policy, { lr: 5e-2, weightDecay: 0 });
    const rows = [{ prompt: [4, 8, 15], response: [16, 23, 42], advantage: 1 }];
    const kl = { type: 'low_var_kl' as const, coef: 0.1 };
    const first = await opt.lossAndGrad(rows, { kl, grad: false });
    expect(first.metrics.klLoss).toBe(0);
    for (let i = 0; i < 3; i++) await opt.trainStep(rows, { kl });
    const later = await opt.lossAndGrad(rows, { kl, grad: false });
    expect(later.metrics.klLoss).toBeGreaterThan(1e-6);
    // A policy without an adapter still needs a reference or refLogprobs.
    await using plain = await tinyPolicy();
    using plainOpt = Optimizer.create(plain, {});
    await expect(plainOpt.lossAndGrad(rows, { kl, grad: false })).rejects.toThrow(/reference/);
  });

  it('PPO with an adapter trains the value head beside it, and nothing of the base', async () => {
    await using policy = await tinyPolicy();
    await policy.addLora({ r: 2, alpha: 4, dropout: 0, targets: ['v_proj', 'o_proj'], seed: 5 });
    using opt = Optimizer.create(policy, { lr: 1e-2, valueHead: true });
    const rows = [{ prompt: [4, 8, 15], response: [16, 23, 42], advantage: [0.5, -0.2, 1], returns: [1, 0.5, 0.2], oldValues: [0, 0, 0] }];
    const g = await opt.lossAndGrad(rows, { valueCoef: 1 });
    const names = Object.keys(g.grads!).sort();
    for (const t of Object.values(g.grads!)) t.dispose();
    expect(names.filter((n) => !n.includes('lora_'))).toEqual(['value_head.bias', 'value_head.weight']);
    expect(names.filter((n) => n.includes('lora_')).length).toBe(policy.lora!.modules.length * 2);
    expect(g.metrics.valueLoss).toBeGreaterThan(0);
    const m = await opt.trainStep(rows, { valueCoef: 1 });
    expect(Number.isFinite(m.valueLoss)).toBe(true);
  });

  it('gradient checkpointing gives the same adapter gradients as a plain backward, with dropout too (same masks in the recomputation)', async () => {
    const grads: Record<string, number[]>[] = [];
    for (const dropout of [0, 0.3]) {
      await using policy = await tinyPolicy();
      await policy.addLora({ r: 4, alpha: 4, dropout, targets: 'all-linear', seed: 3 });
      using opt = Optimizer.create(policy, { lr: 1e-2 });
      const rows = [{ prompt: [4, 8, 15, 16], response: [23, 42, 7], advantage: 0.5 }];
      // One step first, so that B is not zero and every gradient is.
      await opt.sftStep(rows.map(({ prompt, response }) => ({ prompt, response })));
      const a = await opt.lossAndGrad(rows, { gradientCheckpointing: false });
      const again = await opt.lossAndGrad(rows, { gradientCheckpointing: false });
      const b = await opt.lossAndGrad(rows, { gradientCheckpointing: true });
      const mine: Record<string, number[]> = {};
      for (const [name, g] of Object.entries(a.grads!)) {
        mine[name] = g.toArray();
        expect(Math.max(...mine[name].map(Math.abs)), name).toBeGreaterThan(0);
        // Dropout masks are seeded by the step and micro-batch: the same step draws the same masks.
        expect(maxDiff(mine[name], again.grads![name].toArray()), `${name} repeated (dropout ${dropout})`).toBe(0);
        expect(maxDiff(mine[name], b.grads![name].toArray()), `${name} checkpointed (dropout ${dropout})`).toBeLessThan(1e-6);
      }
      for (const r of [a, again, b]) for (const g of Object.values(r.grads!)) g.dispose();
      grads.push(mine);
    }
    // Dropout was applied: the gradients with it are not those without.
    const name = Object.keys(grads[0])[0];
    expect(maxDiff(grads[0][name], grads[1][name])).toBeGreaterThan(1e-5);
  });
});

function loraConfig(runsDir: string): TrainerConfigInput {
  return {
    ...tinyNativeConfig('lora', runsDir),
    model: { init: { preset: 'tiny', tokenizer: 'compact', seed: 4 }, promptStyle: 'compact', lora: { r: 4, alpha: 16 } },
    loss: { kl: { type: 'low_var_kl', coef: 0.01 } },
    optim: { lr: 1e-2, miniBatchRows: 8 },
    sft: { trials: 4, steps: 12, reflectSteps: 0, batchRows: 8, lr: 1e-2 },
    train: { iterations: 3, evalEvery: 1, checkpointEvery: 1 },
    eval: { tasks: 2 },
  };
}

const iterations = (evs: TrainerEvent[]) => evs.filter((e): e is IterationEvent => e.type === 'iteration').map(withoutTimings);

describe('a LoRA run', () => {
  it('validates model.lora at the door', () => {
    const base = tinyNativeConfig('v', '/tmp');
    expect(validateConfig({ ...base, model: { lora: { r: 64 } } }).model.lora).toEqual({
      r: 64,
      alpha: null,
      dropout: 0,
      targets: 'all-linear',
      rslora: false,
      merged: false,
    });
    for (const bad of [{ r: 0 }, { r: 8, targets: ['lm_head'] }, { r: 8, dropout: 1 }, { r: 8, targets: [] }, { r: 8, rank: 3 }]) {
      let err: unknown;
      try {
        validateConfig({ ...base, model: { lora: bad } });
      } catch (e) {
        err = e;
      }
      expect(hasCode(err, 'E_CONFIG'), JSON.stringify(bad)).toBe(true);
    }
  });

  it("trains (warm-start loss falls, the adapter moves), checkpoints peft adapter folders, and resumes to the uninterrupted run's numbers", async () => {
    const options = { runtime: createNativeRuntime, progress: false, log: () => {} };
    // The warm start alone: its loss falls.
    const dirW = mkdtempSync(join(tmpdir(), 'lamer-lora-w-'));
    const trainerW = new Trainer(validateConfig(loraConfig(dirW)), options);
    const runtimeW = await createNativeRuntime(trainerW.config, trainerW.runDir);
    try {
      expect((runtimeW as unknown as { policy: Policy }).policy.lora?.r).toBe(4);
      const losses = await trainerW.warmStart(runtimeW);
      // Whole demonstrations (reflections included) are long against 12 steps: the mean of the last four steps,
      // not one noisy step, is compared with the first.
      const last = losses.slice(-4).reduce((s, l) => s + l, 0) / 4;
      expect(last).toBeLessThan(losses[0] * 0.93);
    } finally {
      await runtimeW.dispose();
    }

    const full = await collect(new Trainer(loraConfig(mkdtempSync(join(tmpdir(), 'lamer-lora-a-'))), options));
    const b = mkdtempSync(join(tmpdir(), 'lamer-lora-b-'));
    const trainerB = new Trainer(loraConfig(b), options);
    await collect(trainerB, { untilIteration: 2 });
    const ckpt = join(trainerB.checkpointsDir, 'ckpt-000002');
    expect(existsSync(join(ckpt, 'adapter_model.safetensors'))).toBe(true);
    expect(existsSync(join(ckpt, 'optimizer.safetensors'))).toBe(true);
    expect(existsSync(join(ckpt, 'model.safetensors'))).toBe(false);
    const adapterConfig = JSON.parse(readFileSync(join(ckpt, 'adapter_config.json'), 'utf8')) as Record<string, unknown>;
    expect(adapterConfig).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 16, base_model_name_or_path: null });
    // The adapter moved off peft's B = 0.
    const file = addon().safetensorsRead(join(ckpt, 'adapter_model.safetensors'));
    const bNorm = Object.entries(file.tensors)
      .filter(([n]) => n.includes('lora_B'))
      .reduce((s, [, t]) => s + new Tensor(t).toArray().reduce((x, v) => x + Math.abs(v), 0), 0);
    for (const t of Object.values(file.tensors)) t.dispose();
    expect(bNorm).toBeGreaterThan(0);

    const resumed = await collect(new Trainer(loraConfig(b), options), { resume: true });
    const floats = ['loss', 'approxKl', 'entropy', 'gradNorm', 'clipFraction'] as const;
    const discrete = (e: ReturnType<typeof iterations>[number]) => {
      const copy: Record<string, unknown> = { ...e };
      for (const k of floats) delete copy[k];
      return copy;
    };
    const a = iterations(full).slice(2);
    const r = iterations(resumed);
    expect(a.length).toBe(1);
    expect(r.map(discrete)).toEqual(a.map(discrete));
    for (let i = 0; i < a.length; i++) {
      for (const k of floats) {
        const scale = Math.max(1e-3, Math.abs(a[i][k]));
        expect(Math.abs(r[i][k] - a[i][k]) / scale, `iteration ${a[i].iteration} ${k}`).toBeLessThan(1e-4);
      }
    }
    const evals = (evs: TrainerEvent[]) => evs.filter((e) => e.type === 'eval').map(withoutTimings);
    expect(evals(resumed)).toEqual(evals(full).slice(2));
  }, 300_000);
});
