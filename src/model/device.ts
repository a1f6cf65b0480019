// Which device a run uses. `auto` (the default of model.device) is CUDA when the addon was built with CUDA and sees a
// GPU, else the CPU, so `npm run train` on a CUDA machine trains on the GPU and the same config still runs anywhere.
import { addon } from '../native/addon.js';
import type { DeviceName } from '../tensor.js';

export type DeviceChoice = DeviceName | 'auto';

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
