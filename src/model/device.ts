// Which device a run uses, and what depends on it, decided here once. `auto` (the default of model.device) is CUDA when
// the addon was built with CUDA and sees a GPU, else the CPU, so `npm run train` on a CUDA machine trains on the GPU
// and the same config still runs anywhere. The device profile holds every device-dependent default: compute and
// parameter dtypes, decode steps per engine call, the KV cache's slot layout, and the logit-chunk size of the train
// step (torch's thread count is the addon's: the machine's cores, or LAMER_THREADS).
import { addon } from '../native/addon.js';
import type { SlotLayout } from '../native/types.js';
import type { DeviceName } from '../tensor.js';

export type DeviceChoice = DeviceName | 'auto';
export type ComputeDType = 'float32' | 'bfloat16';

export interface ResolvedDevice {
  device: DeviceName;
  /** Why this device, in words (for the job's first log line and `lamer doctor`). */
  reason: string;
}

export function resolveDevice(choice: DeviceChoice | string): ResolvedDevice {
  if (choice !== 'auto') return { device: choice as DeviceName, reason: `model.device: ${choice}` };
  const info = addon().buildInfo();
  if (info.cudaCompiled && info.cudaAvailable && info.cudaDeviceCount > 0) {
    return { device: 'cuda', reason: `model.device auto: the addon has CUDA and sees ${info.cudaDeviceCount} GPU(s)` };
  }
  const why = !info.cudaCompiled ? 'the addon was built without CUDA' : 'the addon has CUDA but sees no GPU';
  return { device: 'cpu', reason: `model.device auto: ${why}` };
}

export interface DeviceProfile {
  /** Compute dtype of the forward: float32 on the CPU (no fast bf16 matmuls there), bfloat16 on CUDA. */
  computeDtype: ComputeDType;
  /** Parameters kept as fp32 master weights whatever the compute dtype (CUDA); else stored in the compute dtype. */
  fp32Masters: boolean;
  /**
   * Decode steps per engine call: 1 on the CPU (a new request joins at the very next step, and reading a token back
   * is free); 8 on CUDA, where tokens cross to the host once per call.
   */
  stepsPerCall: number;
  /** KV-cache slots: packed on the CPU (each step decodes exactly the live rows); fixed on CUDA, as CUDA graphs need. */
  slotLayout: SlotLayout;
  /** Logit bytes per chunk of the train step's log-probs: small on the CPU (cache-friendly), larger on a GPU. */
  logitChunkBytes: number;
}

/** The profile of a device name (`cpu`, `cuda`, `cuda:N`). */
export function deviceProfile(device: string): DeviceProfile {
  const cuda = device.startsWith('cuda');
  return cuda
    ? { computeDtype: 'bfloat16', fp32Masters: true, stepsPerCall: 8, slotLayout: 'fixed', logitChunkBytes: 512 * 2 ** 20 }
    : { computeDtype: 'float32', fp32Masters: false, stepsPerCall: 1, slotLayout: 'packed', logitChunkBytes: 64 * 2 ** 20 };
}
