// Types of the raw addon exports: the only description of what build/Release/lamer.node provides.
// Everything else in src/ goes through typed wrappers (src/tensor.ts, ...), never through these directly.

export type NativeDType = 'float32' | 'float64' | 'int32' | 'int64' | 'uint8' | 'bool' | 'float16' | 'bfloat16';

export interface NativeTensor {
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
  cudaCompiled: boolean;
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

export interface NativeAddon {
  /** Names of the concerns that registered exports, in registration order. */
  concerns: string[];
  NativeTensor: abstract new (...args: never[]) => NativeTensor;
  liveTensors(): number;
  tensorFromTypedArray(data: ArrayBufferView, shape: number[], dtype: NativeDType): NativeTensor;
  buildInfo(): NativeBuildInfo;
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
  /** Exports added by other concerns (algo, model, engine, train) are typed in their own modules' wrappers. */
  [name: string]: unknown;
}
