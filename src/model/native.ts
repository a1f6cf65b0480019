// Types of the model concern's raw addon exports (native/model/binding.cpp). Only src/model/ uses them.
import { addon } from '../native/addon.js';
import type { NativeDType, NativeTensor } from '../native/types.js';
import type { NativeModelConfig } from './config.js';

/** A loaded decoder on one device. Other concerns (engine, train) pass this handle to their own native calls. */
export interface NativeModel {
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
  saveShard(path: string, names: string[], dtype: NativeDType | null, metadata: Record<string, string>): Promise<void>;
  dispose(): void;
}

export interface SafetensorsContents {
  tensors: Record<string, NativeTensor>;
  metadata: Record<string, string>;
  /** Tensor names in header order. */
  order: string[];
}

export interface ModelNative {
  modelLoad(dir: string, config: NativeModelConfig, device: string, dtype: NativeDType, paramDtype: NativeDType): Promise<NativeModel>;
  modelInit(
    config: NativeModelConfig,
    device: string,
    dtype: NativeDType,
    paramDtype: NativeDType,
    seed: number,
    std: number,
  ): Promise<NativeModel>;
  safetensorsRead(path: string): SafetensorsContents;
  safetensorsWrite(
    path: string,
    names: string[],
    tensors: NativeTensor[],
    dtype: NativeDType | null,
    metadata: Record<string, string>,
  ): Promise<void>;
}

export function modelNative(): ModelNative {
  return addon() as unknown as ModelNative;
}
