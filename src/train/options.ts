// The config's `loss` and `optim` sections and the Optimizer's library options, declared once: config.ts composes the
// sections, the Optimizer reads its options through `optimizerOptionsSchema` (made of the optim section's fields), the
// loss section is the native loss options' own type and the AdamW fields the native optimizer's (the compiler holds
// them equal below), with the ranges the native side checks (native/train/binding.cpp;
// test/native/train/option-ranges.test.ts walks both).
import { z } from 'zod';
import { AGGREGATIONS, KL_TYPES, POLICY_LOSSES, ZERO_STAGES, type NativeLossOptions, type NativeOptimizerOptions } from '../native/types.js';
import type { Same } from '../util/options.js';

export const LR_SCHEDULES = ['constant', 'warmup', 'cosine'] as const;
export type LrSchedule = (typeof LR_SCHEDULES)[number];

const positiveInt = z.number().int().positive();
/** AdamW's betas: a beta of 1 would divide its bias correction by zero. */
const beta = z.number().min(0).lt(1);

export const lossSchema = z
  .object({
    policyLoss: z.enum(POLICY_LOSSES).default('dual-clip').describe('the policy-gradient loss, by name (dual-clip: dual-clip PPO)'),
    clipLow: z.number().min(0).lt(1).default(0.2).describe('PPO ratio clip below 1, in [0, 1)'),
    clipHigh: z.number().nonnegative().default(0.2).describe('PPO ratio clip above 1'),
    dualClip: z.number().gt(1).default(3.0).describe('dual-clip bound for negative advantages (> 1)'),
    aggregation: z.enum(AGGREGATIONS).default('token-mean').describe('how token losses are averaged over a mini-batch'),
    entropyCoef: z.number().nonnegative().default(0.001).describe('weight of the entropy bonus'),
    kl: z
      .object({
        type: z.enum(KL_TYPES).default('none').describe('none, low_var_kl (k3), kl (k1) or mse'),
        coef: z.number().nonnegative().default(0.001).describe('weight of the KL penalty'),
      })
      .strict()
      .default({ type: 'none', coef: 0.001 })
      .describe('KL penalty to the starting weights'),
    valueClip: z.number().positive().default(0.5).describe('value-loss clip (PPO)'),
  })
  .strict();

export const optimSchema = z
  .object({
    /** The peak learning rate; a step's own rate (the schedule's, or StepOptions.lr) may be 0. */
    lr: z.number().positive().default(1e-6).describe('AdamW learning rate of RL updates'),
    weightDecay: z.number().nonnegative().default(0.01).describe('AdamW weight decay'),
    betas: z.tuple([beta, beta]).default([0.9, 0.999]).describe('AdamW betas, each in [0, 1)'),
    gradClip: z.number().nonnegative().default(1.0).describe('gradient norm clip (0: none)'),
    schedule: z.enum(LR_SCHEDULES).default('constant').describe('learning-rate schedule'),
    warmupSteps: z.number().int().nonnegative().default(0).describe('warm-up steps of the schedule'),
    /** Rows per optimizer step (one mini-batch). */
    miniBatchRows: positiveInt.default(64).describe('rows per optimizer step (one mini-batch)'),
    /** Token budget of one micro-batch (forward+backward); the mini-batch's loss is normalised globally. */
    microBatchTokens: positiveInt.default(16384).describe('tokens per forward and backward (micro-batch)'),
    epochs: positiveInt.default(1).describe("passes over an iteration's rows"),
    gradientCheckpointing: z.boolean().default(false).describe('recompute each layer in backward instead of keeping its activations'),
    /**
     * ZeRO over the data-parallel ranks (docs/distributed.md): 1 shards AdamW's state (moments, fp32 masters), 2 also
     * the gradients; 0 keeps a whole replica on every rank. One process: the same step as 0.
     */
    zero: z
      .union(ZERO_STAGES.map((n) => z.literal(n)))
      .default(0)
      .describe('ZeRO stage over the data-parallel ranks: 0 replicas, 1 optimizer state sharded, 2 gradients too'),
  })
  .strict();

/**
 * The Optimizer's options (Optimizer.create): the optim section's fields that shape AdamW and the schedule, with the
 * config's defaults and ranges, and the few a config does not set (a run's method and length decide valueHead and
 * totalSteps).
 */
export const optimizerOptionsSchema = optimSchema
  .pick({ lr: true, weightDecay: true, betas: true, gradClip: true, schedule: true, warmupSteps: true, zero: true })
  .extend({
    eps: z.number().positive().default(1e-8).describe("AdamW's epsilon"),
    totalSteps: positiveInt.optional().describe('steps of the whole run; the cosine schedule needs it'),
    minLrRatio: z.number().min(0).max(1).default(0).describe('cosine: the learning rate decays to lr * minLrRatio'),
    valueHead: z.boolean().default(false).describe('adds a value head (critic) trained by the value loss: PPO'),
  })
  .strict();

export type LossConfig = z.output<typeof lossSchema>;
export type OptimConfig = z.output<typeof optimSchema>;
export type OptimizerOptions = z.input<typeof optimizerOptionsSchema>;
export type ResolvedOptimizerOptions = z.output<typeof optimizerOptionsSchema>;

/** The defaults of both sections, for callers of the Optimizer who leave an option out. */
export const LOSS_DEFAULTS: Readonly<LossConfig> = Object.freeze(lossSchema.parse({}));
export const OPTIM_DEFAULTS: Readonly<OptimConfig> = Object.freeze(optimSchema.parse({}));

/** The native optimizer's options: AdamW's fields of the resolved options, the betas as two numbers. */
export function nativeOptimizerOptions(o: ResolvedOptimizerOptions): NativeOptimizerOptions {
  const { betas, eps, weightDecay, valueHead, zero } = o;
  return { beta1: betas[0], beta2: betas[1], eps, weightDecay, valueHead, zero };
}

// The loss section is exactly the native loss options less what a method and the rollout decide, and the native
// optimizer's options are the Optimizer's AdamW fields: a field added to one side and not the other does not compile.
const lossSectionIsNative: Same<LossConfig, Omit<NativeLossOptions, 'valueCoef' | 'temperature'>> = true;
void lossSectionIsNative;
type AdamWFields = 'eps' | 'weightDecay' | 'valueHead' | 'zero';
const adamWFieldsAreNative: Same<Pick<ResolvedOptimizerOptions, AdamWFields>, Omit<NativeOptimizerOptions, 'beta1' | 'beta2'>> = true;
void adamWFieldsAreNative;
