// Where the GPU benches (engine: GPU ..., train step: GPU ...) run. On a CUDA GPU, at the sizes their names give. With
// LAMER_BENCH_SMOKE=cpu, on the CPU at toy sizes instead (narrow models of 2 layers, a few short rows), so that their
// code runs end to end on a machine without a GPU before a GPU run depends on it: rows named "(smoke: CPU, toy
// sizes)", whose values mean nothing. Elsewhere they skip, saying why.
import type { ComputeDType } from '../src/model/policy.js';
import { parseModelConfig, type ModelConfig } from '../src/model/config.js';
import { addon } from '../src/native/addon.js';
import { qwen3_0_6bConfig, qwen3_4bConfig } from './decode-ops.js';
import { BenchSkipped } from './util.js';

export type GpuShape = 'qwen3-0.6b' | 'qwen3-4b';

export interface GpuTarget {
  device: 'cuda' | 'cpu';
  /** Compute dtype, and the storage dtype of weights that are not trained (inference, a LoRA base). */
  dtype: ComputeDType;
  smoke: boolean;
  /** Appended to row names: '' on a GPU. */
  tag: string;
  /** `real` on a GPU, `toy` in a smoke run. */
  size: (real: number, toy: number) => number;
  config: (shape: GpuShape) => ModelConfig;
}

function toyConfig(): ModelConfig {
  const c = qwen3_0_6bConfig(true);
  return parseModelConfig({
    model_type: 'qwen3',
    vocab_size: c.vocabSize,
    hidden_size: c.hiddenSize,
    intermediate_size: c.intermediateSize,
    num_hidden_layers: 2,
    num_attention_heads: c.numAttentionHeads,
    num_key_value_heads: c.numKeyValueHeads,
    head_dim: c.headDim,
    tie_word_embeddings: true,
  });
}

/** The target of this run; throws BenchSkipped, with the reason, when there is neither a GPU nor a smoke run. */
export function gpuTarget(): GpuTarget {
  if (process.env.LAMER_BENCH_SMOKE === 'cpu') {
    return { device: 'cpu', dtype: 'float32', smoke: true, tag: ' (smoke: CPU, toy sizes)', size: (_real, toy) => toy, config: toyConfig };
  }
  const info = addon().buildInfo();
  if (!info.cudaCompiled) throw new BenchSkipped('the addon was built without CUDA (LAMER_BENCH_SMOKE=cpu runs this bench at toy sizes on the CPU)');
  if (!info.cudaAvailable || info.cudaDeviceCount === 0) throw new BenchSkipped('the addon has CUDA but sees no GPU');
  return {
    device: 'cuda',
    dtype: 'bfloat16',
    smoke: false,
    tag: '',
    size: (real) => real,
    config: (shape) => (shape === 'qwen3-0.6b' ? qwen3_0_6bConfig() : qwen3_4bConfig()),
  };
}
