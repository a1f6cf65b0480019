// The train step (SPEC §5) from TypeScript: an Optimizer owns the AdamW state (and the PPO value head) of one
// Policy; each call is one optimizer step over one mini-batch of rows, run natively on the model's device thread.
//
//   const opt = Optimizer.create(policy, { lr: 1e-6 });
//   const m = await opt.trainStep(rows, { aggregation: 'token-mean' });   // dual-clip PPO, one AdamW step
//   await opt.save('run/ckpt/optimizer.safetensors');                     // resume with Optimizer.load(...)
import { LamerError } from '../errors.js';
import { deviceProfile } from '../model/device.js';
import type { Policy } from '../model/policy.js';
import { Tensor } from '../tensor.js';
import type { TrainerConfig } from './config.js';
import { METHOD_SPECS } from '../eval/methods.js';
import { addon } from '../native/addon.js';
import type {
  Aggregation,
  KlType,
  NativeDistGroup,
  NativeLossOptions,
  NativeMemoryBytes,
  NativeModel,
  NativeOptimizer,
  NativeTrainMetrics,
  NativeTrainStepOptions,
} from '../native/types.js';
import { packRows, type SftRow, type TrainBatch, type TrainRow } from './batch.js';
import {
  LOSS_DEFAULTS,
  OPTIM_DEFAULTS,
  nativeOptimizerOptions,
  optimizerOptionsSchema,
  type LossConfig,
  type LrSchedule,
  type OptimizerOptions,
  type ResolvedOptimizerOptions,
} from './options.js';
import { parseOptions } from '../util/options.js';
import { lrAt } from './schedule.js';
import { checkOptimizerStateCounters } from './optimizer-state.js';

export type { Aggregation, KlType, LrSchedule, OptimizerOptions, ResolvedOptimizerOptions };

/**
 * The policy loss of a step: any field of the config's loss section (src/train/options.ts: clipLow, clipHigh,
 * dualClip, aggregation, entropyCoef, kl, valueClip; its defaults where left out), and the two a method and the
 * rollout decide. A field added to the loss section is an option here, with its default, without another line.
 */
export interface PolicyLossOptions extends Partial<Omit<LossConfig, 'kl'>> {
  /** KL loss to a frozen reference (default none). */
  kl?: { type: KlType; coef?: number };
  /** PPO critic: value-loss coefficient (default 0: no value loss). */
  valueCoef?: number;
  /** Sampling temperature: log-probs are of softmax(logits / temperature) (default 1). */
  temperature?: number;
}

export interface StepOptions extends PolicyLossOptions {
  /** Padded tokens per forward/backward micro-batch (default 16384); rows are sorted by length first. */
  microBatchTokens?: number;
  /** Learning rate of this step; default: the optimizer's schedule at its current step. */
  lr?: number;
  /**
   * Frozen reference policy for the KL loss, used when rows carry no refLogprobs (same device as the policy). A policy
   * with a LoRA adapter needs none: its reference is its own base, the adapter off.
   */
  reference?: Policy;
  /** Logit-chunk size of the log-prob computation in bytes (default 64 MiB on the CPU, 512 MiB on a GPU). */
  chunkBytes?: number;
  /** Recompute each decoder layer in backward instead of keeping its activations. */
  gradientCheckpointing?: boolean;
  /**
   * Rows that share a prefix of token ids (a run's rules, a task's first prompt, a trial's memory) compute it once,
   * forward and backward: each micro-batch is a prefix tree of its rows, cut by packed tokens (default true). The loss
   * and gradients are those of padded rows; off (false) is the padded forward. Off by itself with LoRA dropout above
   * 0, where one shared prefix would draw one dropout mask for all its rows.
   */
  sharePrefix?: boolean;
  /**
   * Data parallel (src/train/distributed.ts): `rows` are this rank's share of one global mini-batch; the loss is
   * normalised over all ranks' rows and the gradients summed, so every rank takes the same step (a rank may have no
   * rows). Metrics are the global mini-batch's.
   */
  group?: NativeDistGroup;
}

/** The metrics of an update step (NativeTrainMetrics), which always carry the gradient norm and the learning rate. */
export type TrainMetrics = NativeTrainMetrics & {
  /** Gradient norm before clipping. */
  gradNorm: number;
  lr: number;
};

// A step's micro-batch budget, when the caller leaves it out, is the config's.
const DEFAULT_MICRO_BATCH_TOKENS = OPTIM_DEFAULTS.microBatchTokens;

/** The loss options of a step as the native step takes them: the caller's, else the config schema's defaults. */
function nativeLoss(o: PolicyLossOptions): NativeLossOptions {
  const loss: Record<string, unknown> = { ...LOSS_DEFAULTS };
  for (const key of Object.keys(LOSS_DEFAULTS)) {
    const value = (o as Record<string, unknown>)[key];
    if (key !== 'kl' && value !== undefined) loss[key] = value;
  }
  return {
    ...(loss as Omit<LossConfig, 'kl'>),
    kl: { type: o.kl?.type ?? LOSS_DEFAULTS.kl.type, coef: o.kl?.coef ?? LOSS_DEFAULTS.kl.coef },
    valueCoef: o.valueCoef ?? 0,
    temperature: o.temperature ?? 1,
  };
}

/** The metrics of a step that updated the parameters, which always carry the gradient norm and learning rate. */
function updateMetrics(m: NativeTrainMetrics): TrainMetrics {
  const { gradNorm, lr } = m;
  if (gradNorm === undefined || lr === undefined) {
    throw new LamerError('E_NATIVE', 'train step: the addon reported no gradNorm or lr for an update step; rebuild it with `npm run setup`');
  }
  return { ...m, gradNorm, lr };
}

/** The result of a gradient-only evaluation (tests, diagnostics): no parameter changes. */
export interface LossAndGrad {
  /** As a step's, without `lr` (nothing is updated) and without `gradNorm` when `grad` is false. */
  metrics: Omit<TrainMetrics, 'gradNorm' | 'lr'> & Partial<Pick<TrainMetrics, 'gradNorm' | 'lr'>>;
  /** Log-prob of every response token in the training forward, rows concatenated. */
  logprobs: Float32Array;
  /** Gradients by parameter name (CPU tensors; dispose them). Absent with `grad: false`. */
  grads?: Record<string, Tensor>;
}

export class Optimizer {
  readonly policy: Policy;
  /** The options it was created with, defaults filled in. */
  readonly options: ResolvedOptimizerOptions;
  #native: NativeOptimizer | null;

  private constructor(policy: Policy, native: NativeOptimizer, options: ResolvedOptimizerOptions) {
    this.policy = policy;
    this.#native = native;
    this.options = options;
  }

  /** A fresh AdamW state for `policy` (no memory is taken until the first step). */
  static create(policy: Policy, options: OptimizerOptions = {}): Optimizer {
    const o = parseOptions(optimizerOptionsSchema, options, 'optimizer option');
    if (o.schedule === 'cosine' && o.totalSteps === undefined) throw new LamerError('E_CONFIG', "the cosine schedule needs 'totalSteps'");
    const native = new (addon().NativeOptimizer)(policy.native, nativeOptimizerOptions(o));
    return new Optimizer(policy, native, o);
  }

  /** An optimizer whose state (step count, moments, value head) is read from a file written by save(). */
  static async load(policy: Policy, path: string, options: OptimizerOptions = {}): Promise<Optimizer> {
    const opt = Optimizer.create(policy, options);
    await opt.load(path);
    return opt;
  }

  get #handle(): NativeOptimizer {
    if (!this.#native) throw new LamerError('E_DISPOSED', 'this Optimizer was disposed');
    return this.#native;
  }

  /** Optimizer steps taken so far. */
  get stepCount(): number {
    return this.#handle.stepCount;
  }

  /** The scheduled learning rate of the next step. */
  get lr(): number {
    return lrAt(this.stepCount, this.options);
  }

  /** KL without log-probs on the rows: the reference policy's handle goes to the native step, which scores the same
   * tokens with it (no gradient) micro-batch by micro-batch. */
  #reference(rows: readonly TrainRow[] | undefined, o: StepOptions): NativeModel | 'base' | undefined {
    const type = o.kl?.type ?? 'none';
    if (type === 'none' || (rows && rows.length > 0 && rows.every((r) => r.refLogprobs !== undefined))) return undefined;
    if (o.reference) return o.reference.native;
    if (this.policy.lora) return 'base';
    throw new LamerError('E_ARG', `kl loss '${type}' needs refLogprobs on every row or a frozen 'reference' policy`);
  }

  #stepOptions(o: StepOptions, objective: 'policy' | 'sft', reference?: NativeModel | 'base'): NativeTrainStepOptions {
    return {
      objective,
      loss: nativeLoss(o),
      microBatchTokens: o.microBatchTokens ?? DEFAULT_MICRO_BATCH_TOKENS,
      chunkBytes: o.chunkBytes ?? deviceProfile(this.policy.device).logitChunkBytes,
      gradientCheckpointing: o.gradientCheckpointing ?? OPTIM_DEFAULTS.gradientCheckpointing,
      sharePrefix: o.sharePrefix ?? true,
      maxGradNorm: this.options.gradClip,
      lr: o.lr ?? this.lr,
      ...(o.group ? { group: o.group } : {}),
      ...(reference === 'base' ? { referenceBase: true } : reference ? { reference } : {}),
    };
  }

  /** One optimizer step of the dual-clip PPO loss (plus entropy bonus, KL and value loss as configured) over `rows`
   * as one mini-batch. */
  async trainStep(rows: readonly TrainRow[], options: StepOptions = {}): Promise<TrainMetrics> {
    if (rows.length === 0 && !(options.group && options.group.size > 1)) throw new LamerError('E_ARG', 'trainStep: no rows');
    const r = await this.#handle.step(packRows(rows), this.#stepOptions(options, 'policy', this.#reference(rows, options)));
    return updateMetrics(r.metrics);
  }

  /**
   * Copies an iteration's rows into native memory once (validated there); `stagedStep` then trains on rows of it by
   * index, and `gae` computes PPO's values and advantages over it, without the rows coming back to JS. Staging again
   * replaces the batch.
   */
  async stage(batch: TrainBatch): Promise<void> {
    const { rowReturns, ...columns } = batch;
    await this.#handle.stage(columns, rowReturns);
  }

  /** PPO (SPEC §4) over the staged batch: the value head's value of every response token, GAE inside each row with
   * its return on the last token, advantages whitened over the batch. They replace the batch's advantages. */
  async gae(options: { gamma: number; lambda: number; microBatchTokens?: number }): Promise<void> {
    await this.#handle.gae(options.gamma, options.lambda, options.microBatchTokens ?? DEFAULT_MICRO_BATCH_TOKENS);
  }

  /** One optimizer step, as trainStep, over the rows `rows` (indices) of the staged batch. */
  async stagedStep(rows: Int32Array, options: StepOptions = {}): Promise<TrainMetrics> {
    return (await this.stagedStepWithLogprobs(rows, options)).metrics;
  }

  /** stagedStep, with the log-prob of every response token of `rows` in the step's forward (before its update), rows
   * in the order given. */
  async stagedStepWithLogprobs(rows: Int32Array, options: StepOptions = {}): Promise<{ metrics: TrainMetrics; logprobs: Float32Array }> {
    const r = await this.#handle.stepStaged(rows, this.#stepOptions(options, 'policy', this.#reference(undefined, options)));
    return { metrics: updateMetrics(r.metrics), logprobs: r.logprobs };
  }

  /** One optimizer step of cross-entropy on the response tokens (token-mean over the mini-batch): warm starts. */
  async sftStep(
    rows: readonly SftRow[],
    options: Pick<StepOptions, 'microBatchTokens' | 'lr' | 'chunkBytes' | 'gradientCheckpointing' | 'sharePrefix' | 'group'> = {},
  ): Promise<TrainMetrics> {
    if (rows.length === 0 && !(options.group && options.group.size > 1)) throw new LamerError('E_ARG', 'sftStep: no rows');
    const r = await this.#handle.step(packRows(rows), this.#stepOptions(options, 'sft'));
    return updateMetrics(r.metrics);
  }

  /** Loss, metrics and (optionally) gradients of `rows` without changing any parameter. */
  async lossAndGrad(
    rows: readonly TrainRow[] | readonly SftRow[],
    options: StepOptions & { objective?: 'policy' | 'sft'; grad?: boolean; chunked?: boolean } = {},
  ): Promise<LossAndGrad> {
    const objective = options.objective ?? 'policy';
    const grad = options.grad ?? true;
    const reference = objective === 'policy' ? this.#reference(rows as readonly TrainRow[], options) : undefined;
    const r = await this.#handle.step(packRows(rows), {
      ...this.#stepOptions(options, objective, reference),
      chunked: options.chunked ?? true,
      update: false,
      withGrad: grad,
      returnGrads: grad,
    });
    const out: LossAndGrad = { metrics: r.metrics, logprobs: r.logprobs };
    if (r.grads) out.grads = Object.fromEntries(Object.entries(r.grads).map(([k, t]) => [k, new Tensor(t)]));
    return out;
  }

  /** PPO: the value head's prediction for every response token (rows concatenated; no gradient). */
  async values(rows: readonly SftRow[], options: { microBatchTokens?: number } = {}): Promise<Float32Array[]> {
    const flat = await this.#handle.values(packRows(rows), options.microBatchTokens ?? DEFAULT_MICRO_BATCH_TOKENS);
    const out: Float32Array[] = [];
    let k = 0;
    for (const r of rows) {
      out.push(flat.slice(k, k + r.response.length));
      k += r.response.length;
    }
    return out;
  }

  /**
   * Writes the optimizer state (step, AdamW moments, fp32 masters, value head) as safetensors. Save the policy beside
   * it (policy.save) and the pair resumes exactly. With ZeRO over `group` every rank calls it (the others with path
   * null): rank 0 writes `path` and one `.shard-R-of-W` file beside it per other rank.
   */
  async save(path: string | null, group?: NativeDistGroup): Promise<void> {
    const o = this.options;
    const metadata = { lr: String(o.lr), schedule: o.schedule, warmup_steps: String(o.warmupSteps), grad_clip: String(o.gradClip) };
    if (path === null && !(group && this.options.zero > 0 && group.rank !== 0)) return;
    await this.#handle.save(path ?? '', metadata, group);
  }

  /**
   * Reads a state written by save() into this optimizer (same model shape; E_CHECKPOINT otherwise). With ZeRO, this
   * rank's shard over `group`, from a state saved at any world size or at stage 0.
   */
  async load(path: string, group?: NativeDistGroup): Promise<void> {
    checkOptimizerStateCounters(path);
    await this.#handle.load(path, group);
  }

  /**
   * Bytes held for training: every parameter, the trained ones (the adapter and value head under LoRA), the gradients
   * of the last update (released after it), and AdamW's state (moments, fp32 master copies).
   */
  async memory(): Promise<NativeMemoryBytes> {
    return this.#handle.memory();
  }

  dispose(): void {
    if (this.#native) {
      this.#native.dispose();
      this.#native = null;
    }
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** Optimizer settings of a trainer config (optim section). */
export function optimizerOptionsFromConfig(config: TrainerConfig, totalSteps?: number): OptimizerOptions {
  return {
    lr: config.optim.lr,
    weightDecay: config.optim.weightDecay,
    betas: config.optim.betas,
    gradClip: config.optim.gradClip,
    schedule: config.optim.schedule,
    warmupSteps: config.optim.warmupSteps,
    totalSteps,
    valueHead: METHOD_SPECS[config.method].critic,
    zero: config.optim.zero,
  };
}

/** Loss and micro-batch settings of a trainer config (loss and optim sections, sampling temperature). */
export function stepOptionsFromConfig(config: TrainerConfig): StepOptions {
  return {
    ...config.loss,
    valueCoef: METHOD_SPECS[config.method].critic ? 1 : 0,
    temperature: config.rollout.temperature,
    microBatchTokens: config.optim.microBatchTokens,
    gradientCheckpointing: config.optim.gradientCheckpointing,
    sharePrefix: config.train.sharePrefix !== 'off',
  };
}
