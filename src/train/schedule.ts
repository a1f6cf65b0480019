// The learning-rate schedules of the optimizer (optim.schedule): constant, linear warm-up, warm-up then cosine decay.
import { LamerError } from '../errors.js';
import type { LrSchedule } from './options.js';

/** Learning rate at optimizer step `step` (0-based: the first update uses lrAt(0)). `warmup` and `cosine` ramp
 * linearly over warmupSteps (step 0 already gets lr / warmupSteps); cosine then decays to lr * minLrRatio at
 * totalSteps and stays there. */
export function lrAt(step: number, o: { lr: number; schedule: LrSchedule; warmupSteps: number; totalSteps?: number; minLrRatio?: number }): number {
  const warm = o.schedule === 'constant' ? 0 : o.warmupSteps;
  if (step < warm) return (o.lr * (step + 1)) / warm;
  if (o.schedule !== 'cosine') return o.lr;
  if (o.totalSteps === undefined) throw new LamerError('E_CONFIG', "the cosine schedule needs 'totalSteps'");
  const span = Math.max(1, o.totalSteps - warm);
  const progress = Math.min(1, (step - warm) / span);
  const min = o.minLrRatio ?? 0;
  return o.lr * (min + (1 - min) * 0.5 * (1 + Math.cos(Math.PI * progress)));
}
