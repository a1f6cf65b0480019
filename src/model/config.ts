// config.json of a Hugging Face Qwen3 / Qwen2 / Llama checkpoint, parsed and validated at the door (SPEC §9).
// The native decoder receives only the plain numbers of `toNativeConfig`; every question about the JSON (which of two
// spellings, which default) is answered here, once, with an E_CHECKPOINT error naming the file, the field, what was
// expected and what was found.
import { LamerError } from '../errors.js';
import { MODEL_TYPES, type ModelType, type NativeModelConfig } from '../native/types.js';

export type { ModelType };

const isModelType = (v: unknown): v is ModelType => (MODEL_TYPES as readonly unknown[]).includes(v);
export type CheckpointDType = 'float32' | 'bfloat16' | 'float16';

/** A checkpoint's config.json as the model reads it: the decoder's fields (NativeModelConfig, with llama3 RoPE scaling
 * as one object) and what the tokenizer, saving and generation need. */
export interface ModelConfig extends Omit<NativeModelConfig, 'ropeFactor' | 'ropeLowFreqFactor' | 'ropeHighFreqFactor' | 'ropeOriginalMaxPositionEmbeddings'> {
  /** llama3 RoPE scaling; null for plain RoPE. */
  ropeLlama3: { factor: number; lowFreqFactor: number; highFreqFactor: number; originalMaxPositionEmbeddings: number } | null;
  maxPositionEmbeddings: number;
  /** The dtype the weights are stored in (`dtype`, or the older `torch_dtype`). */
  dtype: CheckpointDType;
  bosTokenId: number | null;
  /** eos_token_id as a list (configs write a number or a list). */
  eosTokenIds: number[];
  padTokenId: number | null;
  /** The config.json object as read, written back on save so fields this project does not use survive. */
  raw: Record<string, unknown>;
}

type Json = Record<string, unknown>;

function describe(v: unknown): string {
  if (v === undefined) return 'nothing (the field is missing)';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array ${JSON.stringify(v).slice(0, 60)}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${JSON.stringify(v)}`;
}

class Reader {
  constructor(
    readonly file: string,
    readonly json: Json,
  ) {}

  fail(field: string, expected: string, found: unknown): never {
    throw new LamerError('E_CHECKPOINT', `${this.file}: field '${field}': expected ${expected}, found ${describe(found)}`);
  }

  int(field: string, min = 1, value: unknown = this.json[field]): number {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) this.fail(field, `an integer >= ${min}`, value);
    return value;
  }

  optionalInt(field: string, min: number): number | undefined {
    const v = this.json[field];
    return v === undefined || v === null ? undefined : this.int(field, min, v);
  }

  positive(field: string, value: unknown): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) this.fail(field, 'a positive number', value);
    return value;
  }

  /** A number in [min, max]: a value outside the range a real model uses would turn the math into NaN or garbage. */
  within(field: string, value: unknown, min: number, max: number): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) this.fail(field, `a number in [${min}, ${max}]`, value);
    return value;
  }

  bool(field: string, fallback: boolean): boolean {
    const v = this.json[field];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'boolean') this.fail(field, 'true or false', v);
    return v;
  }
}

function tokenIds(r: Reader, field: string, vocab: number): number[] {
  const v = r.json[field];
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.map((x) => {
    if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x >= vocab) r.fail(field, `a token id or a list of token ids in [0, ${vocab})`, v);
    return x;
  });
}

/** Parses and validates a config.json object. `file` names it in errors. */
export function parseModelConfig(json: unknown, file = 'config.json'): ModelConfig {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new LamerError('E_CHECKPOINT', `${file}: expected a JSON object, found ${describe(json)}`);
  }
  const r: Reader = new Reader(file, json as Json);
  const j = r.json;
  const modelType = j.model_type;
  if (!isModelType(modelType)) {
    r.fail('model_type', `one of ${MODEL_TYPES.map((t) => `"${t}"`).join(', ')}`, modelType);
  }
  const act = j.hidden_act ?? 'silu';
  if (act !== 'silu') r.fail('hidden_act', '"silu" (the only activation these decoders use)', act);
  if (j.use_sliding_window === true) r.fail('use_sliding_window', 'false (sliding-window attention is not supported)', true);

  const vocabSize = r.int('vocab_size');
  const hiddenSize = r.int('hidden_size');
  const intermediateSize = r.int('intermediate_size');
  const numHiddenLayers = r.int('num_hidden_layers');
  const numAttentionHeads = r.int('num_attention_heads');
  const numKeyValueHeads = r.optionalInt('num_key_value_heads', 1) ?? numAttentionHeads;
  if (numAttentionHeads % numKeyValueHeads !== 0) {
    r.fail('num_key_value_heads', `a divisor of num_attention_heads (${numAttentionHeads})`, numKeyValueHeads);
  }
  let headDim = r.optionalInt('head_dim', 2);
  if (headDim === undefined) {
    if (hiddenSize % numAttentionHeads !== 0) {
      r.fail('head_dim', `a value, since hidden_size ${hiddenSize} is not a multiple of num_attention_heads`, undefined);
    }
    headDim = hiddenSize / numAttentionHeads;
  }
  if (headDim % 2 !== 0) r.fail('head_dim', 'an even number (RoPE rotates pairs of dimensions)', headDim);

  const eps = j.rms_norm_eps ?? 1e-6;
  const rmsNormEps = r.positive('rms_norm_eps', eps);
  r.within('rms_norm_eps', rmsNormEps, 1e-12, 1);

  // RoPE: transformers 5 writes rope_parameters {rope_theta, rope_type, ...}; older files write rope_theta at the top
  // and scaling in rope_scaling {type | rope_type, ...}.
  const params = (j.rope_parameters ?? j.rope_scaling ?? null) as Json | null;
  if (params !== null && (typeof params !== 'object' || Array.isArray(params))) {
    r.fail(j.rope_parameters !== undefined ? 'rope_parameters' : 'rope_scaling', 'an object', params);
  }
  const paramsField = j.rope_parameters !== undefined ? 'rope_parameters' : 'rope_scaling';
  const thetaValue = (params?.rope_theta as unknown) ?? j.rope_theta ?? (j.rope_parameters === undefined ? 10000 : undefined);
  if (thetaValue === undefined) r.fail('rope_parameters.rope_theta', 'a positive number', undefined);
  // Below 1 the inverse frequencies exceed 1 and overflow for small thetas (1e-300 gave NaN log-probs).
  const ropeTheta = r.within(j.rope_theta !== undefined ? 'rope_theta' : 'rope_parameters.rope_theta', thetaValue, 1, 1e12);
  const ropeType = (params?.rope_type ?? params?.type ?? 'default') as unknown;
  let ropeLlama3: ModelConfig['ropeLlama3'] = null;
  if (ropeType === 'llama3') {
    const p = params as Json;
    const num = (k: string, fallback?: number): number => r.positive(`${paramsField}.${k}`, p[k] ?? fallback);
    ropeLlama3 = {
      factor: num('factor'),
      lowFreqFactor: num('low_freq_factor', 1),
      highFreqFactor: num('high_freq_factor', 4),
      originalMaxPositionEmbeddings: r.int(`${paramsField}.original_max_position_embeddings`, 1, p.original_max_position_embeddings),
    };
    // The factor divides the long wavelengths' frequencies; the band between the two wavelengths must be non-empty.
    r.within(`${paramsField}.factor`, ropeLlama3.factor, 1, 1e6);
    if (!(ropeLlama3.highFreqFactor > ropeLlama3.lowFreqFactor)) {
      r.fail(`${paramsField}.high_freq_factor`, `a value above low_freq_factor (${ropeLlama3.lowFreqFactor})`, ropeLlama3.highFreqFactor);
    }
  } else if (ropeType !== 'default') {
    r.fail(`${paramsField}.rope_type`, '"default" or "llama3" (other RoPE scalings are not supported)', ropeType);
  }

  const dtypeValue = j.dtype ?? j.torch_dtype ?? 'float32';
  if (dtypeValue !== 'float32' && dtypeValue !== 'bfloat16' && dtypeValue !== 'float16') {
    r.fail(j.dtype !== undefined ? 'dtype' : 'torch_dtype', '"float32", "bfloat16" or "float16"', dtypeValue);
  }

  // Qwen2 always has q/k/v biases and no o bias; Llama and Qwen3 put a bias on all four when attention_bias is set.
  const attentionBias = r.bool('attention_bias', false);
  const qkvBias = modelType === 'qwen2' ? true : attentionBias;
  const oBias = modelType === 'qwen2' ? false : attentionBias;
  const mlpBias = modelType === 'llama' ? r.bool('mlp_bias', false) : false;

  const bos = tokenIds(r, 'bos_token_id', vocabSize);
  const pad = tokenIds(r, 'pad_token_id', vocabSize);
  return {
    modelType,
    vocabSize,
    hiddenSize,
    intermediateSize,
    numHiddenLayers,
    numAttentionHeads,
    numKeyValueHeads,
    headDim,
    rmsNormEps,
    ropeTheta,
    ropeLlama3,
    // transformers' default when the field is absent.
    tieWordEmbeddings: r.bool('tie_word_embeddings', false),
    qkNorm: modelType === 'qwen3',
    qkvBias,
    oBias,
    mlpBias,
    maxPositionEmbeddings: r.optionalInt('max_position_embeddings', 1) ?? 32768,
    dtype: dtypeValue,
    bosTokenId: bos[0] ?? null,
    eosTokenIds: tokenIds(r, 'eos_token_id', vocabSize),
    padTokenId: pad[0] ?? null,
    raw: { ...j },
  };
}

export function toNativeConfig(c: ModelConfig): NativeModelConfig {
  return {
    modelType: c.modelType,
    vocabSize: c.vocabSize,
    hiddenSize: c.hiddenSize,
    intermediateSize: c.intermediateSize,
    numHiddenLayers: c.numHiddenLayers,
    numAttentionHeads: c.numAttentionHeads,
    numKeyValueHeads: c.numKeyValueHeads,
    headDim: c.headDim,
    rmsNormEps: c.rmsNormEps,
    ropeTheta: c.ropeTheta,
    tieWordEmbeddings: c.tieWordEmbeddings,
    qkNorm: c.qkNorm,
    qkvBias: c.qkvBias,
    oBias: c.oBias,
    mlpBias: c.mlpBias,
    ropeFactor: c.ropeLlama3?.factor ?? 0,
    ropeLowFreqFactor: c.ropeLlama3?.lowFreqFactor ?? 1,
    ropeHighFreqFactor: c.ropeLlama3?.highFreqFactor ?? 4,
    ropeOriginalMaxPositionEmbeddings: c.ropeLlama3?.originalMaxPositionEmbeddings ?? 8192,
  };
}

/** Parameter count implied by a config (tied embeddings counted once). */
export function parameterCount(c: ModelConfig): number {
  const q = c.numAttentionHeads * c.headDim;
  const kv = c.numKeyValueHeads * c.headDim;
  const perLayer =
    2 * c.hiddenSize +
    c.hiddenSize * (q + 2 * kv) +
    (c.qkvBias ? q + 2 * kv : 0) +
    q * c.hiddenSize +
    (c.oBias ? c.hiddenSize : 0) +
    (c.qkNorm ? 2 * c.headDim : 0) +
    3 * c.hiddenSize * c.intermediateSize +
    (c.mlpBias ? 2 * c.intermediateSize + c.hiddenSize : 0);
  return c.vocabSize * c.hiddenSize * (c.tieWordEmbeddings ? 1 : 2) + c.numHiddenLayers * perLayer + c.hiddenSize;
}
