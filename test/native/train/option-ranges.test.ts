// Each option is declared once, and the two sides of the boundary agree on what is allowed: for every loss, optimizer
// and advantage option the native side checks, a walk over values around its bounds (and non-finite ones) finds that
// the config schema accepts exactly the values the native step (or kernel) accepts. A value the config accepts can
// then never fail at the first update, minutes into a run; a value it refuses is refused when the config is loaded.
import { describe, expect, it } from 'vitest';
import { advantageOptionsSchema } from '../../../src/algo/options.js';
import { hasCode } from '../../../src/errors.js';
import { addon } from '../../../src/native/addon.js';
import { AGGREGATIONS, KL_TYPES, POLICY_LOSSES } from '../../../src/native/types.js';
import type { NativeAdvantageParams, NativeLossOptions, NativeOptimizerOptions, NativeTrainStepOptions, ZeroStage } from '../../../src/native/types.js';
import { packRows } from '../../../src/train/batch.js';
import { configSchema, loadConfig } from '../../../src/train/config.js';
import { Optimizer } from '../../../src/train/optimizer.js';
import { LOSS_DEFAULTS, lossSchema, optimSchema, optimizerOptionsSchema } from '../../../src/train/options.js';
import { tinyPolicy } from './step-helpers.js';

const VALUES = [-1e9, -1, -1e-9, 0, 1e-9, 0.5, 1 - 1e-9, 1, 1 + 1e-9, 3, 1e9, Infinity, -Infinity, NaN];

/** E_ARG / E_ROWS from the native side means refused; anything else is a failure of the test. */
function accepted(run: () => unknown): boolean {
  try {
    run();
    return true;
  } catch (e) {
    if (hasCode(e, 'E_ARG') || hasCode(e, 'E_ROWS')) return false;
    throw e;
  }
}

async function acceptedAsync(run: () => Promise<unknown>): Promise<boolean> {
  try {
    await run();
    return true;
  } catch (e) {
    if (hasCode(e, 'E_ARG')) return false;
    throw e;
  }
}

/** A policy step's options that evaluate (no update) with `loss`, and any field replaced. */
function stepOptions(loss: NativeLossOptions, over: Partial<NativeTrainStepOptions> = {}): NativeTrainStepOptions {
  return {
    objective: 'policy',
    loss,
    microBatchTokens: 4096,
    chunkBytes: 2 ** 26,
    gradientCheckpointing: false,
    maxGradNorm: 1,
    lr: 1e-3,
    update: false,
    ...over,
  };
}

describe('option ranges: the config schema and the native side agree', () => {
  it('loss options: the schema accepts a value exactly when the native step does', async () => {
    await using policy = await tinyPolicy(1);
    const adam: NativeOptimizerOptions = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, valueHead: false, zero: 0 };
    const trainer = new (addon().NativeOptimizer)(policy.native, adam);
    const batch = packRows([{ prompt: [1, 2, 3], response: [4, 5], advantage: 0.5 }]);
    const base: NativeLossOptions = { ...LOSS_DEFAULTS, kl: { ...LOSS_DEFAULTS.kl }, valueCoef: 0, temperature: 1 };
    const native = (loss: NativeLossOptions) => acceptedAsync(() => trainer.step(batch, stepOptions(loss)));
    const disagreements: string[] = [];
    const fields: Array<[string, (v: number) => NativeLossOptions, (v: number) => boolean]> = [
      ['clipLow', (v) => ({ ...base, clipLow: v }), (v) => lossSchema.safeParse({ clipLow: v }).success],
      ['clipHigh', (v) => ({ ...base, clipHigh: v }), (v) => lossSchema.safeParse({ clipHigh: v }).success],
      ['dualClip', (v) => ({ ...base, dualClip: v }), (v) => lossSchema.safeParse({ dualClip: v }).success],
      ['entropyCoef', (v) => ({ ...base, entropyCoef: v }), (v) => lossSchema.safeParse({ entropyCoef: v }).success],
      ['kl.coef', (v) => ({ ...base, kl: { type: 'none', coef: v } }), (v) => lossSchema.safeParse({ kl: { coef: v } }).success],
      ['valueClip', (v) => ({ ...base, valueClip: v }), (v) => lossSchema.safeParse({ valueClip: v }).success],
      // The sampling temperature the loss uses is the config's rollout.temperature.
      ['temperature', (v) => ({ ...base, temperature: v }), (v) => configSchema.shape.rollout.safeParse({ temperature: v }).success],
    ];
    for (const [name, loss, schema] of fields) {
      for (const v of VALUES) {
        const bySchema = schema(v);
        const byNative = await native(loss(v));
        if (bySchema !== byNative) disagreements.push(`${name}=${v}: schema ${bySchema ? 'accepts' : 'refuses'}, native ${byNative ? 'accepts' : 'refuses'}`);
      }
    }
    for (const [name, loss, schema] of [
      ['aggregation', (s: string) => ({ ...base, aggregation: s }), (s: string) => lossSchema.safeParse({ aggregation: s }).success],
      ['kl.type', (s: string) => ({ ...base, kl: { type: s, coef: 0.001 } }), (s: string) => lossSchema.safeParse({ kl: { type: s } }).success],
      ['policyLoss', (s: string) => ({ ...base, policyLoss: s }), (s: string) => lossSchema.safeParse({ policyLoss: s }).success],
    ] as const) {
      const names = [...AGGREGATIONS, ...KL_TYPES, ...POLICY_LOSSES, 'k3', 'vanilla', 'gpg', ''];
      for (const s of names) {
        // A KL type other than none needs a reference; with refLogprobs absent the native step says so with E_ARG,
        // so the KL walk gives the reference policy itself.
        const options = loss(s) as NativeLossOptions;
        const byNative = await acceptedAsync(() => trainer.step(batch, stepOptions(options, { reference: policy.native })));
        if (schema(s) !== byNative)
          disagreements.push(`${name}='${s}': schema ${schema(s) ? 'accepts' : 'refuses'}, native ${byNative ? 'accepts' : 'refuses'}`);
      }
    }
    trainer.dispose();
    expect(disagreements).toEqual([]);
  }, 120_000);

  it("optimizer options: AdamW's betas, epsilon and weight decay, the gradient clip and micro-batch tokens", async () => {
    await using policy = await tinyPolicy(1);
    const disagreements: string[] = [];
    const make = (o: Partial<NativeOptimizerOptions>) =>
      accepted(() =>
        new (addon().NativeOptimizer)(policy.native, { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, valueHead: false, zero: 0, ...o }).dispose(),
      );
    const schema = (o: object) => optimSchema.safeParse(o).success;
    for (const v of VALUES) {
      for (const [name, nativeOk, schemaOk] of [
        ['betas[0]', make({ beta1: v }), schema({ betas: [v, 0.999] })],
        ['betas[1]', make({ beta2: v }), schema({ betas: [0.9, v] })],
        ['weightDecay', make({ weightDecay: v }), schema({ weightDecay: v })],
        // Any number, to see what the native side refuses.
        ['zero', make({ zero: v as ZeroStage }), schema({ zero: v })],
        // Not a config field: the library options' schema has it.
        ['eps', make({ eps: v }), optimizerOptionsSchema.safeParse({ eps: v }).success],
      ] as const) {
        if (nativeOk !== schemaOk) disagreements.push(`${name}=${v}: schema ${schemaOk}, native ${nativeOk}`);
      }
    }
    const trainer = new (addon().NativeOptimizer)(policy.native, { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, valueHead: false, zero: 0 });
    const batch = packRows([{ prompt: [1, 2, 3], response: [4, 5], advantage: 0.5 }]);
    const loss: NativeLossOptions = { ...LOSS_DEFAULTS, valueCoef: 0, temperature: 1 };
    for (const v of VALUES) {
      const step = (o: { maxGradNorm?: number; microBatchTokens?: number }) => acceptedAsync(() => trainer.step(batch, stepOptions(loss, o)));
      const clip = await step({ maxGradNorm: v });
      if (clip !== schema({ gradClip: v })) disagreements.push(`gradClip=${v}: schema ${schema({ gradClip: v })}, native ${clip}`);
      const tokens = await step({ microBatchTokens: v });
      if (tokens !== schema({ microBatchTokens: v })) disagreements.push(`microBatchTokens=${v}: schema ${schema({ microBatchTokens: v })}, native ${tokens}`);
    }
    trainer.dispose();
    expect(disagreements).toEqual([]);
  }, 120_000);

  it("the Optimizer's library options are the config's: Optimizer.create accepts a value exactly when the optim section does", async () => {
    await using policy = await tinyPolicy(1);
    const disagreements: string[] = [];
    const create = (o: object) => accepted(() => Optimizer.create(policy, o).dispose());
    for (const v of VALUES) {
      for (const name of ['lr', 'weightDecay', 'gradClip', 'warmupSteps', 'zero']) {
        const byLibrary = create({ [name]: v });
        const byConfig = optimSchema.safeParse({ [name]: v }).success;
        if (byLibrary !== byConfig) disagreements.push(`${name}=${v}: config ${byConfig}, library ${byLibrary}`);
      }
      const betas = [v, 0.999];
      if (create({ betas }) !== optimSchema.safeParse({ betas }).success) disagreements.push(`betas=[${v}, 0.999]`);
    }
    expect(disagreements).toEqual([]);
    // An unknown option is refused by name (a typo never falls back to a default).
    expect(() => Optimizer.create(policy, { learningRate: 1e-5 } as object)).toThrow(/unknown optimizer option 'learningRate'/);
    expect(() => Optimizer.create(policy, { lr: 0 })).toThrow(/optimizer option 'lr'.*found 0/);
  });

  it('advantage options: the schema accepts a value exactly when the native kernel does', () => {
    const n = 4;
    const columns = {
      group: new Int32Array(n),
      trial: Int32Array.from([0, 0, 1, 1]),
      episode: new Int32Array(n),
      turn: Int32Array.from([0, 1, 0, 1]),
      phase: new Uint8Array(n),
      reward: Float32Array.from([0, 1, 0, 0]),
      valid: new Uint8Array(n).fill(1),
      stepKey: Int32Array.from([0, 1, 0, 2]),
    };
    const out = () => ({ episodeReward: new Float32Array(n), stepReturn: new Float32Array(n), advantage: new Float32Array(n) });
    const base: NativeAdvantageParams = {
      estimator: 'gigpo',
      returns: 'recursive',
      gammaStep: 0.95,
      gammaTraj: 0.6,
      invalidPenalty: 0.5,
      divideByStd: false,
      omega: 1,
      eps: 1e-6,
    };
    const disagreements: string[] = [];
    for (const name of ['gammaStep', 'gammaTraj', 'invalidPenalty', 'omega', 'eps'] as const) {
      for (const v of VALUES) {
        const byNative = accepted(() => addon().computeAdvantages(columns, { ...base, [name]: v }, out()));
        const bySchema = advantageOptionsSchema.safeParse({ [name]: v }).success;
        if (byNative !== bySchema) disagreements.push(`${name}=${v}: schema ${bySchema}, native ${byNative}`);
      }
    }
    for (const [name, values] of [
      ['estimator', ['gigpo', 'grpo', 'ppo', '']],
      ['returns', ['recursive', 'paper', 'other']],
    ] as const) {
      for (const v of values) {
        const byNative = accepted(() => addon().computeAdvantages(columns, { ...base, [name]: v } as NativeAdvantageParams, out()));
        const bySchema = advantageOptionsSchema.safeParse({ [name]: v }).success;
        if (byNative !== bySchema) disagreements.push(`${name}='${v}': schema ${bySchema}, native ${byNative}`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('--set loss.clipLow=1.5 is refused when the config is loaded, naming the field', () => {
    try {
      loadConfig('default', ['loss.clipLow=1.5']);
      expect.unreachable();
    } catch (e) {
      expect(hasCode(e, 'E_CONFIG')).toBe(true);
      expect((e as Error).message).toMatch(/field 'loss\.clipLow'.*found 1\.5/);
    }
  });
});
