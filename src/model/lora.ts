// LoRA adapters in peft's file format: adapter_config.json + adapter_model.safetensors, keyed as peft keys them
// ("base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight"). A projection W becomes W x + scale B (A x),
// scale = alpha / r (alpha / sqrt(r) with rslora), A [r, in] and B [out, r]; the native decoder applies it
// (native/model/lora.h). What peft can write and this decoder cannot apply (DoRA, biases, modules_to_save, per-module
// ranks, embedding adapters) is refused by name rather than dropped.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { LamerError } from '../errors.js';
import { readJsonFile } from '../util/fs.js';
import type { NativeLoraOptions } from '../native/types.js';
import type { ModelConfig } from './config.js';

/** The projections of a decoder layer an adapter may target, by module name. */
export const LORA_MODULES = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type LoraModule = (typeof LORA_MODULES)[number];

export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
/** peft's LoraConfig default for a missing `lora_alpha` (not `r`): scale 8 / r. */
export const PEFT_DEFAULT_LORA_ALPHA = 8;
export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';

/** What `model.lora` configures. */
export interface LoraSettings {
  r: number;
  alpha: number;
  dropout: number;
  /** Module names, or every linear layer of the decoder (not the LM head), as peft's 'all-linear'. */
  targets: readonly LoraModule[] | 'all-linear';
  /** Rank-stabilised scale alpha / sqrt(r). */
  rslora?: boolean;
}

const ATTENTION = new Set<string>(['q_proj', 'k_proj', 'v_proj', 'o_proj']);

export function loraModulePath(layer: number, module: LoraModule): string {
  return `model.layers.${layer}.${ATTENTION.has(module) ? 'self_attn' : 'mlp'}.${module}`;
}

/** The module paths of `targets` on every layer, in layer then LORA_MODULES order. */
export function loraModulePaths(config: Pick<ModelConfig, 'numHiddenLayers'>, targets: LoraSettings['targets']): string[] {
  const wanted = new Set<string>(targets === 'all-linear' ? LORA_MODULES : targets);
  const out: string[] = [];
  for (let i = 0; i < config.numHiddenLayers; i++) for (const m of LORA_MODULES) if (wanted.has(m)) out.push(loraModulePath(i, m));
  return out;
}

export function nativeLoraOptions(config: Pick<ModelConfig, 'numHiddenLayers'>, s: LoraSettings): NativeLoraOptions {
  return { r: s.r, alpha: s.alpha, dropout: s.dropout, rslora: s.rslora ?? false, modules: loraModulePaths(config, s.targets) };
}

/** Trainable elements of an adapter: r (in + out) per adapted projection. */
export function loraParameterCount(config: ModelConfig, options: NativeLoraOptions): number {
  const q = config.numAttentionHeads * config.headDim;
  const kv = config.numKeyValueHeads * config.headDim;
  const h = config.hiddenSize;
  const f = config.intermediateSize;
  const shape: Record<LoraModule, [number, number]> = {
    q_proj: [h, q],
    k_proj: [h, kv],
    v_proj: [h, kv],
    o_proj: [q, h],
    gate_proj: [h, f],
    up_proj: [h, f],
    down_proj: [f, h],
  };
  return options.modules.reduce((n, path) => {
    const [i, o] = shape[path.slice(path.lastIndexOf('.') + 1) as LoraModule];
    return n + options.r * (i + o);
  }, 0);
}

const KEY = /^base_model\.model\.(model\.layers\.(\d+)\.(self_attn|mlp)\.([a-z_]+))\.lora_([AB])(?:\.default)?\.weight$/;

/** An adapter folder read from disk: its options, its tensor names by peft key, and the base it names. */
export interface AdapterFiles {
  options: NativeLoraOptions;
  /** The adapter_config.json as written. */
  raw: Record<string, unknown>;
  /** base_model_name_or_path, when it names one. */
  baseModel: string | null;
}

/**
 * Reads and checks `dir`'s adapter_config.json against the tensor names of its adapter_model.safetensors (`names`):
 * the adapted modules are those the file holds A and B for, and target_modules must name each of them and nothing
 * outside the model's projections. E_CHECKPOINT names the file and what is wrong.
 */
export function readAdapterConfig(dir: string, names: readonly string[], model: Pick<ModelConfig, 'numHiddenLayers'>): AdapterFiles {
  const file = join(dir, ADAPTER_CONFIG_FILE);
  if (!existsSync(file)) throw new LamerError('E_CHECKPOINT', `${dir}: no ${ADAPTER_CONFIG_FILE} (is this a peft LoRA adapter folder?)`);
  const raw = readJsonFile(file) as Record<string, unknown>;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new LamerError('E_CHECKPOINT', `${file}: expected a JSON object`);
  const fail = (what: string): never => {
    throw new LamerError('E_CHECKPOINT', `${file}: ${what}`);
  };
  if (raw.peft_type !== undefined && raw.peft_type !== 'LORA') fail(`peft_type ${JSON.stringify(raw.peft_type)}: only LORA adapters are supported`);
  const r = raw.r;
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 1) fail(`field 'r': expected an integer >= 1, found ${JSON.stringify(r)}`);
  const alpha = raw.lora_alpha ?? PEFT_DEFAULT_LORA_ALPHA;
  if (typeof alpha !== 'number' || !(alpha > 0) || !Number.isFinite(alpha)) fail(`field 'lora_alpha': expected a number > 0, found ${JSON.stringify(alpha)}`);
  const dropout = raw.lora_dropout ?? 0;
  if (typeof dropout !== 'number' || !(dropout >= 0 && dropout < 1))
    fail(`field 'lora_dropout': expected a number in [0, 1), found ${JSON.stringify(dropout)}`);
  const rslora = raw.use_rslora ?? false;
  if (typeof rslora !== 'boolean') fail(`field 'use_rslora': expected true or false, found ${JSON.stringify(rslora)}`);
  const unsupported: [string, (v: unknown) => boolean][] = [
    ['use_dora', (v) => v === true],
    ['bias', (v) => v !== undefined && v !== null && v !== 'none'],
    ['lora_bias', (v) => v === true],
    ['fan_in_fan_out', (v) => v === true],
    ['modules_to_save', (v) => Array.isArray(v) && v.length > 0],
    ['rank_pattern', (v) => v !== null && typeof v === 'object' && Object.keys(v).length > 0],
    ['alpha_pattern', (v) => v !== null && typeof v === 'object' && Object.keys(v).length > 0],
    ['layer_replication', (v) => v !== undefined && v !== null],
    ['use_qalora', (v) => v === true],
    ['trainable_token_indices', (v) => v !== undefined && v !== null],
  ];
  for (const [field, bad] of unsupported) {
    if (bad(raw[field])) fail(`field '${field}' = ${JSON.stringify(raw[field])} is not supported (plain LoRA on the decoder's linear layers only)`);
  }
  const modules = new Map<string, Set<string>>();
  for (const n of names) {
    const m = KEY.exec(n);
    if (!m || !(LORA_MODULES as readonly string[]).includes(m[4]) || (ATTENTION.has(m[4]) ? 'self_attn' : 'mlp') !== m[3]) {
      throw new LamerError('E_CHECKPOINT', `${join(dir, ADAPTER_WEIGHTS_FILE)}: tensor '${n}' is not a LoRA A or B of a decoder projection`);
    }
    if (Number(m[2]) >= model.numHiddenLayers) {
      throw new LamerError(
        'E_CHECKPOINT',
        `${join(dir, ADAPTER_WEIGHTS_FILE)}: tensor '${n}' is on layer ${m[2]}, and the base model has ${model.numHiddenLayers}`,
      );
    }
    if (!modules.has(m[1])) modules.set(m[1], new Set());
    modules.get(m[1])!.add(m[5]);
  }
  for (const [path, parts] of modules) {
    if (parts.size !== 2)
      throw new LamerError('E_CHECKPOINT', `${join(dir, ADAPTER_WEIGHTS_FILE)}: module ${path} has lora_${[...parts][0]} without its other half`);
  }
  if (modules.size === 0) throw new LamerError('E_CHECKPOINT', `${join(dir, ADAPTER_WEIGHTS_FILE)}: holds no LoRA tensor`);
  const order = (p: string): [number, number] => {
    const m = /^model\.layers\.(\d+)\.\w+\.(\w+)$/.exec(p)!;
    return [Number(m[1]), (LORA_MODULES as readonly string[]).indexOf(m[2])];
  };
  const paths = [...modules.keys()].sort((a, b) => {
    const [la, ma] = order(a);
    const [lb, mb] = order(b);
    return la - lb || ma - mb;
  });
  checkTargetModules(raw.target_modules, paths, model, fail);
  const base = raw.base_model_name_or_path;
  return {
    options: { r: r as number, alpha: alpha as number, dropout: dropout as number, rslora: rslora as boolean, modules: paths },
    raw,
    baseModel: typeof base === 'string' && base.length > 0 ? base : null,
  };
}

/** The RegExp flag of V8's linear-time engine (enabled by --enable-experimental-regexp-engine). */
const LINEAR_REGEXP = 'l';

/**
 * Checks adapter_config.json's target_modules as peft reads it against the modules the adapter's tensors adapt
 * (`adapted`, module paths): a string is 'all-linear' or a pattern the whole module path must match (peft's
 * re.fullmatch, here matched in linear time), a list names modules by their path or its last parts (peft's
 * `key == t or key.endswith('.' + t)`). Refused through `fail`: any other type, an empty list, an entry that names no
 * decoder projection of the model (peft refuses targets missing from the model, and this decoder adapts its
 * projections only), a pattern that is not a regular expression the linear-time engine runs, and an adapted module
 * that target_modules does not name (peft would not attach it, and its tensors would be dropped).
 */
function checkTargetModules(targets: unknown, adapted: readonly string[], model: Pick<ModelConfig, 'numHiddenLayers'>, fail: (what: string) => never): void {
  const field = `field 'target_modules'`;
  const quote = (v: unknown) => {
    const text = JSON.stringify(v) ?? String(v);
    return text.length > 200 ? `${text.slice(0, 200)}...` : text;
  };
  const projections = loraModulePaths(model, 'all-linear');
  let names: (path: string) => boolean;
  if (typeof targets === 'string') {
    if (targets === 'all-linear') names = () => true;
    else {
      let pattern: RegExp;
      try {
        // V8's linear-time engine (flag 'l'): a pattern that backtracks exponentially, such as (.*)*x, would otherwise
        // hold the process on one module path; one that needs backtracking (backreferences, lookarounds) is refused.
        setFlagsFromString('--enable-experimental-regexp-engine');
        pattern = new RegExp(`^(?:${targets})$`, LINEAR_REGEXP);
      } catch (e) {
        return fail(`${field} ${quote(targets)} is not a regular expression this program can read (${(e as Error).message})`);
      }
      names = (path) => pattern.test(path);
    }
  } else if (Array.isArray(targets) && targets.length > 0 && targets.every((t) => typeof t === 'string')) {
    const list = targets as string[];
    const named = (path: string, t: string) => path === t || path.endsWith(`.${t}`);
    for (const t of list) {
      if (!projections.some((path) => named(path, t))) {
        fail(
          `${field} entry ${quote(t)} names no module of the model (this decoder adapts ${LORA_MODULES.join(', ')} on layers 0-${model.numHiddenLayers - 1})`,
        );
      }
    }
    names = (path) => list.some((t) => named(path, t));
  } else {
    return fail(`${field}: expected a module name pattern or a non-empty list of module names, found ${quote(targets)}`);
  }
  for (const path of adapted) {
    if (!names(path)) {
      fail(`${field} ${quote(targets)} does not name module ${path}, whose LoRA tensors ${ADAPTER_WEIGHTS_FILE} holds`);
    }
  }
}

const FLOAT_DTYPES = new Set(['float32', 'float64', 'float16', 'bfloat16']);
const FLOAT32_MAX = 3.4028234663852886e38;

/** What checkAdapterTensors reads of a tensor: its dtype, shape and values (NativeTensor has them). */
export interface AdapterTensor {
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly data: ArrayLike<number> | ArrayLike<bigint>;
}

/** The largest magnitude of `t`'s values, or NaN when one is NaN or infinite (bf16 and fp16 read by their bits). */
function largestMagnitude(t: AdapterTensor, adapterDtype: 'float32' | 'float64'): number {
  let max = 0;
  if (t.dtype === 'bfloat16' || t.dtype === 'float16') {
    const bits = t.data as ArrayLike<number>;
    const [expMask, shift, bias, mant] = t.dtype === 'bfloat16' ? [0x7f80, 7, 127, 128] : [0x7c00, 10, 15, 1024];
    for (let i = 0; i < bits.length; i++) {
      const e = bits[i] & expMask;
      if (e === expMask) return NaN;
      if (e === 0) continue; // zero or subnormal: below any bound that matters
      const v = 2 ** ((e >> shift) - bias) * (1 + (bits[i] & (mant - 1)) / mant);
      if (v > max) max = v;
    }
    return max;
  }
  const data = t.data as ArrayLike<number>;
  for (let i = 0; i < data.length; i++) {
    const v = Math.abs(data[i]);
    // A float64 value beyond float32's range becomes infinite in a float32 adapter.
    if (!(v <= (adapterDtype === 'float32' ? FLOAT32_MAX : Number.MAX_VALUE))) return NaN;
    if (v > max) max = v;
  }
  return max;
}

/**
 * Checks an adapter's tensors before they are attached (`file` names adapter_model.safetensors): floating point (peft
 * writes float adapters; an integer tensor is refused, not converted), every value finite in the adapter's dtype, and
 * each projection's update scale * B A bounded (|scale| * max|B| * max|A| * r) below float32's largest value, so it
 * cannot overflow to infinity when applied or merged. E_CHECKPOINT naming the file and the tensor.
 */
export function checkAdapterTensors(
  file: string,
  tensors: Readonly<Record<string, AdapterTensor>>,
  options: Pick<NativeLoraOptions, 'r' | 'alpha' | 'rslora'>,
  adapterDtype: 'float32' | 'float64',
): void {
  const largest = new Map<string, number>();
  for (const [name, t] of Object.entries(tensors)) {
    if (!FLOAT_DTYPES.has(t.dtype)) {
      throw new LamerError(
        'E_CHECKPOINT',
        `${file}: tensor '${name}' is of dtype ${t.dtype}; LoRA weights are floating point (peft writes float32, float16 or bfloat16)`,
      );
    }
    const m = largestMagnitude(t, adapterDtype);
    if (Number.isNaN(m)) {
      throw new LamerError(
        'E_CHECKPOINT',
        `${file}: tensor '${name}' holds NaN or infinite values (or values beyond ${adapterDtype}'s range); the adapter is corrupt`,
      );
    }
    largest.set(name, m);
  }
  const scale = options.rslora ? options.alpha / Math.sqrt(options.r) : options.alpha / options.r;
  for (const [name, maxA] of largest) {
    if (!name.endsWith('lora_A.weight')) continue;
    const b = name.replace(/lora_A\.weight$/, 'lora_B.weight');
    const bound = scale * (largest.get(b) ?? 0) * maxA * options.r;
    if (!(bound < FLOAT32_MAX)) {
      throw new LamerError(
        'E_CHECKPOINT',
        `${file}: tensors '${name}' and '${b}' are large enough (|scale B A| up to ${bound.toExponential(2)}) that the update overflows float32`,
      );
    }
  }
}

/** The adapter_config.json peft writes for these options (fields peft reads; the others take peft's defaults). */
export function adapterConfigJson(options: NativeLoraOptions, baseModel: string | null, model: Pick<ModelConfig, 'numHiddenLayers'>): Record<string, unknown> {
  const names = [...new Set(options.modules.map((p) => p.slice(p.lastIndexOf('.') + 1)))] as LoraModule[];
  const onEveryLayer = new Set(loraModulePaths(model, names));
  const everyLayer = onEveryLayer.size === options.modules.length && options.modules.every((p) => onEveryLayer.has(p));
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    r: options.r,
    lora_alpha: options.alpha,
    lora_dropout: options.dropout,
    use_rslora: options.rslora,
    // Module names when every adapted layer has the same set, else the exact module paths (peft matches either).
    target_modules: everyLayer ? names.sort() : [...options.modules],
    bias: 'none',
    fan_in_fan_out: false,
    init_lora_weights: true,
    inference_mode: true,
    modules_to_save: null,
    use_dora: false,
    rank_pattern: {},
    alpha_pattern: {},
  };
}
