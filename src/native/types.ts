// The one description of the addon's exports (build/Release/lamer.node): what the bridge and every
// native/<concern>/binding.cpp registers. `addon()` returns exactly this type; areas import the types they need from
// here and never retype or cast the addon.
//
// Handles (NativeTensor, NativeModel, NativeEngine, NativeOptimizer) are branded: only the addon makes them, so TS code
// can hold one and pass it down (a model handle to createEngine or new NativeOptimizer), never build or mistake one for
// another.

declare const handle: unique symbol;

/** Brand of an object only the addon creates; `Name` is its class name in the addon. */
interface Handle<Name extends string> {
  readonly [handle]: Name;
}

/** A constructor registered by the addon that JS must not call (handles come from factory functions). */
type AddonOnlyConstructor<T> = abstract new (...args: never[]) => T;

// ---- the option vocabularies the native side maps ------------------------------------------------------------------
// Each is declared once, here: the config schema builds its enums from these lists, the TS code types its options with
// them, and they cross the boundary as these strings, which each binding maps to its own enum in one place.

/** Advantage estimators (native/algo/binding.cpp). */
export const ESTIMATORS = ['gigpo', 'grpo'] as const;
export type Estimator = (typeof ESTIMATORS)[number];
/** Cross-episode return forms (native/algo/binding.cpp). */
export const RETURNS_FORMULAS = ['recursive', 'paper'] as const;
export type ReturnsFormula = (typeof RETURNS_FORMULAS)[number];
/** Policy losses by name (native/train/losses.cpp, PolicyLosses: the table a new loss adds a row to). */
export const POLICY_LOSSES = ['dual-clip'] as const;
export type PolicyLoss = (typeof POLICY_LOSSES)[number];
/** Loss aggregations over a mini-batch (native/train/binding.cpp). */
export const AGGREGATIONS = ['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];
/** ZeRO stages of the optimizer (native/train/binding.cpp): 0 replicas, 1 AdamW's state sharded, 2 the gradients too. */
export const ZERO_STAGES = [0, 1, 2] as const;
export type ZeroStage = (typeof ZERO_STAGES)[number];
/** KV-cache slot layouts of the generation engine (native/engine/binding.cpp). */
export const SLOT_LAYOUTS = ['packed', 'fixed'] as const;
export type SlotLayout = (typeof SLOT_LAYOUTS)[number];
/** KL penalties to a frozen reference (native/train/binding.cpp). */
export const KL_TYPES = ['none', 'low_var_kl', 'kl', 'mse'] as const;
export type KlType = (typeof KL_TYPES)[number];
/** Decoder architectures (native/model/binding.cpp). */
export const MODEL_TYPES = ['qwen3', 'qwen2', 'llama'] as const;
export type ModelType = (typeof MODEL_TYPES)[number];

// ---- bridge (native/bridge: tensor.cpp, ops.cpp, info.cpp, addon.cpp) ----------------------------------------------

export type NativeDType = 'float32' | 'float64' | 'int32' | 'int64' | 'uint8' | 'bool' | 'float16' | 'bfloat16';

export interface NativeTensor extends Handle<'NativeTensor'> {
  readonly shape: number[];
  readonly dtype: NativeDType;
  readonly device: string;
  readonly numel: number;
  /** A typed array over the tensor's own memory (or a copy where external buffers are refused). */
  readonly data: Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array | Uint16Array;
  /** False when `data` had to be a copy (V8 sandbox builds). */
  readonly dataIsView: boolean;
  readonly disposed: boolean;
  dispose(): void;
}

export interface NativeBuildInfo {
  torchVersion: string;
  torchVersionBuilt: string;
  torchLibDir: string;
  torchSource: string;
  /** The libtorch has CUDA: CUDA graphs, NCCL. */
  cudaCompiled: boolean;
  /** nvcc was there too: the .cu kernels (GiGPO advantages, fused decode operators) are in the addon. */
  cudaKernels: boolean;
  cudaAvailable: boolean;
  cudaDeviceCount: number;
  threads: number;
  interopThreads: number;
  blas: string;
  lapack: string;
  torchConfig: string;
  parallelInfo: string;
  buildType: string;
  compiler: string;
  cxxFlags: string;
  cxxAbi: number;
  napiVersion: number;
  loadedLibraries: { torch_cpu: string; c10: string };
}

/** What opCounterStop reports: the ATen operators dispatched while counting (native/bridge/op_counter.cpp). */
export interface NativeOpCount {
  /** Operators called from outside any other operator: what lamer's code dispatches itself. */
  top: number;
  /** Operators that call no other one: where the work (on a GPU, the kernel launches) happens. */
  leaves: number;
  /** Of the top-level ones, those that only make a view (no kernel). */
  views: number;
  /** Top-level calls by operator name. */
  byName: Record<string, number>;
}

interface BridgeExports {
  /** Names of the concerns that registered exports, in registration order. */
  concerns: string[];
  NativeTensor: AddonOnlyConstructor<NativeTensor>;
  liveTensors(): number;
  tensorFromTypedArray(data: ArrayBufferView, shape: number[], dtype: NativeDType): NativeTensor;
  buildInfo(): NativeBuildInfo;
  /** The CUDA caching allocator's bytes on a device (null without CUDA). */
  cudaMemory(device: number): { allocated: number; reserved: number; peakAllocated: number } | null;
  full(shape: number[], value: number, dtype: NativeDType, device: string): NativeTensor;
  randn(shape: number[], dtype: NativeDType, device: string, seed: number): NativeTensor;
  clone(t: NativeTensor): NativeTensor;
  alias(t: NativeTensor): NativeTensor;
  sum(t: NativeTensor): number;
  fill_(t: NativeTensor, value: number): void;
  mulScalar_(t: NativeTensor, value: number): void;
  toDevice(t: NativeTensor, device: string, dtype?: NativeDType): Promise<NativeTensor>;
  matmul(a: NativeTensor, b: NativeTensor): Promise<NativeTensor>;
  matmulSync(a: NativeTensor, b: NativeTensor): NativeTensor;
  noop(): void;
  noopAsync(device?: string): Promise<void>;
  /** Counting of the ATen operators dispatched in any thread, for benches and tests: start resets and starts. */
  opCounterStart(): void;
  opCounterStop(): NativeOpCount;
}

// ---- algo (native/algo/binding.cpp) --------------------------------------------------------------------------------

/** The row columns the advantage kernel reads, one element per row; `stepKey` is the interned anchor id or a
 * similarity cluster id. */
export interface NativeAdvantageColumns {
  group: Int32Array;
  trial: Int32Array;
  episode: Int32Array;
  turn: Int32Array;
  /** 0 play, 1 reflect. */
  phase: Uint8Array;
  reward: Float32Array;
  valid: Uint8Array;
  stepKey: Int32Array;
}

export interface NativeAdvantageParams {
  estimator: Estimator;
  returns: ReturnsFormula;
  gammaStep: number;
  gammaTraj: number;
  invalidPenalty: number;
  divideByStd: boolean;
  omega: number;
  eps: number;
}

/** Written in place, one element per row. */
export interface NativeAdvantageOutputs {
  episodeReward: Float32Array;
  stepReturn: Float32Array;
  advantage: Float32Array;
}

interface AlgoExports {
  /** Synchronous over the lent arrays; E_ROWS naming column and row when the rows are malformed. */
  computeAdvantages(columns: NativeAdvantageColumns, params: NativeAdvantageParams, out: NativeAdvantageOutputs): void;
  /** Present only in CUDA builds: the same computation through kernels/advantages.cu. */
  computeAdvantagesCuda?: (columns: NativeAdvantageColumns, params: NativeAdvantageParams, out: NativeAdvantageOutputs) => void;
  /** GAE (native/algo/gae.cpp, what the trainer runs for PPO): writes one advantage and return per response token. */
  computeGae(
    lengths: Int32Array,
    rowReward: Float32Array,
    values: Float32Array,
    params: { gamma: number; lambda: number; whiten?: boolean },
    out: { advantage: Float32Array; returns: Float32Array },
  ): void;
}

// ---- model (native/model/binding.cpp) ------------------------------------------------------------------------------

/** The plain struct the native decoder reads (ReadConfig): llama3 RoPE scaling flattened. */
export interface NativeModelConfig {
  modelType: ModelType;
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numHiddenLayers: number;
  numAttentionHeads: number;
  numKeyValueHeads: number;
  /** Explicit in Qwen3 configs (may differ from hidden/heads); otherwise hidden/heads. */
  headDim: number;
  rmsNormEps: number;
  ropeTheta: number;
  tieWordEmbeddings: boolean;
  qkNorm: boolean;
  qkvBias: boolean;
  oBias: boolean;
  mlpBias: boolean;
  ropeFactor: number;
  ropeLowFreqFactor: number;
  ropeHighFreqFactor: number;
  ropeOriginalMaxPositionEmbeddings: number;
}

/** A loaded decoder on one device. Other concerns (engine, train) take this handle in their own native calls. */
export interface NativeModel extends Handle<'NativeModel'> {
  readonly device: string;
  /** Compute dtype of the forward. */
  readonly dtype: NativeDType;
  /** Storage dtype of the parameters (fp32 master weights on CUDA). */
  readonly paramDtype: NativeDType;
  readonly disposed: boolean;
  /** result[j][t - starts[j]] = log softmax(logits / temperature)[seq[t]] given seq[..t-1]. */
  logprobs(sequences: Int32Array[], starts: number[], temperature: number, tokenBudget: number): Promise<Float32Array[]>;
  /** fp32 logits [B, T, vocab] of the left-padded batch. */
  forward(sequences: Int32Array[]): Promise<NativeTensor>;
  /** The parameters by checkpoint name, as tensor handles sharing the model's memory. */
  parameters(): Record<string, NativeTensor>;
  /** Writes the named parameters (base or adapter) to one safetensors file. */
  saveShard(path: string, names: string[], dtype: NativeDType | null, metadata: Record<string, string>): Promise<void>;
  /**
   * Attaches a LoRA adapter to the module paths given (replacing any before): its tensors by peft key, copied, or drawn
   * as peft initialises them when `tensors` is null; kept in `dtype`.
   */
  setLora(options: NativeLoraOptions, tensors: Record<string, NativeTensor> | null, seed: number, dtype: NativeDType): Promise<void>;
  /** The adapter's tensors by peft key (empty without one), sharing the model's memory. */
  loraParameters(): Record<string, NativeTensor>;
  /** Folds the adapter into the base weights (W += scale B A) and drops it. */
  mergeLora(): Promise<void>;
  /** Forwards without gradients (engine, scoring) read merged copies W + scale B A, refreshed after every step. */
  setLoraMerged(on: boolean): Promise<void>;
  /** The attached adapter, or null. */
  readonly lora: NativeLoraOptions | null;
  dispose(): void;
}

export interface NativeLoraOptions {
  r: number;
  alpha: number;
  dropout: number;
  /** Scale alpha / sqrt(r) instead of alpha / r. */
  rslora: boolean;
  /** Read back only: whether forwards without gradients use merged copies (setLoraMerged). */
  merged?: boolean;
  /** Module paths, e.g. model.layers.3.self_attn.q_proj. */
  modules: string[];
}

export interface NativeSafetensorsContents {
  tensors: Record<string, NativeTensor>;
  metadata: Record<string, string>;
  /** Tensor names in header order. */
  order: string[];
}

interface ModelExports {
  NativeModel: AddonOnlyConstructor<NativeModel>;
  modelLoad(dir: string, config: NativeModelConfig, device: string, dtype: NativeDType, paramDtype: NativeDType): Promise<NativeModel>;
  modelInit(config: NativeModelConfig, device: string, dtype: NativeDType, paramDtype: NativeDType, seed: number, std: number): Promise<NativeModel>;
  safetensorsRead(path: string): NativeSafetensorsContents;
  safetensorsWrite(path: string, names: string[], tensors: NativeTensor[], dtype: NativeDType | null, metadata: Record<string, string>): Promise<void>;
  /** The fused decoder operators (native/model/fused_ops.h) against their composite forms on random inputs, for tests. */
  fusedOpGaps(device: string, dtype: NativeDType, seed: number): { rotary: number; swiglu: number; kvWrite: number; decodeAttention: number };
  /** The fused decoder operators' inputs and outputs on seeded random inputs, by name, as float64, for tests' own references. */
  fusedOpRun(device: string, dtype: NativeDType, seed: number): Record<string, { shape: number[]; data: Float64Array }>;
  /** Grouped key/value heads passed to sdpa shared against repeated (largest gap over outputs and gradients), and what
   * the decoder's sequence attention picks on `device` (native/model/attention.h); for the tests. */
  attentionCheck(device: string, dtype: NativeDType, seed: number): { gap: number; masked: NativeAttentionPlan; causal: NativeAttentionPlan };
  /** Seconds per call of a decode step's attention alone (one layer; native/model/fused_ops.h), for the GPU bench. */
  timeDecodeAttention(
    device: string,
    dtype: NativeDType,
    shape: { kvHeads: number; groups: number; headDim: number; capacity: number; lengths: number[]; iters: number },
  ): number;
}

export interface NativeAttentionPlan {
  heads: 'shared' | 'expanded';
  /** sdpa's backend for that call: 'flash_attention', 'efficient_attention', 'math', ... */
  backend: string;
}

// ---- engine (native/engine/binding.cpp) ----------------------------------------------------------------------------

/** Every field is required: the sampling defaults are the engine's (src/engine/engine.ts). */
export interface NativeSamplingParams {
  /** 0: greedy. */
  temperature: number;
  /** In (0, 1]; 1 keeps everything. */
  topP: number;
  /** 0 or less: no cut. */
  topK: number;
}

export interface NativeEngineRequest extends NativeSamplingParams {
  /** Unique among the engine's live requests. */
  id: number;
  prompt: Int32Array;
  maxNewTokens: number;
  stopIds?: Int32Array;
  /** Integer in [0, 2^53). */
  seed: number;
}

export interface NativeEmitted {
  id: number;
  /** Tokens sampled in this step (a stop id that ended the request included). */
  tokens: Int32Array;
  /** log_softmax(logits / T)[token] of each, without top-k/top-p. */
  logprobs: Float32Array;
  finish: 'stop' | 'length' | null;
}

/** What one engine.step call emitted and the engine's state after it. */
export interface NativeEngineStepResult {
  results: NativeEmitted[];
  /** Requests still decoding after the step. */
  active: number;
  /** The longest live row after the step, in tokens. */
  columns: number;
  /** Decode steps this call ran (after any prefill). */
  steps: number;
  /** Requests each of those steps decoded. */
  rows: number;
  /** Prompt tokens of the requests added in this call taken from the prefix cache, and those computed. */
  reused: number;
  prefilled: number;
  /** Prompt-token columns the prefill forwards ran, padding included. */
  padded: number;
  /** Wall seconds of the call's prefill forwards and of its decode steps. */
  prefillSeconds: number;
  decodeSeconds: number;
  /** Prompts, and their tokens, the prefix cache holds after the call. */
  prefixEntries: number;
  prefixTokens: number;
  /** Tokens each slot of the KV cache holds (grows, moving the cache, only for a longer request than any before). */
  capacity: number;
  /** Of this call's decode steps, those replayed from a captured CUDA graph. */
  graphSteps: number;
  /** CUDA graphs the engine holds now. */
  graphs: number;
  /** Nodes of the largest graph captured (kernels, copies, memsets of one decode step of the biggest bucket); 0 when
   * none is held. */
  graphNodes: number;
  /** Whether decode steps are captured as CUDA graphs (CUDA, option on, no failed capture). */
  graphsEnabled: boolean;
  /** Why CUDA graph capture was turned off, once it has been. */
  graphError?: string;
  /** Bytes of keys/values this call's decode steps' attention read (all layers), and those of the decoding rows'
   * live columns alone. */
  kvBytesRead: number;
  kvBytesLive: number;
}

export interface NativeEngine extends Handle<'NativeEngine'> {
  readonly disposed: boolean;
  /** `clearPrefixCache` empties the prefix cache before the step. */
  step(add: NativeEngineRequest[], cancel: number[], maxSteps: number, clearPrefixCache?: boolean): Promise<NativeEngineStepResult>;
  /** Captures the CUDA graphs of every bucket for rows sampling so, up to `columns` (an idle engine only). */
  capture(sampling: NativeSamplingParams, columns: number): Promise<{ graphs: number; error?: string }>;
  /** Frees the KV cache, the step buffers, the CUDA graphs (their pool) and the prefix cache (an idle engine only);
   * the next request allocates them again. */
  release(): Promise<void>;
  dispose(): void;
}

/** Every field is required: the defaults are src/engine/engine.ts's and the device profile's. */
export interface NativeEngineOptions {
  prefillTokens: number;
  prefixCacheBytes: number;
  slots: number;
  cudaGraphs: boolean;
  slotLayout: SlotLayout;
  liveAttention: boolean;
}

interface EngineExports {
  NativeEngine: AddonOnlyConstructor<NativeEngine>;
  createEngine(model: NativeModel, options: NativeEngineOptions): NativeEngine;
  /** The sampler alone, for tests. */
  engineSample(logits: NativeTensor, params: NativeSamplingParams[], uniforms: Float64Array): { tokens: Int32Array; logprobs: Float32Array };
  /** A request's n-th uniform, for tests. */
  engineUniform(seed: number, n: number): number;
}

// ---- train (native/train/binding.cpp) ------------------------------------------------------------------------------

/** Rows flattened for the addon: row r is ids[sum(lengths[..r]) ..][..lengths[r]]; its first starts[r] ids are the
 * prompt. Per-token columns hold one value per response token, rows concatenated. */
export interface NativeTrainBatch {
  ids: Int32Array;
  lengths: Int32Array;
  starts: Int32Array;
  advantages?: Float32Array;
  oldLogprobs?: Float32Array;
  refLogprobs?: Float32Array;
  returns?: Float32Array;
  oldValues?: Float32Array;
}

/**
 * The policy loss, one object: the config's `loss` section (src/train/options.ts, whose schema the compiler holds to
 * this type) plus the two fields a method and the rollout decide. Every field is required; the native side checks
 * the same ranges as the schema.
 */
export interface NativeLossOptions {
  policyLoss: PolicyLoss;
  clipLow: number;
  clipHigh: number;
  dualClip: number;
  aggregation: Aggregation;
  entropyCoef: number;
  kl: { type: KlType; coef: number };
  valueClip: number;
  /** Weight of the value loss: 1 for a method with a critic (PPO), else 0. */
  valueCoef: number;
  /** Sampling temperature of the rollouts: log-probs are of softmax(logits / temperature). */
  temperature: number;
}

/** Every loss and optimizer field is required (their defaults live in the config schema; src/train/optimizer.ts fills
 * them in); the flags after them are for tests and diagnostics. */
export interface NativeTrainStepOptions {
  objective: 'policy' | 'sft';
  loss: NativeLossOptions;
  microBatchTokens: number;
  maxGradNorm: number;
  lr: number;
  update?: boolean;
  withGrad?: boolean;
  returnGrads?: boolean;
  chunked?: boolean;
  /** Logit bytes per chunk of the log-probs (the device profile's logitChunkBytes unless a caller chooses). */
  chunkBytes: number;
  /** Recompute each decoder layer in backward (the config's optim.gradientCheckpointing). */
  gradientCheckpointing: boolean;
  /** Rows that share a prefix of token ids compute it once (a prefix tree per micro-batch; default false). Exact:
   * the same loss and gradients. Ignored, and off, with LoRA dropout above 0. */
  sharePrefix?: boolean;
  /** Data parallel: this rank's rows are its share of one global mini-batch (native/distributed). */
  group?: NativeDistGroup;
  /** KL without refLogprobs in the batch: the frozen model whose log-probs the step computes (same device). */
  reference?: NativeModel;
  /** LoRA: the KL reference is the trained model's base with its adapter off. */
  referenceBase?: boolean;
}

/** The metrics Optimizer::Step reports (native/train/optimizer.cpp); which are present depends on the step's options. */
export interface NativeTrainMetrics {
  loss: number;
  /** Policy objective only. */
  pgLoss?: number;
  /** Token-mean entropy of softmax(logits / T). */
  entropy?: number;
  /** Aggregated entropy (what the bonus multiplies). */
  entropyLoss?: number;
  /** Token-mean of (old log-prob - new log-prob). */
  approxKl?: number;
  /** Share of tokens where the clipped surrogate is the active one. */
  clipFrac?: number;
  /** Share of tokens (A < 0) where the dual clip bounds the loss. */
  dualClipFrac?: number;
  /** With a KL loss. */
  klLoss?: number;
  /** With a value loss. */
  valueLoss?: number;
  valueClipFrac?: number;
  /** With a gradient. */
  gradNorm?: number;
  /** With an update. */
  lr?: number;
  tokens: number;
  rows: number;
  microBatches: number;
  /** Tokens the step's forwards computed on this process: padded rows' padding included, a shared prefix once. */
  computedTokens: number;
  /** Optimizer steps taken, this one included. */
  step: number;
  /** Wall seconds of the step's parts: the policy's forwards and backwards (with the reduction over ranks), the
   * reference's forwards (KL loss), the clip and optimizer update. */
  forwardBackwardSeconds: number;
  referenceSeconds: number;
  optimizerSeconds: number;
}

export interface NativeTrainStepResult {
  metrics: NativeTrainMetrics;
  /** The training forward's log-prob of every response token, rows concatenated. */
  logprobs: Float32Array;
  /** With `returnGrads`: gradients by parameter name (CPU tensors). */
  grads?: Record<string, NativeTensor>;
}

export interface NativeOptimizerOptions {
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  valueHead: boolean;
  /** ZeRO stage: AdamW's state (and at 2 the gradients) sharded over the steps' group. */
  zero: ZeroStage;
}

/** The optimizer state (and the PPO value head) of one model. */
export interface NativeOptimizer extends Handle<'NativeOptimizer'> {
  readonly stepCount: number;
  readonly hasValueHead: boolean;
  step(batch: NativeTrainBatch, options: NativeTrainStepOptions): Promise<NativeTrainStepResult>;
  /** Copies the iteration's rows (and PPO's per-row returns) into native memory once; replaces the staged batch. */
  stage(batch: NativeTrainBatch, rowReturns?: Float32Array): Promise<void>;
  /** One step over the staged batch's rows at these indices. */
  stepStaged(rows: Int32Array, options: NativeTrainStepOptions): Promise<NativeTrainStepResult>;
  /** PPO: values and GAE over the staged batch; fills its advantages, returns and oldValues. */
  gae(gamma: number, lambda: number, microBatchTokens: number): Promise<void>;
  values(batch: NativeTrainBatch, microBatchTokens: number): Promise<Float32Array>;
  /** With ZeRO over `group`, collective: every rank calls it, rank 0 with the path, the others with ''. */
  save(path: string, metadata: Record<string, string>, group?: NativeDistGroup): Promise<void>;
  /** With ZeRO, this rank's shard of a state saved at any world size (or at stage 0). */
  load(path: string, group?: NativeDistGroup): Promise<void>;
  /** Bytes the model holds for training. */
  memory(): Promise<NativeMemoryBytes>;
  dispose(): void;
}

export interface NativeMemoryBytes {
  /** Every parameter: base, adapter, value head. */
  parameters: number;
  /** The trained parameters (the adapter and value head under LoRA) and their element count. */
  trainable: number;
  trainableCount: number;
  /** Gradients held at the last update. */
  gradients: number;
  /** AdamW's moments and fp32 master copies. */
  optimizerState: number;
}

interface TrainExports {
  NativeOptimizer: new (model: NativeModel, options: NativeOptimizerOptions) => NativeOptimizer;
}

// ---- distributed (native/distributed/binding.cpp) -----------------------------------------------------------------

/** Every field is required: the defaults (and the collective timeout) are src/train/distributed.ts's. */
export interface NativeDistGroupOptions {
  rank: number;
  worldSize: number;
  localRank: number;
  masterAddr: string;
  masterPort: number;
  timeoutMs: number;
  backend: 'gloo' | 'nccl';
  /** torchrun's agent serves the store: every rank connects as a client under /worker/attempt_<restartCount>. */
  agentStore: boolean;
  restartCount: number;
}

export interface NativeDistGroup extends Handle<'NativeDistGroup'> {
  readonly rank: number;
  readonly size: number;
  readonly backend: 'gloo' | 'nccl';
  /** Element-wise sum over the ranks. */
  allReduce(values: Float64Array): Promise<Float64Array>;
  /** This rank's `values.length / size` elements of the sum over the ranks (ZeRO stage 2's collective). */
  reduceScatter(values: Float64Array): Promise<Float64Array>;
  /** Every rank's values, concatenated in rank order (ZeRO's all-gather). */
  allGatherFlat(values: Float64Array): Promise<Float64Array>;
  /** Every rank's bytes, in rank order. */
  allGather(bytes: Uint8Array): Promise<Uint8Array[]>;
  /** Every parameter of the model becomes rank root's (default 0). */
  broadcastModel(model: NativeModel, root?: number): Promise<void>;
  barrier(): Promise<void>;
  close(): Promise<void>;
}

interface DistExports {
  /** Joins the process group (blocks until every rank joined or the timeout passed; E_DIST then). */
  NativeDistGroup: new (options: NativeDistGroupOptions) => NativeDistGroup;
  /** Backends compiled in: 'gloo', and 'nccl' on CUDA builds with NCCL. */
  distBackends: string[];
}

// ---- the whole addon -----------------------------------------------------------------------------------------------

/** Every export of the addon. */
export interface NativeAddon extends BridgeExports, AlgoExports, ModelExports, EngineExports, TrainExports, DistExports {}
