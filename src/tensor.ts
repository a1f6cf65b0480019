// Tensor: a JS handle on a native (libtorch) tensor. `data` is a typed array over the tensor's own memory for
// CPU tensors (no copy): writes through it are seen by native ops and native writes are seen through it.
// dispose() (or `using t = ...`) releases the native tensor and detaches every view, so a view read after
// dispose has length 0 and never touches freed memory.
import { addon } from './native/addon.js';
import type { NativeDType, NativeTensor } from './native/types.js';
import { LamerError } from './errors.js';

export type DType = NativeDType;
export type DeviceName = 'cpu' | 'cuda' | `cuda:${number}`;

export interface TypedArrayByDType {
  float32: Float32Array;
  float64: Float64Array;
  int32: Int32Array;
  int64: BigInt64Array;
  uint8: Uint8Array;
  bool: Uint8Array;
  float16: Uint16Array;
  bfloat16: Uint16Array;
}
export type TypedArrayFor<D extends DType> = TypedArrayByDType[D];
export type TensorSource = Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array | Uint16Array;

export interface TensorOptions<D extends DType = DType> {
  dtype?: D;
  device?: DeviceName;
}

/** The dtype a typed array maps to when none is given. */
export type DTypeOfSource<S> = S extends Float32Array
  ? 'float32'
  : S extends Float64Array
    ? 'float64'
    : S extends Int32Array
      ? 'int32'
      : S extends BigInt64Array
        ? 'int64'
        : S extends Uint8Array
          ? 'uint8'
          : DType;

let warnedCopy = false;

function inferDType(data: TensorSource): DType {
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Float64Array) return 'float64';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof BigInt64Array) return 'int64';
  if (data instanceof Uint8Array) return 'uint8';
  if (data instanceof Uint16Array) {
    throw new LamerError('E_ARG', 'a Uint16Array holds raw float16 or bfloat16 bits: pass { dtype: "float16" } or "bfloat16"');
  }
  throw new LamerError('E_ARG', 'Tensor.from needs a Float32Array, Float64Array, Int32Array, BigInt64Array, Uint8Array or Uint16Array');
}

export class Tensor<D extends DType = DType> {
  readonly #native: NativeTensor;

  /** @internal Wraps a native handle; use the static constructors. */
  constructor(native: NativeTensor) {
    this.#native = native;
  }

  /** A new CPU tensor holding a copy of `data` (JS memory is only lent to native code for the call). */
  static from<S extends TensorSource, D extends DType = DTypeOfSource<S>>(data: S, options: { shape?: number[]; dtype?: D } = {}): Tensor<D> {
    const dtype = options.dtype ?? inferDType(data);
    const shape = options.shape ?? [data.length];
    // Native code cannot borrow shared memory: an array over a SharedArrayBuffer is copied to a plain one first.
    const plain = typeof SharedArrayBuffer !== 'undefined' && data.buffer instanceof SharedArrayBuffer ? (data.slice() as S) : data;
    return new Tensor<D>(addon().tensorFromTypedArray(plain, shape, dtype));
  }

  /** A tensor of `shape` filled with `value`. */
  static full<D extends DType = 'float32'>(shape: number[], value: number, options: TensorOptions<D> = {}): Tensor<D> {
    return new Tensor<D>(addon().full(shape, value, options.dtype ?? 'float32', options.device ?? 'cpu'));
  }

  static zeros<D extends DType = 'float32'>(shape: number[], options: TensorOptions<D> = {}): Tensor<D> {
    return Tensor.full<D>(shape, 0, options);
  }

  /** Standard normal samples; the same seed gives the same values. */
  static randn<D extends DType = 'float32'>(shape: number[], options: TensorOptions<D> & { seed?: number } = {}): Tensor<D> {
    const seed = options.seed ?? 0;
    if (!Number.isSafeInteger(seed) || seed < 0) throw new LamerError('E_ARG', `randn: seed must be an integer in [0, 2^53), found ${seed}`);
    return new Tensor<D>(addon().randn(shape, options.dtype ?? 'float32', options.device ?? 'cpu', seed));
  }

  /** @internal The native handle, for other wrappers of the addon. */
  get native(): NativeTensor {
    return this.#native;
  }

  get shape(): number[] {
    return this.#live('shape').shape;
  }

  get dtype(): D {
    return this.#live('dtype').dtype as D;
  }

  get device(): string {
    return this.#live('device').device;
  }

  get numel(): number {
    return this.#live('numel').numel;
  }

  /** The native tensor, or E_DISPOSED naming what was asked of a disposed one. */
  #live(what: string): NativeTensor {
    if (this.#native.disposed) throw new LamerError('E_DISPOSED', `tensor.${what}: the tensor was disposed`);
    return this.#native;
  }

  get disposed(): boolean {
    return this.#native.disposed;
  }

  /**
   * The elements as a typed array over the tensor's memory (CPU, contiguous tensors). bool reads as Uint8Array,
   * float16/bfloat16 as raw Uint16Array bits. The same array is returned on every access.
   */
  get data(): TypedArrayFor<D> {
    const view = this.#native.data;
    if (!warnedCopy && !this.#native.dataIsView) {
      warnedCopy = true;
      process.emitWarning('this Node.js build refuses external array buffers, so Tensor.data is a copy: writes to it are not seen by native code', {
        code: 'LAMER_TENSOR_COPY',
      });
    }
    return view as TypedArrayFor<D>;
  }

  /** The elements as plain numbers (a copy). */
  toArray(): number[] {
    return Array.from(this.data as ArrayLike<number | bigint>, Number);
  }

  /** The same values on another device and/or dtype (a new tensor; this one is unchanged). */
  async to<D2 extends DType = D>(device: DeviceName, dtype?: D2): Promise<Tensor<D2>> {
    return new Tensor<D2>(await addon().toDevice(this.#native, device, dtype));
  }

  clone(): Tensor<D> {
    return new Tensor<D>(addon().clone(this.#native));
  }

  /** Sum of all elements, accumulated in float64. */
  sum(): number {
    return addon().sum(this.#native);
  }

  fill_(value: number): this {
    addon().fill_(this.#native, value);
    return this;
  }

  mul_(value: number): this {
    addon().mulScalar_(this.#native, value);
    return this;
  }

  /** Matrix product, computed on the device's executor thread. */
  async matmul(other: Tensor): Promise<Tensor> {
    if (!(other instanceof Tensor))
      throw new LamerError('E_ARG', `matmul: the other operand must be a Tensor, found ${other === null ? 'null' : typeof other}`);
    return new Tensor(await addon().matmul(this.#native, other.#native));
  }

  /** Releases the native tensor now; views are detached first. Safe to call twice. */
  dispose(): void {
    this.#native.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** Native tensors held by JS handles that are neither disposed nor collected: for leak tests. */
export function liveTensorCount(): number {
  return addon().liveTensors();
}
