// The native backend of computeAdvantages: the C++ kernel in native/algo, called synchronously over the table's
// typed arrays (lent for the call only, no copies; see native/algo/binding.cpp for why synchronous).
import { LamerError } from '../errors.js';
import { addon } from '../native/addon.js';
import type { NativeAdvantageColumns, NativeAdvantageParams } from '../native/types.js';
import type { ResolvedAdvantageOptions } from './options.js';
import type { AdvantageResult } from './reference.js';

/** The columns the kernel reads; `stepKey` is the interned anchor id or a similarity cluster id. */
export type KernelColumns = NativeAdvantageColumns;

function kernelParams(o: ResolvedAdvantageOptions): NativeAdvantageParams {
  return {
    estimator: o.estimator,
    returns: o.returns,
    gammaStep: o.gammaStep,
    gammaTraj: o.gammaTraj,
    invalidPenalty: o.invalidPenalty,
    divideByStd: o.estimator === 'gigpo' ? o.mode === 'mean_std_norm' : o.normByStd,
    omega: o.omega,
    eps: o.eps,
  };
}

function outputsFor(rows: number, out?: AdvantageResult): AdvantageResult {
  return (
    out ?? {
      episodeReward: new Float32Array(rows),
      stepReturn: new Float32Array(rows),
      advantage: new Float32Array(rows),
    }
  );
}

/**
 * Runs the CPU kernel. The kernel validates the rows (E_ROWS naming column and row). `out`, when given, receives the
 * results in place (its arrays must have one element per row), so a caller running every iteration can reuse them.
 */
export function nativeAdvantages(columns: KernelColumns, options: ResolvedAdvantageOptions, out?: AdvantageResult): AdvantageResult {
  const result = outputsFor(columns.group.length, out);
  addon().computeAdvantages(columns, kernelParams(options), result);
  return result;
}

/** True when the addon was built with CUDA (the GPU kernel exists; a GPU may still be absent at run time). */
export function cudaKernelCompiled(): boolean {
  return typeof addon().computeAdvantagesCuda === 'function';
}

/** The CUDA kernel from host arrays (copies to the GPU and back); for checking it against the CPU kernel. */
export function nativeAdvantagesCuda(columns: KernelColumns, options: ResolvedAdvantageOptions): AdvantageResult {
  const fn = addon().computeAdvantagesCuda;
  if (!fn) throw new LamerError('E_NATIVE', 'the addon was built without CUDA: the CUDA advantage kernel is not there');
  const result = outputsFor(columns.group.length);
  fn(columns, kernelParams(options), result);
  return result;
}
