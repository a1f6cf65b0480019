// Resume with the real pipeline (native policy, engine with its prefix cache, optimizer state, seeded shuffles): a
// run stopped after iteration 2 and resumed from its checkpoint produces the same iteration and evaluation metrics
// as an uninterrupted run with the same seed, on the CPU: every sampled token, reward, row count and pass@k exactly;
// the training metrics to float rounding (the engine's sampling log-probs, which the loss uses as the old policy,
// depend on which requests shared a batch at the last bits, and that depends on timing).
import { describe, expect, it } from 'vitest';
import { withoutTimings } from '../../helpers/index.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Trainer } from '../../../src/train/trainer.js';
import type { TrainerConfigInput } from '../../../src/train/config.js';
import { createNativeRuntime } from '../../../src/train/native-runtime.js';
import type { IterationEvent, TrainerEvent } from '../../../src/train/events.js';
import { collect, tinyNativeConfig } from './helpers.js';

function config(runsDir: string): TrainerConfigInput {
  return { ...tinyNativeConfig('resume', runsDir), train: { iterations: 4, evalEvery: 1, checkpointEvery: 1 }, eval: { tasks: 3 } };
}

const iterations = (evs: TrainerEvent[]) => evs.filter((e): e is IterationEvent => e.type === 'iteration').map(withoutTimings);
const evals = (evs: TrainerEvent[]) => evs.filter((e) => e.type === 'eval').map(withoutTimings);

describe('resume with the native runtime', () => {
  it('a run resumed from its iteration-2 checkpoint reproduces the uninterrupted run (tokens and rewards exactly, losses to rounding)', async () => {
    const options = { runtime: createNativeRuntime, progress: false, log: () => {} };
    const full = await collect(new Trainer(config(mkdtempSync(join(tmpdir(), 'lamer-resume-a-'))), options));
    const b = mkdtempSync(join(tmpdir(), 'lamer-resume-b-'));
    await collect(new Trainer(config(b), options), { untilIteration: 2 });
    const resumed = await collect(new Trainer(config(b), options), { resume: true });
    expect(iterations(full).map((e) => e.iteration)).toEqual([1, 2, 3, 4]);
    // The updates moved the policy (the comparison is not between two frozen runs).
    const losses = iterations(full).map((e) => e.loss);
    expect(losses.every(Number.isFinite)).toBe(true);
    const floats = ['loss', 'approxKl', 'entropy', 'gradNorm', 'clipFraction'] as const;
    const discrete = (e: ReturnType<typeof iterations>[number]) => {
      const copy: Record<string, unknown> = { ...e };
      for (const k of floats) delete copy[k];
      return copy;
    };
    const a = iterations(full).slice(2);
    const r = iterations(resumed);
    expect(r.map(discrete)).toEqual(a.map(discrete));
    expect(r.map(discrete)[0]).toHaveProperty('tokens');
    for (let i = 0; i < a.length; i++) {
      for (const k of floats) {
        const scale = Math.max(1e-3, Math.abs(a[i][k]));
        expect(Math.abs(r[i][k] - a[i][k]) / scale, `iteration ${a[i].iteration} ${k}`).toBeLessThan(1e-4);
      }
    }
    expect(evals(resumed)).toEqual(evals(full).slice(2));
  }, 300_000);
});
