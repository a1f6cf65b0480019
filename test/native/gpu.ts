// Whether the tests that need a GPU can run here, and if not, why: the reason goes into the skipped test's name, so a
// CUDA build on a machine without a GPU reports each skip as such rather than passing quietly.
import { addon } from '../../src/native/addon.js';

export interface GpuHere {
  ok: boolean;
  /** Empty when ok; otherwise "skipped: ..." naming what is missing. */
  reason: string;
  /** The addon has the .cu kernels (built with nvcc). */
  kernels: boolean;
}

export const gpu: GpuHere = (() => {
  const info = addon().buildInfo();
  const kernels = info.cudaKernels;
  if (!info.cudaCompiled) return { ok: false, reason: 'skipped: the addon was built without CUDA', kernels };
  if (!info.cudaAvailable || info.cudaDeviceCount === 0) return { ok: false, reason: 'skipped: CUDA build, but no GPU is visible', kernels };
  return { ok: true, reason: '', kernels };
})();

/** A test title with the skip reason appended when no GPU is here. */
export function gpuTitle(title: string): string {
  return gpu.ok ? title : `${title} (${gpu.reason})`;
}
