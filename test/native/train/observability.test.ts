// What an iteration records about itself on the native runtime: where its seconds went (parts that add up, with the
// unaccounted rest), the engine's occupancy and cache, CPU and memory, and the agreement of the trainer's log-probs
// with the engine's on the first step's rows (float32 on the CPU: rounding only), with its warning.
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Trainer } from '../../../src/train/trainer.js';
import { createNativeRuntime } from '../../../src/train/native-runtime.js';
import type { EvalEvent, IterationEvent, LogEvent } from '../../../src/train/events.js';
import { collect, tinyNativeConfig } from './helpers.js';
import { gpu, gpuTitle } from '../gpu.js';

describe('iteration observability (native runtime)', () => {
  it('records where the seconds went, the engine, CPU and memory, and the engine/trainer agreement', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-observe-'));
    const config = {
      ...tinyNativeConfig('observe', dir),
      train: { iterations: 2, evalEvery: 2, checkpointEvery: 0, agreementWarnKl: 1e-30 },
      eval: { tasks: 2 },
    };
    const events = await collect(new Trainer(config, { runtime: createNativeRuntime, progress: false, log: () => {} }));
    const its = events.filter((e): e is IterationEvent => e.type === 'iteration');
    expect(its).toHaveLength(2);
    for (const e of its) {
      const b = e.breakdown!;
      for (const part of [
        'prefill',
        'decode',
        'engineOther',
        'tokenize',
        'environment',
        'playPrompts',
        'advantages',
        'stage',
        'forwardBackward',
        'optimizer',
      ]) {
        expect(b[part], part).toBeGreaterThan(0);
      }
      const sum = Object.values(b).reduce((a, v) => a + v, 0);
      expect(Math.abs(sum - e.seconds)).toBeLessThan(1e-9);
      expect(e.engine!.occupancy).toBeGreaterThan(0);
      expect(e.engine!.occupancy).toBeLessThanOrEqual(1);
      expect(e.engine!.demandOccupancy).toBeLessThanOrEqual(1);
      expect(e.engine!.cacheHitRate).toBeCloseTo(e.promptTokensReused! / (e.promptTokensReused! + e.promptTokensPrefilled!), 12);
      expect(e.cpuBusy).toBeGreaterThan(0);
      expect(e.peakRssBytes).toBeGreaterThan(50 * 2 ** 20);
      expect(e.wallTime).toBeGreaterThan(1.7e9);
      // float32 forwards of the same weights: the trainer's (a prefix tree) and the engine's (a KV cache) differ by
      // rounding only.
      const a = e.agreement!;
      expect(a.tokens).toBeGreaterThan(0);
      expect(a.meanAbs).toBeLessThan(1e-5);
      expect(a.maxAbs).toBeLessThan(1e-4);
      expect(a.maxAbs).toBeGreaterThanOrEqual(a.meanAbs);
      expect(a.k3).toBeGreaterThanOrEqual(0);
      expect(a.k3).toBeLessThan(1e-8);
    }
    // Above the (here absurdly low) threshold: a warning, logged and recorded.
    const warnings = events.filter((e): e is LogEvent => e.type === 'log' && e.level === 'warn' && e.message.includes('differ from the engine'));
    expect(warnings).toHaveLength(2);
    const ev = events.find((e): e is EvalEvent => e.type === 'eval')!;
    const sum = Object.values(ev.breakdown!).reduce((a, v) => a + v, 0);
    expect(Math.abs(sum - ev.seconds!)).toBeLessThan(1e-9);
    expect(ev.breakdown!.decode).toBeGreaterThan(0);
    expect(ev.breakdown!.forwardBackward).toBeUndefined();
  }, 120_000);

  // On a GPU (scripts/device-check.sh runs this file): the same records, the caching allocator's bytes, and the
  // bf16 engine against the bf16 trainer, whose gap is rounding of another kind than the CPU's float32 one.
  it.skipIf(!gpu.ok)(
    gpuTitle('on CUDA: the time parts add up, the allocator bytes are recorded, the engine/trainer gap is small'),
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'lamer-observe-cuda-'));
      const base = tinyNativeConfig('observe-cuda', dir);
      const config = {
        ...base,
        model: { ...base.model, device: 'cuda' as const },
        train: { iterations: 2, evalEvery: 0, checkpointEvery: 0 },
        eval: { tasks: 2 },
      };
      const events = await collect(new Trainer(config, { runtime: createNativeRuntime, progress: false, log: () => {} }));
      for (const e of events.filter((x): x is IterationEvent => x.type === 'iteration')) {
        const sum = Object.values(e.breakdown!).reduce((a, v) => a + v, 0);
        expect(Math.abs(sum - e.seconds)).toBeLessThan(1e-9);
        expect(e.breakdown!.forwardBackward).toBeGreaterThan(0);
        expect(e.cuda!.allocated).toBeGreaterThan(0);
        expect(e.cuda!.reserved).toBeGreaterThanOrEqual(e.cuda!.allocated);
        expect(e.cuda!.peakAllocated).toBeGreaterThanOrEqual(e.cuda!.allocated);
        console.log(`[cuda observability] iteration ${e.iteration}: agreement ${JSON.stringify(e.agreement)}, cuda ${JSON.stringify(e.cuda)}`);
        expect(e.agreement!.k3).toBeLessThan(1e-2);
      }
    },
    300_000,
  );
});
