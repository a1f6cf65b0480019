// The config's `loss` and `optim` sections, declared once: config.ts composes them, the Optimizer takes its defaults
// from them, and the loss section is the native loss options' own type (the compiler holds the two equal below), with
// the ranges the native step checks (native/train/binding.cpp; test/native/train/option-ranges.test.ts walks both).
import { z } from 'zod';
import { AGGREGATIONS, KL_TYPES, type NativeLossOptions } from '../native/types.js';

export const LR_SCHEDULES = ['constant', 'warmup', 'cosine'] as const;
export type LrSchedule = (typeof LR_SCHEDULES)[number];

const positiveInt = z.number().int().positive();
/** AdamW's betas: a beta of 1 would divide its bias correction by zero. */
const beta = z.number().min(0).lt(1);

export const lossSchema = z
  .object({
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
      .union([z.literal(0), z.literal(1), z.literal(2)])
      .default(0)
      .describe('ZeRO stage over the data-parallel ranks: 0 replicas, 1 optimizer state sharded, 2 gradients too'),
  })
  .strict();

export type LossConfig = z.output<typeof lossSchema>;
export type OptimConfig = z.output<typeof optimSchema>;

/** The defaults of both sections, for callers of the Optimizer who leave an option out. */
export const LOSS_DEFAULTS: Readonly<LossConfig> = Object.freeze(lossSchema.parse({}));
export const OPTIM_DEFAULTS: Readonly<OptimConfig> = Object.freeze(optimSchema.parse({}));

// The loss section is exactly the native loss options less what a method and the rollout decide: a field added to
// one and not the other does not compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const lossSectionIsNative: Same<LossConfig, Omit<NativeLossOptions, 'valueCoef' | 'temperature'>> = true;
void lossSectionIsNative;
