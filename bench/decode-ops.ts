// ATen operators per decode step of the engine, from the addon's operator counter (native/bridge/op_counter.cpp):
// the same requests generated with n and n + 1 new tokens, and the difference of the two counts, so the prompts'
// forward and the engine's set-up cancel out and what is left is one decode step of every row.
import { Engine } from '../src/engine/index.js';
import { parseModelConfig, type ModelConfig } from '../src/model/config.js';
import { Policy } from '../src/model/policy.js';
import { addon } from '../src/native/addon.js';
import type { NativeOpCount } from '../src/native/types.js';

/** The Qwen3-0.6B shape (SPEC §9), optionally narrowed (hidden, heads, vocab) with its 28 layers kept. */
export function qwen3_0_6bConfig(narrow = false): ModelConfig {
  return parseModelConfig({
    model_type: 'qwen3',
    vocab_size: narrow ? 1000 : 151936,
    hidden_size: narrow ? 64 : 1024,
    intermediate_size: narrow ? 128 : 3072,
    num_hidden_layers: 28,
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: narrow ? 8 : 128,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000,
    tie_word_embeddings: true,
    max_position_embeddings: 40960,
  });
}

/** The Qwen3-4B shape (36 layers, hidden 2560, 32/8 heads of 128, tied embeddings). */
export function qwen3_4bConfig(): ModelConfig {
  return parseModelConfig({
    model_type: 'qwen3',
    vocab_size: 151936,
    hidden_size: 2560,
    intermediate_size: 9728,
    num_hidden_layers: 36,
    num_attention_heads: 32,
    num_key_value_heads: 8,
    head_dim: 128,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000,
    tie_word_embeddings: true,
    max_position_embeddings: 40960,
  });
}

export interface DecodeStepOps extends Omit<NativeOpCount, 'byName'> {
  /** Top-level operators that are not views: what a step dispatches that does work. */
  work: number;
  byName: Record<string, number>;
}

/** Operators of one decode step of four rows of different lengths, greedy. */
export async function decodeStepOps(policy: Policy): Promise<DecodeStepOps> {
  const vocab = policy.config.vocabSize;
  const prompts = Array.from({ length: 4 }, (_, i) => Array.from({ length: 16 + 7 * i }, (_, j) => 5 + ((i * 31 + j * 7) % (vocab - 5))));
  const count = async (maxNewTokens: number): Promise<NativeOpCount> => {
    await using engine = new Engine(policy, { slots: 8 });
    addon().opCounterStart();
    try {
      await Promise.all(prompts.map((p) => engine.generate({ promptIds: p, maxNewTokens, temperature: 0, stopIds: [] })));
    } catch (e) {
      addon().opCounterStop();
      throw e;
    }
    return addon().opCounterStop();
  };
  await count(2); // caches the model builds on first use are not a step's work
  const [a, b] = [await count(4), await count(5)];
  const byName = Object.fromEntries(Object.keys(b.byName).flatMap((k) => (b.byName[k] !== (a.byName[k] ?? 0) ? [[k, b.byName[k] - (a.byName[k] ?? 0)]] : [])));
  const top = b.top - a.top;
  const views = b.views - a.views;
  return { top, leaves: b.leaves - a.leaves, views, work: top - views, byName };
}

/** A random model of the shape, on the CPU. */
export function randomPolicy(config: ModelConfig): Promise<Policy> {
  return Policy.init(config, { seed: 1 });
}
