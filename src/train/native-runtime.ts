// The PolicyRuntime over the native addon: a Policy (Hugging Face checkpoint, or a preset created in the run
// folder), the continuous-batching engine for rollouts, and the native optimizer for updates and the warm start.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EngineClient } from '../engine/client.js';
import { LamerError, hasCode } from '../errors.js';
import { Policy, adapterBaseModel, isAdapterDir } from '../model/policy.js';
import { nativeLoraOptions } from '../model/lora.js';
import { presetCheckpoint } from '../model/presets.js';
import { deviceProfile, resolveDevice } from '../model/device.js';
import type { DeviceName } from '../tensor.js';
import { METHOD_SPECS } from '../eval/methods.js';
import { Rng } from '../util/rng.js';
import { runSeeds, type TrainerConfig } from './config.js';
import type { EngineCounts, PolicyRuntime, SupervisedBatch, UpdateBatch, UpdateMetrics } from './runtime.js';
import { addon } from '../native/addon.js';
import { trainBatch, type SftRow } from './batch.js';
import { unlikelihoodRow } from './unlikelihood.js';
import { Optimizer, optimizerOptionsFromConfig, stepOptionsFromConfig } from './optimizer.js';
import { writeDirAtomic } from './checkpoint.js';
import { RECORD_UPDATES_ENV, writeUpdateRecord } from './update-record.js';
import type { DistContext } from './distributed.js';
import type { MoveContrast } from '../rollout/policy.js';
import { timeBook } from '../util/timing.js';
import { logprobAgreement, type LogprobAgreement } from './agreement.js';

const OPTIMIZER_FILE = 'optimizer.safetensors';
/** The warm start's optimizer state beside its weights in a warm-start save (saveSupervised). */
const SFT_OPTIMIZER_FILE = 'sft-optimizer.safetensors';
/** The frozen weights a KL loss compares with, kept in the run folder when they are not the configured model. */
export const REFERENCE_DIR = 'reference';

/** Whether a config trains (or evaluates) a LoRA adapter: model.lora or model.adapter, or an adapter at model.path. */
function usesLora(config: TrainerConfig): boolean {
  return config.model.lora !== null || config.model.adapter !== null || (config.model.path !== undefined && isAdapterDir(config.model.path));
}

/**
 * Load options of the run's model: the dtype the config names, else the device profile's (Policy.load / Policy.init
 * apply it). The parameters are kept in the compute dtype, with no fp32 copy beside them, under LoRA (the base is
 * frozen) and under ZeRO (the fp32 masters live in the sharded optimizer state).
 */
function loadOptions(config: TrainerConfig): { device: DeviceName; dtype?: 'float32' | 'bfloat16'; paramDtype?: 'float32' | 'bfloat16' } {
  const device = resolveDevice(config.model.device).device;
  const dtype = config.model.dtype ?? deviceProfile(device).computeDtype;
  const compact = usesLora(config) || config.optim.zero > 0;
  return { device, ...(config.model.dtype ? { dtype: config.model.dtype } : {}), ...(compact ? { paramDtype: dtype } : {}) };
}

/**
 * The configured model: model.path (a checkpoint, or a LoRA adapter folder with its base) or the preset. An adapter
 * folder that names no base (written over a preset) gets the preset as its base.
 */
async function openConfigured(config: TrainerConfig): Promise<Policy> {
  const options = loadOptions(config);
  const path = config.model.path;
  const overPreset = path !== undefined && isAdapterDir(path) && adapterBaseModel(path) === null;
  if (path && !overPreset) return Policy.load(path, options);
  const { init } = config.model;
  const preset = await presetCheckpoint(init.preset, init.tokenizer);
  const policy = await Policy.init(preset.config, { ...options, seed: runSeeds(config).init, assets: preset.assets });
  if (overPreset) await policy.loadAdapter(path);
  return policy;
}

/** The run's policy: a checkpoint of this run (`dir`: a full one, or an adapter over the configured base), else the
 * configured model with model.adapter loaded or a fresh model.lora adapter added. */
async function openPolicy(config: TrainerConfig, dir?: string): Promise<Policy> {
  if (dir && !isAdapterDir(dir)) return Policy.load(dir, loadOptions(config));
  const policy = await openConfigured(config);
  try {
    if (dir) {
      await policy.loadAdapter(dir);
      if (config.model.lora?.merged) await policy.setAdapterMerged(true);
      return policy;
    }
    const { lora, adapter } = config.model;
    if (adapter) await policy.loadAdapter(adapter);
    if (lora && policy.lora) {
      checkAdapterMatches(policy, config);
    } else if (lora) {
      await policy.addLora({ ...lora, alpha: lora.alpha ?? 2 * lora.r, seed: runSeeds(config).init + LORA_SEED_OFFSET });
    }
    if (lora?.merged && policy.lora) await policy.setAdapterMerged(true);
    return policy;
  } catch (e) {
    policy.dispose();
    throw e;
  }
}

/** A fresh adapter's seed: the run's init seed moved by this, so that A and the base's weights are drawn apart. */
const LORA_SEED_OFFSET = 1_000_003;

/** An adapter loaded from disk (model.adapter, or model.path) must be the one model.lora describes, when both are given. */
function checkAdapterMatches(policy: Policy, config: TrainerConfig): void {
  const lora = config.model.lora!;
  const have = policy.lora!;
  const want = nativeLoraOptions(policy.config, { ...lora, alpha: lora.alpha ?? 2 * lora.r });
  const problems: string[] = [];
  if (have.r !== want.r) problems.push(`r ${have.r} (model.lora.r: ${want.r})`);
  if (have.alpha !== want.alpha) problems.push(`alpha ${have.alpha} (model.lora.alpha: ${want.alpha})`);
  if (have.rslora !== want.rslora) problems.push(`rslora ${have.rslora} (model.lora.rslora: ${want.rslora})`);
  if (have.modules.join() !== want.modules.join()) problems.push(`${have.modules.length} adapted modules (model.lora.targets gives ${want.modules.length})`);
  if (problems.length > 0) {
    throw new LamerError(
      'E_CONFIG',
      `the adapter loaded from ${config.model.adapter ?? config.model.path} has ${problems.join(', ')}; drop model.lora to train that adapter as it is, or make them agree`,
    );
  }
}

class NativeRuntime implements PolicyRuntime {
  #policy: Policy;
  #client: EngineClient;
  #optimizer: Optimizer | null = null;
  #sftOptimizer: Optimizer | null = null;
  /** The warm start's unlikelihood rows: token ids of the responses they compare (a bounded set: the moves of a run). */
  readonly #contrastIds = new Map<string, number[]>();
  /** Frozen policy of the KL loss (loss.kl), opened at the first update that needs it. */
  #reference: Policy | null = null;
  readonly #config: TrainerConfig;
  readonly #runDir: string;
  /** Data parallel: the group this process is a rank of (train steps reduce over it). */
  readonly #dist: DistContext | undefined;

  describe(): string {
    const where = `${this.#policy.device} (${resolveDevice(this.#config.model.device).reason})`;
    const lora = this.#policy.lora;
    if (!lora) return where;
    const trainable = (this.#policy.loraParameterCount / 1e6).toFixed(2);
    return `${where}; LoRA r ${lora.r}, alpha ${lora.alpha} on ${lora.modules.length} projections (${trainable}M trainable parameters, base frozen${lora.merged ? ', generating from merged copies' : ''})`;
  }

  constructor(config: TrainerConfig, policy: Policy, runDir: string, dist?: DistContext) {
    this.#config = config;
    this.#policy = policy;
    this.#runDir = runDir;
    this.#dist = dist && dist.size > 1 ? dist : undefined;
    this.#client = this.#makeClient();
  }

  /**
   * The KL loss's reference: the weights RL started from. That is the configured model (model.path or the preset),
   * unless this run warm-started in place; then the weights after the warm start are written to `reference/` in the
   * run folder (atomically, at the first update) so that a resumed run compares with the same weights.
   */
  async #referencePolicy(): Promise<Policy> {
    if (this.#reference) return this.#reference;
    const dir = join(this.#runDir, REFERENCE_DIR);
    let saved = existsSync(join(dir, 'config.json'));
    // Every rank follows rank 0's view, so that all of them reach the barrier below or none does.
    if (this.#dist) saved = (await this.#dist.gather(saved))[0];
    // An optimizer for supervised steps exists once this runtime has warm-started (restore() drops it).
    if (!saved && this.#sftOptimizer) {
      // Rank 0 writes it; the others wait until it is there.
      if (!this.#dist || this.#dist.isMain) await writeDirAtomic(dir, (tmp) => this.#policy.save(tmp));
      await this.#dist?.barrier();
      saved = true;
    }
    this.#reference = await openPolicy(this.#config, saved ? dir : undefined);
    return this.#reference;
  }

  #makeClient(): EngineClient {
    return new EngineClient(this.#policy, {
      slots: this.#config.rollout.slots,
      enableThinking: this.#config.model.enableThinking,
    });
  }

  get policy(): Policy {
    return this.#policy;
  }

  #rlOptimizer(): Optimizer {
    if (!this.#optimizer) {
      const c = this.#config;
      const rowsPerIteration = c.rollout.tasksPerIteration * c.rollout.groupSize * c.trial.episodes * 8;
      const totalSteps = c.train.iterations * Math.ceil(rowsPerIteration / c.optim.miniBatchRows) * c.optim.epochs;
      this.#optimizer = Optimizer.create(this.#policy, optimizerOptionsFromConfig(c, totalSteps));
    }
    return this.#optimizer;
  }

  client(): EngineClient {
    return this.#client;
  }

  resetCaches(): void {
    this.#client.engine.clearPrefixCache();
  }

  engineCounts(): EngineCounts {
    const engine = this.#client.engine;
    const s = engine.stats();
    return {
      reused: s.reusedPromptTokens,
      prefilled: s.prefilledPromptTokens,
      decodeSteps: s.decodeSteps,
      rowSteps: s.rowSteps,
      demandSteps: s.demandSteps,
      slots: engine.slots,
    };
  }

  cudaMemory(): { allocated: number; reserved: number; peakAllocated: number } | null {
    const device = this.#policy.device;
    if (!device.startsWith('cuda')) return null;
    return addon().cudaMemory(Number(device.split(':')[1] ?? 0));
  }

  #updates = 0;

  async update(batch: UpdateBatch, config: TrainerConfig): Promise<UpdateMetrics> {
    this.#updates++;
    const record = process.env[RECORD_UPDATES_ENV];
    if (record && (!this.#dist || this.#dist.rank === 0)) timeBook.time('recordUpdate', () => writeUpdateRecord(record, config.method, this.#updates, batch));
    // The rollout is over: the engine's KV cache, CUDA graphs and prefix cache (stale after this update anyway) make
    // room for the train step's activations; the next rollout allocates them again.
    await timeBook.timeAsync('engineRelease', () => this.#client.engine.release());
    const optimizer = this.#rlOptimizer();
    const options = stepOptionsFromConfig(config);
    // With LoRA the reference is the policy's own base, its adapter off (the optimizer's default): no second copy.
    if (config.loss.kl.type !== 'none' && !this.#policy.lora) options.reference = await this.#referencePolicy();
    const totals = { loss: 0, clipFraction: 0, approxKl: 0, entropy: 0, gradNorm: 0, steps: 0, skipped: 0, tokens: 0, computedTokens: 0, lr: NaN };
    // The rows with response tokens (the others carry no gradient), in columns, copied into native memory once; each
    // mini-batch step below names its rows by index. PPO's values and GAE are computed there too.
    const critic = METHOD_SPECS[config.method].critic;
    if (critic && !batch.rowReturns) throw new LamerError('E_ARG', 'ppo update: the batch carries no row returns');
    const { batch: columns, rows } = timeBook.time('stage', () => trainBatch(batch));
    await timeBook.timeAsync('stage', () => optimizer.stage(columns));
    if (critic) {
      await timeBook.timeAsync('gae', () =>
        optimizer.gae({ gamma: config.advantage.gaeGamma, lambda: config.advantage.gaeLambda, microBatchTokens: config.optim.microBatchTokens }),
      );
    }
    const usable = rows.map((_, j) => j);
    // Data parallel: every rank places its rows in the iteration's global row order (by group), shuffles the global
    // positions as one process would, and trains on its own rows of each global mini-batch (gradients summed over
    // the ranks): the same mini-batches, and the same steps, as one process given every rank's rows.
    const dist = this.#dist;
    const groups = batch.groups;
    const global = dist ? await globalRowOrder(dist, usable, groups && Int32Array.from(rows, (i) => groups[i])) : undefined;
    const positions = global ? Array.from({ length: global.total }, (_, g) => g) : usable;
    if (dist) options.group = dist.native;
    let agreement: LogprobAgreement | undefined;
    for (let epoch = 0; epoch < config.optim.epochs; epoch++) {
      // A seeded shuffle per epoch: mini-batches mix tasks, and a rerun (or a resumed run) sees the same order.
      new Rng(config.seed * 1_000_003 + optimizer.stepCount + epoch).shuffle(positions);
      for (let start = 0; start < positions.length; start += config.optim.miniBatchRows) {
        const picked = positions.slice(start, start + config.optim.miniBatchRows);
        const mine = global ? picked.flatMap((g) => (global.local.has(g) ? [global.local.get(g)!] : [])) : picked;
        try {
          const t = performance.now();
          const { metrics: m, logprobs } = await optimizer.stagedStepWithLogprobs(Int32Array.from(mine), options);
          // The step's parts as the native step timed them; the rest of the call (copies in and out) as stepOther.
          const wall = (performance.now() - t) / 1000;
          timeBook.add('forwardBackward', m.forwardBackwardSeconds);
          if (m.referenceSeconds > 0) timeBook.add('reference', m.referenceSeconds);
          timeBook.add('optimizer', m.optimizerSeconds);
          timeBook.add('stepOther', Math.max(0, wall - m.forwardBackwardSeconds - m.referenceSeconds - m.optimizerSeconds));
          // The first step's forward ran on the weights the rollout sampled with: its log-probs against the engine's.
          if (epoch === 0 && start === 0) agreement = logprobAgreement(mine, rows, batch.oldLogprobs, logprobs);
          if (!Number.isFinite(m.loss)) {
            totals.skipped++;
            continue;
          }
          totals.loss += m.loss;
          totals.clipFraction += m.clipFrac ?? 0;
          totals.approxKl += m.approxKl ?? 0;
          totals.entropy += m.entropy ?? 0;
          totals.gradNorm += m.gradNorm;
          totals.tokens += m.tokens;
          totals.computedTokens += m.computedTokens;
          totals.lr = m.lr;
          totals.steps++;
        } catch (e) {
          // A non-finite loss or gradient: the native step left the parameters unchanged.
          if (!hasCode(e, 'E_TRAIN')) throw e;
          totals.skipped++;
        }
      }
    }
    const k = Math.max(1, totals.steps);
    const { parameters, gradients, optimizerState } = await timeBook.timeAsync('memoryQuery', () => optimizer.memory());
    return {
      memory: { parameters, gradients, optimizerState },
      ...(agreement ? { agreement } : {}),
      loss: totals.steps ? totals.loss / k : NaN,
      clipFraction: totals.clipFraction / k,
      approxKl: totals.approxKl / k,
      entropy: totals.entropy / k,
      gradNorm: totals.gradNorm / k,
      steps: totals.steps,
      skipped: totals.skipped,
      tokens: totals.tokens,
      computedTokens: totals.computedTokens,
      ...(Number.isFinite(totals.lr) ? { lr: totals.lr } : {}),
    };
  }

  #encodeCached(text: string, encode: (text: string) => number[]): number[] {
    let ids = this.#contrastIds.get(text);
    if (!ids) {
      ids = encode(text);
      this.#contrastIds.set(text, ids);
    }
    return ids;
  }

  /** The warm start's optimizer (AdamW at sft.lr, constant), created on first use. */
  #sftOpt(config: TrainerConfig): Optimizer {
    this.#sftOptimizer ??= Optimizer.create(this.#policy, { ...optimizerOptionsFromConfig(config), lr: config.sft.lr, schedule: 'constant', valueHead: false });
    return this.#sftOptimizer;
  }

  async supervised(batch: SupervisedBatch, config: TrainerConfig): Promise<{ loss: number; tokens: number }> {
    const optimizer = this.#sftOpt(config);
    // The response ends with the checkpoint's stop token, so the model learns where an answer ends.
    const stop = this.#policy.stopIds[0];
    const encode = (text: string): number[] => {
      const ids = this.#policy.encode(text);
      if (stop !== undefined) ids.push(stop);
      return ids;
    };
    const rows: SftRow[] = [];
    const weight = config.sft.unlikelihood;
    const addUnlikely = (promptIds: Int32Array, contrast: MoveContrast) => {
      const admissible = contrast.admissible.map((a) => this.#encodeCached(a, encode));
      for (const r of contrast.refused) {
        const row = unlikelihoodRow(promptIds, this.#encodeCached(r, encode), admissible, weight);
        if (row) rows.push(row);
      }
    };
    batch.prompts.forEach((prompt, i) => {
      const promptIds = this.#client.promptIds(prompt);
      rows.push({ prompt: promptIds, response: encode(batch.responses[i]) });
      const contrast = weight > 0 ? batch.contrast?.[i] : null;
      if (contrast) addUnlikely(promptIds, contrast);
    });
    if (weight > 0) for (const n of batch.negatives ?? []) addUnlikely(this.#client.promptIds(n.prompt), n.contrast);
    const m = await optimizer.sftStep(rows, {
      microBatchTokens: config.optim.microBatchTokens,
      sharePrefix: config.train.sharePrefix !== 'off',
      ...(this.#dist ? { group: this.#dist.native } : {}),
    });
    return { loss: m.loss, tokens: m.tokens };
  }

  async broadcast(): Promise<void> {
    if (this.#dist) await this.#dist.native.broadcastModel(this.#policy.native);
  }

  async save(dir: string): Promise<void> {
    // A LoRA run's checkpoint is its adapter (peft's files) over the base it names; the base is not copied.
    if (this.#policy.lora) await this.#policy.saveAdapter(dir);
    else await this.#policy.save(dir);
    if (this.#optimizer) await this.#optimizer.save(join(dir, OPTIMIZER_FILE), this.#dist?.native);
  }

  async saveFromRank(): Promise<void> {
    if (this.#optimizer && this.#dist) await this.#optimizer.save(null, this.#dist.native);
  }

  async saveSupervised(dir: string | null): Promise<void> {
    if (dir !== null) {
      if (this.#policy.lora) await this.#policy.saveAdapter(dir);
      else await this.#policy.save(dir);
    }
    // Every rank takes part in a ZeRO optimizer's save; rank 0 writes it.
    await this.#sftOpt(this.#config).save(dir === null ? null : join(dir, SFT_OPTIMIZER_FILE), this.#dist?.native);
  }

  async restoreSupervised(dir: string): Promise<void> {
    await this.restore(dir);
    await this.#sftOpt(this.#config).load(join(dir, SFT_OPTIMIZER_FILE), this.#dist?.native);
  }

  async restore(dir: string): Promise<void> {
    this.#client.dispose();
    this.#optimizer?.dispose();
    this.#sftOptimizer?.dispose();
    this.#optimizer = null;
    this.#sftOptimizer = null;
    this.#policy.dispose();
    this.#policy = await openPolicy(this.#config, dir);
    this.#client = this.#makeClient();
    if (existsSync(join(dir, OPTIMIZER_FILE))) await this.#rlOptimizer().load(join(dir, OPTIMIZER_FILE), this.#dist?.native);
  }

  async dispose(): Promise<void> {
    this.#client.dispose();
    this.#optimizer?.dispose();
    this.#sftOptimizer?.dispose();
    this.#reference?.dispose();
    this.#policy.dispose();
  }
}

/**
 * This rank's usable rows in the global order of the iteration's rows (ascending group, a group's rows in their
 * order): the number of rows over all ranks, and for each global position held here, the local row.
 */
async function globalRowOrder(
  dist: DistContext,
  usable: readonly number[],
  groups: Int32Array | undefined,
): Promise<{ total: number; local: Map<number, number> }> {
  if (!groups) throw new LamerError('E_ARG', 'data-parallel update: the batch carries no row groups');
  const counts = new Map<number, number>();
  for (const i of usable) counts.set(groups[i], (counts.get(groups[i]) ?? 0) + 1);
  const all = await dist.gather([...counts]);
  const owned = new Map<number, number>();
  for (const [rank, pairs] of all.entries()) {
    for (const [group, n] of pairs) {
      if (owned.has(group))
        throw new LamerError(
          'E_DIST',
          `data-parallel update: group ${group} has rows on ranks ${owned.get(group)} and ${rank}; a task's group must stay on one rank`,
        );
      owned.set(group, n);
    }
  }
  const offset = new Map<number, number>();
  let total = 0;
  for (const group of [...owned.keys()].sort((a, b) => a - b)) {
    offset.set(group, total);
    total += owned.get(group)!;
  }
  const local = new Map<number, number>();
  const seen = new Map<number, number>();
  for (const i of usable) {
    const k = seen.get(groups[i]) ?? 0;
    seen.set(groups[i], k + 1);
    local.set(offset.get(groups[i])! + k, i);
  }
  return { total, local };
}

/** The native runtime of a config: the model from model.path, or a fresh preset model (model.init). */
export async function createNativeRuntime(config: TrainerConfig, runDir: string, dist?: DistContext): Promise<PolicyRuntime> {
  return new NativeRuntime(config, await openPolicy(config), runDir, dist);
}
