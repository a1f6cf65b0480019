// The decoder's fused operators (native/model/fused_ops.h: rotary, swiglu, kv_write; one kernel each on a GPU) equal
// their composite ATen forms, which the training forward runs with autograd: on the CPU, where the fused operators run
// those forms themselves, exactly; on CUDA, within one rounding of the storage type. And a decode step dispatches the
// few hundred operators the fusion is for (counted by the addon's operator counter, views apart).
import { describe, expect, it } from 'vitest';
import { addon } from '../../src/native/addon.js';
import { decodeStepOps, qwen3_0_6bConfig, randomPolicy } from '../../bench/decode-ops.js';
import { gpu, gpuTitle } from '../gpu.js';

describe('fused decoder operators', () => {
  it('equal their composite forms on the CPU (float32 and float64)', () => {
    for (const dtype of ['float32', 'float64'] as const) {
      for (const seed of [1, 2, 3]) {
        const { decodeAttention, ...fused } = addon().fusedOpGaps('cpu', dtype, seed);
        expect(fused, `${dtype} seed ${seed}`).toEqual({ rotary: 0, swiglu: 0, kvWrite: 0 });
        // Decode attention (masked sdpa on the CPU) against a float64 softmax over each row's own columns.
        expect(decodeAttention, `${dtype} seed ${seed}`).toBeLessThan(dtype === 'float32' ? 1e-5 : 1e-12);
      }
    }
  });

  it.skipIf(!gpu.ok)(gpuTitle('equal their composite forms on CUDA within one rounding'), () => {
    for (const [dtype, tolerance] of [
      ['float32', 1e-5],
      ['bfloat16', 0.05],
    ] as const) {
      const g = addon().fusedOpGaps('cuda', dtype, 7);
      expect(g.rotary, dtype).toBeLessThan(tolerance);
      expect(g.swiglu, dtype).toBeLessThan(tolerance);
      expect(g.kvWrite, dtype).toBe(0);
      // The memory-efficient kernel over live columns only, against the float64 softmax over them.
      expect(g.decodeAttention, dtype).toBeLessThan(tolerance);
    }
  });

  it('a decode step of a 28-layer Qwen3 dispatches at most 360 operators that are not views', async () => {
    // The Qwen3-0.6B layout (28 layers, 16/8 heads, q/k norms, tied head) with narrow widths: the count depends on
    // the layers and the code, not on the widths. Before the fusion it was 1,608.
    const policy = await randomPolicy(qwen3_0_6bConfig(true));
    try {
      const ops = await decodeStepOps(policy);
      expect(ops.work).toBeGreaterThan(28 * 8);
      expect(ops.work).toBeLessThanOrEqual(360);
      for (const op of ['lamer::rotary', 'lamer::swiglu', 'lamer::kv_write_', 'lamer::decode_attention']) expect(ops.byName[op], op).toBe(28);
    } finally {
      policy.dispose();
    }
  }, 120_000);
});

// native/model/attention.h: the attention of prompts, scoring and the train step passes grouped key/value heads to sdpa
// shared (enable_gqa) or repeated to the query heads, whichever keeps sdpa on a fused kernel; both must give the same
// numbers, forward and backward.
describe('sequence attention', () => {
  it('shared and repeated key/value heads give the same outputs and gradients on the CPU, which keeps them shared', () => {
    for (const [dtype, tolerance] of [
      ['float64', 1e-12],
      ['float32', 1e-5],
    ] as const) {
      for (const seed of [1, 2]) {
        const c = addon().attentionCheck('cpu', dtype, seed);
        expect(c.gap, `${dtype} seed ${seed}`).toBeLessThan(tolerance);
        expect(c.masked.heads).toBe('shared');
        expect(c.causal.heads).toBe('shared');
      }
    }
  });

  it.skipIf(!gpu.ok)(gpuTitle('on CUDA, masked and causal grouped-query attention with gradients run a fused kernel, not math'), () => {
    for (const [dtype, tolerance] of [
      ['bfloat16', 0.05],
      ['float32', 1e-4],
    ] as const) {
      const c = addon().attentionCheck('cuda', dtype, 3);
      expect(c.gap, dtype).toBeLessThan(tolerance);
      expect(c.masked.backend, `${dtype} masked (${c.masked.heads} heads)`).not.toBe('math');
      expect(c.causal.backend, `${dtype} causal (${c.causal.heads} heads)`).not.toBe('math');
    }
  });
});
