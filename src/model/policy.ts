// Policy: a Hugging Face decoder checkpoint (Qwen3 / Qwen2 / Llama) loaded into the native addon, with its
// tokenizer, chat template and stop ids. Weights are memory-mapped by the addon; heavy calls run on the device's
// executor thread and return Promises. The native handle (`policy.native`) is what the generation engine and the
// train step take, so they share these parameters without copies.
import { deviceProfile, type ComputeDType } from './device.js';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { LamerError } from '../errors.js';
import { makeDirs, readJsonFile, readRegularFile, writeFileAtomic } from '../util/fs.js';
import { Tensor, type DeviceName } from '../tensor.js';
import { ChatTemplate, type ChatMessage, type ChatRenderOptions } from './chat.js';
import { parseModelConfig, toNativeConfig, type CheckpointDType, type ModelConfig } from './config.js';
import { addon } from '../native/addon.js';
import type { NativeLoraOptions, NativeModel } from '../native/types.js';
import { TextTokenizer } from './tokenizer.js';
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  adapterConfigJson,
  loraParameterCount,
  nativeLoraOptions,
  readAdapterConfig,
  checkAdapterTensors,
  type LoraSettings,
} from './lora.js';

export type { ComputeDType };

export interface PolicyLoadOptions {
  /** 'cpu' (default), 'cuda' or 'cuda:N'. */
  device?: DeviceName;
  /** Compute dtype of the forward: float32 on CPU by default, bfloat16 on CUDA. */
  dtype?: ComputeDType;
  /**
   * Storage dtype of the parameters. Default: the compute dtype on CPU (an fp32 checkpoint is then used in place,
   * memory-mapped); float32 master weights on CUDA.
   */
  paramDtype?: ComputeDType;
  /** Padded tokens per forward micro-batch in logprobs (default 8192). */
  tokenBudget?: number;
  /**
   * A LoRA adapter folder's base checkpoint, overriding the adapter_config.json's base_model_name_or_path (only for
   * load() of an adapter folder).
   */
  base?: string;
}

/** A fresh adapter (peft's initialisation: A random, B zero). */
export interface AddLoraOptions extends LoraSettings {
  /** Seed of A's random values. */
  seed: number;
}

export interface PolicyInitOptions extends PolicyLoadOptions {
  seed: number;
  /** Standard deviation of the random weights (transformers' initializer_range; default 0.02). */
  std?: number;
  /** Files written next to the weights on save: tokenizer.json, tokenizer_config.json, generation_config.json, ... */
  assets?: Record<string, string>;
}

export interface SaveOptions {
  /** Weights above this many bytes are split into shards with model.safetensors.index.json (default 5 GB). */
  maxShardBytes?: number;
  /** Storage dtype of the saved weights (default: the checkpoint's own dtype from config.json). */
  dtype?: CheckpointDType;
}

/** What to score: whole sequences (every token after the first), or completions after prompts. */
export type LogprobsBatch = ArrayLike<number>[] | { prompts: (string | ArrayLike<number>)[]; completions: (string | ArrayLike<number>)[] };

/** Files copied from the source checkpoint on save (those that exist). */
const ASSET_FILES = [
  'tokenizer.json',
  'tokenizer_config.json',
  'chat_template.jinja',
  'special_tokens_map.json',
  'added_tokens.json',
  'vocab.json',
  'merges.txt',
  'generation_config.json',
];

function readConfig(dir: string): ModelConfig {
  const path = join(dir, 'config.json');
  if (!existsSync(path)) throw new LamerError('E_CHECKPOINT', `${dir}: no config.json (is this a Hugging Face checkpoint folder?)`);
  return parseModelConfig(readJsonFile(path), path);
}

function idsFromGenerationConfig(text: string | undefined, file: string, vocab: number): number[] {
  if (text === undefined) return [];
  let g: Record<string, unknown>;
  try {
    g = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new LamerError('E_CHECKPOINT', `${file}: not valid JSON: ${(e as Error).message}`, { cause: e });
  }
  if (g === null || typeof g !== 'object' || Array.isArray(g)) {
    throw new LamerError('E_CHECKPOINT', `${file}: expected a JSON object, found ${g === null ? 'null' : Array.isArray(g) ? 'an array' : `a ${typeof g}`}`);
  }
  const v = g.eos_token_id;
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  if (!list.every((x) => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x < vocab)) {
    throw new LamerError(
      'E_CHECKPOINT',
      `${file}: field 'eos_token_id': expected a token id or a list of them in [0, ${vocab}), found ${JSON.stringify(v).slice(0, 200)}`,
    );
  }
  return list as number[];
}

/** Parameter names in checkpoint order (embeddings, layers by number, final norm, head), for stable sharding. */
function checkpointOrder(names: string[]): string[] {
  const key = (n: string): [number, number, string] => {
    const m = /^model\.layers\.(\d+)\./.exec(n);
    if (m) return [1, Number(m[1]), n];
    if (n.startsWith('model.embed_tokens')) return [0, 0, n];
    if (n.startsWith('model.norm')) return [2, 0, n];
    return [3, 0, n];
  };
  return [...names].sort((a, b) => {
    const [ga, la, na] = key(a);
    const [gb, lb, nb] = key(b);
    return ga - gb || la - lb || (na < nb ? -1 : na > nb ? 1 : 0);
  });
}

const BYTES: Record<string, number> = { float32: 4, bfloat16: 2, float16: 2, float64: 8 };

/** True when `dir` is a peft adapter folder (adapter_config.json, no config.json of a full checkpoint). */
export function isAdapterDir(dir: string): boolean {
  return existsSync(join(dir, ADAPTER_CONFIG_FILE)) && !existsSync(join(dir, 'config.json'));
}

/** True when `dir` holds a checkpoint Policy.load opens: a full one or a LoRA adapter. */
export function isCheckpointDir(dir: string): boolean {
  return existsSync(join(dir, 'config.json')) || isAdapterDir(dir);
}

/** The weights file of checkpoint `root` that holds tensor `name` (the shard its index names, else model.safetensors). */
function weightsFileOf(root: string, name: string): string {
  const index = join(root, 'model.safetensors.index.json');
  if (!existsSync(index)) return join(root, 'model.safetensors');
  const map = (readJsonFile(index) as { weight_map?: Record<string, unknown> } | null)?.weight_map;
  const file = map?.[name];
  return typeof file === 'string' ? join(root, file) : index;
}

/**
 * Refuses a loaded checkpoint whose weights hold NaN or infinite values, as stored in the model's parameter dtype (a
 * finite value beyond that dtype's range became infinite on load): E_CHECKPOINT naming the file and the tensor. A sum
 * in float64 of finite float32 values cannot overflow, so a sum that is not finite means such a value.
 */
function checkFiniteWeights(root: string, native: NativeModel): void {
  const params = native.parameters();
  try {
    for (const [name, t] of Object.entries(params)) {
      if (Number.isFinite(addon().sum(t))) continue;
      throw new LamerError(
        'E_CHECKPOINT',
        `${weightsFileOf(root, name)}: tensor '${name}' holds NaN or infinite values as loaded in ${native.paramDtype} (a value beyond ${native.paramDtype}'s range becomes infinite); the checkpoint is corrupt`,
      );
    }
  } finally {
    for (const t of Object.values(params)) t.dispose();
  }
}

/** The base_model_name_or_path an adapter folder names, or null. */
export function adapterBaseModel(dir: string): string | null {
  const raw = readJsonFile(join(dir, ADAPTER_CONFIG_FILE)) as Record<string, unknown> | null;
  const base = raw && typeof raw === 'object' ? raw.base_model_name_or_path : undefined;
  return typeof base === 'string' && base.length > 0 ? base : null;
}

export class Policy {
  readonly config: ModelConfig;
  readonly tokenizer: TextTokenizer | null;
  readonly chatTemplate: ChatTemplate | null;
  /** Generation stops at any of these ids (generation_config.json's eos_token_id, else config.json's). */
  readonly stopIds: number[];
  readonly #assets: Map<string, string>;
  readonly #tokenBudget: number;
  #native: NativeModel | null;
  /** The checkpoint folder the base weights were read from (null for a model made by init()). */
  #source: string | null = null;

  private constructor(
    native: NativeModel,
    config: ModelConfig,
    assets: Map<string, string>,
    tokenizer: TextTokenizer | null,
    chatTemplate: ChatTemplate | null,
    tokenBudget: number,
  ) {
    this.#native = native;
    this.config = config;
    this.#assets = assets;
    this.tokenizer = tokenizer;
    this.chatTemplate = chatTemplate;
    this.#tokenBudget = tokenBudget;
    const fromGeneration = idsFromGenerationConfig(assets.get('generation_config.json'), 'generation_config.json', config.vocabSize);
    this.stopIds = [...new Set(fromGeneration.length > 0 ? fromGeneration : config.eosTokenIds)];
  }

  static #dtypes(options: PolicyLoadOptions): { device: DeviceName; dtype: ComputeDType; paramDtype: ComputeDType } {
    const device = options.device ?? 'cpu';
    const profile = deviceProfile(device);
    const dtype = options.dtype ?? profile.computeDtype;
    const paramDtype = options.paramDtype ?? (profile.fp32Masters ? 'float32' : dtype);
    return { device, dtype, paramDtype };
  }

  /**
   * Loads a checkpoint folder (config.json, model.safetensors or a sharded index, tokenizer files if present), or a
   * peft LoRA adapter folder (adapter_config.json + adapter_model.safetensors): its base (options.base, else the
   * adapter's base_model_name_or_path, relative to the adapter folder when not absolute) with the adapter on it. An
   * adapter's base is kept in the compute dtype unless paramDtype says otherwise: it is frozen.
   */
  static async load(dir: string, options: PolicyLoadOptions = {}): Promise<Policy> {
    const root = resolve(dir);
    if (isAdapterDir(root)) {
      const named = options.base ?? adapterBaseModel(root);
      if (named === null) {
        throw new LamerError(
          'E_CHECKPOINT',
          `${root}: a LoRA adapter whose ${ADAPTER_CONFIG_FILE} names no base_model_name_or_path; give the base checkpoint (Policy.load(dir, { base }), or model.path with model.adapter)`,
        );
      }
      const base = isAbsolute(named) ? named : resolve(root, named);
      if (!existsSync(join(base, 'config.json'))) {
        throw new LamerError(
          'E_CHECKPOINT',
          `${root}: its base model ${named} (base_model_name_or_path) is not a checkpoint folder on this machine; give the base's folder (Policy.load(dir, { base }), or model.path with model.adapter)`,
        );
      }
      const { base: _base, ...rest } = options;
      const policy = await Policy.load(base, { ...rest, paramDtype: rest.paramDtype ?? Policy.#dtypes(rest).dtype });
      try {
        await policy.loadAdapter(root);
      } catch (e) {
        policy.dispose();
        throw e;
      }
      return policy;
    }
    const config = readConfig(root);
    const assets = new Map<string, string>();
    for (const f of ASSET_FILES) {
      const p = join(root, f);
      if (existsSync(p)) assets.set(f, readRegularFile(p));
    }
    const tokenizer = TextTokenizer.load(root);
    if (tokenizer && tokenizer.size > config.vocabSize) {
      throw new LamerError(
        'E_CHECKPOINT',
        `tokenizer.json has ids up to ${tokenizer.size - 1}, outside the model's vocabulary of ${config.vocabSize} (config.json vocab_size)`,
      );
    }
    const chatTemplate = ChatTemplate.load(root);
    const { device, dtype, paramDtype } = Policy.#dtypes(options);
    const native = await addon().modelLoad(root, toNativeConfig(config), device, dtype, paramDtype);
    try {
      checkFiniteWeights(root, native);
    } catch (e) {
      native.dispose();
      throw e;
    }
    const policy = new Policy(native, config, assets, tokenizer, chatTemplate, options.tokenBudget ?? 8192);
    policy.#source = root;
    return policy;
  }

  /** A randomly initialised model of `config` (for `lamer init-model` and tests). */
  static async init(config: ModelConfig, options: PolicyInitOptions): Promise<Policy> {
    const { device, dtype, paramDtype } = Policy.#dtypes(options);
    const native = await addon().modelInit(toNativeConfig(config), device, dtype, paramDtype, options.seed, options.std ?? 0.02);
    const assets = new Map(Object.entries(options.assets ?? {}));
    const tokenizerJson = assets.get('tokenizer.json');
    const tokenizerConfig = JSON.parse(assets.get('tokenizer_config.json') ?? '{}') as Record<string, unknown>;
    const tokenizer = tokenizerJson ? new TextTokenizer(JSON.parse(tokenizerJson) as Record<string, unknown>, tokenizerConfig) : null;
    const templateText = assets.get('chat_template.jinja') ?? ChatTemplate.pick(tokenizerConfig.chat_template, 'default');
    const chatTemplate = templateText ? new ChatTemplate(templateText, tokenizerConfig) : null;
    return new Policy(native, config, assets, tokenizer, chatTemplate, options.tokenBudget ?? 8192);
  }

  /** @internal The native model handle, for the generation engine and the train step. */
  get native(): NativeModel {
    if (!this.#native) throw new LamerError('E_DISPOSED', 'this Policy was disposed');
    return this.#native;
  }

  get device(): string {
    return this.native.device;
  }

  /** The checkpoint folder the base weights were read from (null for a model made by init()). */
  get source(): string | null {
    return this.#source;
  }

  /** @internal Records where the base weights are on disk (a runtime that saved an init() model's base). */
  setSource(dir: string): void {
    this.#source = resolve(dir);
  }

  /** The attached LoRA adapter (module paths, r, alpha), or null. */
  get lora(): NativeLoraOptions | null {
    return this.native.lora;
  }

  /** Trainable elements of the attached adapter (r (in + out) per adapted projection); 0 without one. */
  get loraParameterCount(): number {
    const l = this.lora;
    return l ? loraParameterCount(this.config, l) : 0;
  }

  /** The adapter's dtype: fp32 (fp64 for a model kept in fp64), whatever the compute dtype. */
  #adapterDtype(): 'float32' | 'float64' {
    return (this.native.paramDtype as string) === 'float64' ? 'float64' : 'float32';
  }

  /**
   * Attaches a fresh LoRA adapter (replacing any): A drawn as peft draws it (kaiming-uniform), B zero, so the model's
   * outputs are unchanged until the adapter trains. The train step then trains the adapter alone.
   */
  async addLora(options: AddLoraOptions): Promise<void> {
    const native = nativeLoraOptions(this.config, options);
    if (native.modules.length === 0) throw new LamerError('E_ARG', 'addLora: no target module');
    await this.native.setLora(native, null, options.seed, this.#adapterDtype());
  }

  /** Attaches the peft adapter in `dir` (adapter_config.json + adapter_model.safetensors), replacing any. */
  async loadAdapter(dir: string): Promise<void> {
    const root = resolve(dir);
    const weights = join(root, ADAPTER_WEIGHTS_FILE);
    if (!existsSync(weights)) throw new LamerError('E_CHECKPOINT', `${root}: no ${ADAPTER_WEIGHTS_FILE} (is this a peft LoRA adapter folder?)`);
    const file = addon().safetensorsRead(weights);
    try {
      const { options } = readAdapterConfig(root, file.order, this.config);
      const tensors: Record<string, (typeof file.tensors)[string]> = {};
      for (const [name, t] of Object.entries(file.tensors)) tensors[name.replace(/\.default\.weight$/, '.weight')] = t;
      checkAdapterTensors(weights, tensors, options, this.#adapterDtype());
      await this.native.setLora(options, tensors, 0, this.#adapterDtype());
    } finally {
      for (const t of Object.values(file.tensors)) t.dispose();
    }
  }

  /**
   * Writes the adapter as peft writes it: adapter_model.safetensors (fp32, peft's keys) and adapter_config.json, whose
   * base_model_name_or_path is `baseModel` (default: the folder the base was loaded from). Files go under temporary
   * names and are renamed into place.
   */
  async saveAdapter(dir: string, options: { baseModel?: string | null } = {}): Promise<void> {
    const native = this.native;
    const lora = native.lora;
    if (!lora) throw new LamerError('E_ARG', 'saveAdapter: this policy carries no LoRA adapter (addLora or loadAdapter attaches one)');
    const root = resolve(dir);
    makeDirs(root);
    const params = native.loraParameters();
    const names = Object.keys(params).sort();
    for (const t of Object.values(params)) t.dispose();
    await native.saveShard(join(root, ADAPTER_WEIGHTS_FILE), names, null, { format: 'pt' });
    const base = options.baseModel !== undefined ? options.baseModel : this.#source;
    writeFileAtomic(join(root, ADAPTER_CONFIG_FILE), `${JSON.stringify(adapterConfigJson(lora, base, this.config), null, 2)}\n`);
  }

  /**
   * Generation and scoring (forwards without gradients) read merged copies W + scale B A of the adapted weights,
   * refreshed in place after every optimizer step, instead of adding B (A x) per projection: faster decoding for a
   * compute-dtype copy of every adapted weight. Training forwards are unchanged. Off by default.
   */
  async setAdapterMerged(on: boolean): Promise<void> {
    if (!this.native.lora) throw new LamerError('E_ARG', 'setAdapterMerged: this policy carries no LoRA adapter');
    await this.native.setLoraMerged(on);
  }

  /** Folds the adapter into the base weights (W += scale B A, in fp64) and drops it; save() then writes merged weights. */
  async mergeAdapter(): Promise<void> {
    if (!this.native.lora) throw new LamerError('E_ARG', 'mergeAdapter: this policy carries no LoRA adapter');
    await this.native.mergeLora();
  }

  get disposed(): boolean {
    return this.#native === null;
  }

  #requireTokenizer(): TextTokenizer {
    if (!this.tokenizer) throw new LamerError('E_ARG', 'this checkpoint has no tokenizer.json; pass token ids instead of text');
    return this.tokenizer;
  }

  /** Token ids of `text` (no BOS/EOS added). */
  encode(text: string): number[] {
    return this.#requireTokenizer().encode(text);
  }

  decode(ids: ArrayLike<number>, options: { skipSpecialTokens?: boolean } = {}): string {
    return this.#requireTokenizer().decode(ids, options);
  }

  /** The chat template applied to `messages` (text). */
  renderChat(messages: ChatMessage[], options: ChatRenderOptions = {}): string {
    if (!this.chatTemplate) throw new LamerError('E_ARG', 'this checkpoint has no chat template');
    return this.chatTemplate.render(messages, options);
  }

  /** Ids of the chat-templated prompt, as transformers' apply_chat_template(tokenize=True) gives them. */
  encodeChat(messages: ChatMessage[], options: ChatRenderOptions = {}): number[] {
    return this.encode(this.renderChat(messages, options));
  }

  #ids(x: string | ArrayLike<number>): number[] {
    return typeof x === 'string' ? this.encode(x) : Array.from(x);
  }

  /**
   * Log-probs at `temperature` (log_softmax(logits / T), never with top-k/top-p). For a list of sequences:
   * result[j][i] = log p(seq[i + 1] | seq[0..i]). For {prompts, completions}: result[j][i] = log p(completion[i] |
   * prompt, completion[0..i-1]); text is tokenized without special tokens added.
   */
  async logprobs(batch: LogprobsBatch, options: { temperature?: number } = {}): Promise<Float32Array[]> {
    const temperature = options.temperature ?? 1;
    const seqs: Int32Array[] = [];
    const starts: number[] = [];
    if (Array.isArray(batch)) {
      for (const s of batch as ArrayLike<number>[]) {
        if (s.length < 1) throw new LamerError('E_ARG', 'logprobs: every sequence needs at least one token');
        seqs.push(Int32Array.from(s));
        starts.push(1);
      }
    } else {
      const { prompts, completions } = batch as { prompts: (string | ArrayLike<number>)[]; completions: (string | ArrayLike<number>)[] };
      if (prompts.length !== completions.length) {
        throw new LamerError('E_ARG', `logprobs: ${prompts.length} prompts but ${completions.length} completions`);
      }
      for (let j = 0; j < prompts.length; j++) {
        const p = this.#ids(prompts[j]);
        const c = this.#ids(completions[j]);
        if (p.length < 1) throw new LamerError('E_ARG', `logprobs: prompt ${j} is empty (the first completion token needs a context)`);
        seqs.push(Int32Array.from([...p, ...c]));
        starts.push(p.length);
      }
    }
    if (seqs.length === 0) return [];
    const out = await this.native.logprobs(seqs, starts, temperature, this.#tokenBudget);
    // A log-prob is finite for any finite logits; NaN or -Infinity means the forward overflowed (weights finite but
    // far beyond any trained model's, e.g. a corrupted byte), which the caller must hear about rather than score.
    out.forEach((lp, j) => {
      const t = lp.findIndex((x) => !Number.isFinite(x));
      if (t >= 0) {
        throw new LamerError(
          'E_CHECKPOINT',
          `logprobs: the model (${this.#source ?? 'in memory'}) gave a non-finite log-prob (${lp[t]}) for sequence ${j}, token ${starts[j] + t}: its forward overflows, so its weights are corrupt or too large for its compute dtype`,
        );
      }
    });
    return out;
  }

  /** fp32 logits [B, T, vocab] of the sequences, left-padded to the longest. */
  async logits(sequences: ArrayLike<number>[]): Promise<Tensor> {
    return new Tensor(await this.native.forward(sequences.map((s) => Int32Array.from(s))));
  }

  /**
   * Writes a checkpoint transformers loads: config.json, model.safetensors (or shards with an index above
   * maxShardBytes), generation_config.json and the tokenizer files. Every file is written under a temporary name and
   * renamed into place; weights go first and config.json last, and files of an earlier save that the new one does not
   * use are removed at the end.
   */
  async save(dir: string, options: SaveOptions = {}): Promise<void> {
    const native = this.native;
    if (native.lora) {
      throw new LamerError(
        'E_ARG',
        'save: this policy carries a LoRA adapter, which save() would leave out; saveAdapter(dir) writes the adapter, or mergeAdapter() first to save merged weights',
      );
    }
    const root = resolve(dir);
    makeDirs(root);
    const dtype = options.dtype ?? this.config.dtype;
    const maxShard = options.maxShardBytes ?? 5e9;
    const params = native.parameters();
    const names = checkpointOrder(Object.keys(params));
    const sizes = names.map((n) => params[n].numel * BYTES[dtype]);
    for (const t of Object.values(params)) t.dispose();
    const total = sizes.reduce((a, b) => a + b, 0);
    const metadata = { format: 'pt' };

    const shards: string[][] = [];
    if (total <= maxShard) {
      shards.push(names);
    } else {
      let size = 0;
      names.forEach((n, i) => {
        if (shards.length === 0 || (size > 0 && size + sizes[i] > maxShard)) {
          shards.push([]);
          size = 0;
        }
        shards[shards.length - 1].push(n);
        size += sizes[i];
      });
    }
    const written = new Set<string>();
    if (shards.length === 1) {
      await native.saveShard(join(root, 'model.safetensors'), names, dtype, metadata);
      written.add('model.safetensors');
    } else {
      const weightMap: Record<string, string> = {};
      for (let s = 0; s < shards.length; s++) {
        const file = `model-${String(s + 1).padStart(5, '0')}-of-${String(shards.length).padStart(5, '0')}.safetensors`;
        await native.saveShard(join(root, file), shards[s], dtype, metadata);
        for (const n of shards[s]) weightMap[n] = file;
        written.add(file);
      }
      writeFileAtomic(join(root, 'model.safetensors.index.json'), `${JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }, null, 2)}\n`);
      written.add('model.safetensors.index.json');
    }

    for (const [file, text] of this.#assets) {
      if (file === 'generation_config.json') continue;
      writeFileAtomic(join(root, file), text);
      written.add(file);
    }
    const generation = this.#assets.get('generation_config.json') ?? `${JSON.stringify(this.#defaultGenerationConfig(), null, 2)}\n`;
    writeFileAtomic(join(root, 'generation_config.json'), generation);
    const raw: Record<string, unknown> = { ...this.config.raw, dtype };
    delete raw.torch_dtype;
    writeFileAtomic(join(root, 'config.json'), `${JSON.stringify(raw, null, 2)}\n`);

    // Weights of an earlier save in the other layout (or with more shards) would confuse loaders: remove them.
    for (const f of readdirSync(root)) {
      const stale = (f === 'model.safetensors' || f === 'model.safetensors.index.json' || /^model-\d{5}-of-\d{5}\.safetensors$/.test(f)) && !written.has(f);
      if (stale && statSync(join(root, f)).isFile()) rmSync(join(root, f));
    }
  }

  #defaultGenerationConfig(): Record<string, unknown> {
    const c = this.config;
    const g: Record<string, unknown> = {};
    if (c.bosTokenId !== null) g.bos_token_id = c.bosTokenId;
    if (c.eosTokenIds.length > 0) g.eos_token_id = c.eosTokenIds.length === 1 ? c.eosTokenIds[0] : c.eosTokenIds;
    if (c.padTokenId !== null) g.pad_token_id = c.padTokenId;
    return g;
  }

  /** Releases the native model (its parameters and the mapped checkpoint, once queued jobs finish). */
  dispose(): void {
    if (this.#native) {
      this.#native.dispose();
      this.#native = null;
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
