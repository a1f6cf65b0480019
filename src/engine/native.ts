// Types of the engine concern's raw addon exports (native/engine/binding.cpp). Only src/engine/ uses them.
import { addon } from '../native/addon.js';
import type { NativeTensor } from '../native/types.js';
import type { NativeModel } from '../model/native.js';

export interface NativeSamplingParams {
  /** 0: greedy. */
  temperature?: number;
  /** In (0, 1]; 1 keeps everything. */
  topP?: number;
  /** 0 or less: no cut. */
  topK?: number;
}

export interface NativeEngineRequest extends NativeSamplingParams {
  /** Unique among the engine's live requests. */
  id: number;
  prompt: Int32Array;
  maxNewTokens: number;
  stopIds?: Int32Array;
  /** Integer in [0, 2^53). */
  seed?: number;
}

export interface NativeEmitted {
  id: number;
  /** Tokens sampled in this step (a stop id that ended the request included). */
  tokens: Int32Array;
  /** log_softmax(logits / T)[token] of each, without top-k/top-p. */
  logprobs: Float32Array;
  finish: 'stop' | 'length' | null;
}

export interface NativeStepResult {
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
  /** Prompts, and their tokens, the prefix cache holds after the call. */
  prefixEntries: number;
  prefixTokens: number;
  /** Tokens each slot of the KV cache holds (grows, moving the cache, only for a longer request than any before). */
  capacity: number;
  /** Of this call's decode steps, those replayed from a captured CUDA graph. */
  graphSteps: number;
  /** CUDA graphs the engine holds now. */
  graphs: number;
  /** Whether decode steps are captured as CUDA graphs (CUDA, option on, no failed capture). */
  graphsEnabled: boolean;
  /** Why CUDA graph capture was turned off, once it has been. */
  graphError?: string;
}

export interface NativeEngine {
  readonly disposed: boolean;
  /** `clearPrefixCache` empties the prefix cache before the step. */
  step(add: NativeEngineRequest[], cancel: number[], maxSteps: number, clearPrefixCache?: boolean): Promise<NativeStepResult>;
  dispose(): void;
}

export interface EngineNative {
  createEngine(
    model: NativeModel,
    options?: { prefillTokens?: number; prefixCacheBytes?: number; slots?: number; cudaGraphs?: boolean; slotLayout?: 'packed' | 'fixed' },
  ): NativeEngine;
  engineSample(logits: NativeTensor, params: NativeSamplingParams[], uniforms: Float64Array): { tokens: Int32Array; logprobs: Float32Array };
  engineUniform(seed: number, n: number): number;
}

export function engineNative(): EngineNative {
  return addon() as unknown as EngineNative;
}
