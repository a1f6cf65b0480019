// ZeRO over c10d Gloo: 2 ranks at stage 1 and stage 2 take the steps that stage 0 takes and that one process takes
// (float64 model, 3 optimizer steps, clipping active in the first; GiGPO's policy loss and PPO's with a value head):
// every parameter within 1e-6 relative, both ranks bit for bit the same. Stage 1 halves the optimizer state per rank,
// stage 2 the gradients too. A stage-2 run saved after a step and resumed at 2 ranks reproduces the uninterrupted run;
// at 1 rank (re-sharded) and at stage 0 (the shards read whole) it goes on the same way. With LoRA dropout, stages 1
// and 2 draw stage 0's masks at every step.
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSingle, startRanks, type RankResult } from './ranks.js';

const script = 'test/native/distributed/child-zero.ts';

interface Out {
  metrics: { loss: number; gradNorm: number; step: number; valueLoss?: number }[];
  params: Record<string, number[]>;
  memory: { parameters: number; trainable: number; gradients: number; optimizerState: number };
  steps: number;
}

function ok(r: RankResult): void {
  if (r.code !== 0) throw new Error(`rank ${r.rank} exited ${r.code ?? r.signal}: ${r.stderr.slice(-2000)}`);
}

function maxRelDiff(a: Record<string, number[]>, b: Record<string, number[]>): number {
  let m = 0;
  expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
  for (const [name, x] of Object.entries(a)) {
    const y = b[name];
    for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i] - y[i]) / Math.max(1e-3, Math.abs(y[i])));
  }
  return m;
}

const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Out;

async function twoRanks(dir: string, tag: string, args: string[], env: Record<string, string> = {}): Promise<[Out, Out]> {
  const ranks = await startRanks(2, script, (rank) => [join(dir, `${tag}-rank${rank}.json`), ...args], env);
  (await ranks.done).forEach(ok);
  return [read(join(dir, `${tag}-rank0.json`)), read(join(dir, `${tag}-rank1.json`))];
}

async function oneProcess(dir: string, tag: string, args: string[], env: Record<string, string> = {}): Promise<Out> {
  const r = await runSingle(script, [join(dir, `${tag}.json`), ...args], env);
  ok(r);
  return read(join(dir, `${tag}.json`));
}

describe('ZeRO stages 1 and 2 (2 Gloo ranks)', () => {
  for (const loss of ['gigpo', 'ppo']) {
    it(`${loss}: stage 1 and stage 2 equal stage 0 and one process after 3 steps (clipping in the first); ranks identical; per-rank bytes`, async () => {
      const dir = mkdtempSync(join(tmpdir(), `lamer-zero-${loss}-`));
      const single = await oneProcess(dir, 'single', ['0', loss, 'run', '3']);
      const [z0] = await twoRanks(dir, 'z0', ['0', loss, 'run', '3']);
      // Clipping acted in the first step (its norm is above the threshold, 5) and not in the last.
      expect(single.metrics[0].gradNorm).toBeGreaterThan(5);
      expect(single.metrics[2].gradNorm).toBeLessThan(5);
      if (loss === 'ppo') expect(single.metrics[0].valueLoss).toBeGreaterThan(0);
      for (const stage of ['1', '2']) {
        const [r0, r1] = await twoRanks(dir, `z${stage}`, [stage, loss, 'run', '3']);
        expect(r0.steps).toBe(3);
        for (const r of [r0, r1]) {
          expect(maxRelDiff(r.params, z0.params), `stage ${stage} vs stage 0`).toBeLessThan(1e-6);
          expect(maxRelDiff(r.params, single.params), `stage ${stage} vs one process`).toBeLessThan(1e-6);
          for (let i = 0; i < 3; i++) {
            expect(Math.abs(r.metrics[i].loss - single.metrics[i].loss) / Math.abs(single.metrics[i].loss)).toBeLessThan(1e-6);
            expect(Math.abs(r.metrics[i].gradNorm - single.metrics[i].gradNorm) / single.metrics[i].gradNorm).toBeLessThan(1e-6);
          }
        }
        expect(maxRelDiff(r0.params, r1.params)).toBe(0);
        // Per rank: stage 1 holds half the AdamW state, stage 2 half the gradients too (up to the last shard's padding).
        const state = (r0.memory.optimizerState + r1.memory.optimizerState) / 2;
        expect(state / z0.memory.optimizerState).toBeGreaterThan(0.49);
        expect(state / z0.memory.optimizerState).toBeLessThan(0.51);
        const grads = r0.memory.gradients / z0.memory.gradients;
        if (stage === '1') {
          expect(grads).toBe(1);
        } else {
          expect(grads).toBeGreaterThan(0.49);
          expect(grads).toBeLessThan(0.51);
        }
      }
    }, 300_000);
  }

  it('with a LoRA adapter only the adapter is sharded: stage 2 on 2 ranks equals one process, the base untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-zero-lora-'));
    const env = { LAMER_TEST_LORA: '1' };
    const single = await oneProcess(dir, 'single', ['0', 'ppo', 'run', '3'], env);
    const [r0, r1] = await twoRanks(dir, 'z2', ['2', 'ppo', 'run', '3'], env);
    const plain = await oneProcess(dir, 'plain', ['0', 'ppo', 'run', '0']);
    expect(maxRelDiff(r0.params, single.params)).toBeLessThan(1e-6);
    expect(maxRelDiff(r0.params, r1.params)).toBe(0);
    // The base is where it started; only adapter tensors (and the value head) moved.
    const base = (o: Out) => Object.fromEntries(Object.entries(o.params).filter(([k]) => !k.includes('lora_')));
    expect(maxRelDiff(base(r0), plain.params)).toBe(0);
    // The state sharded is the adapter's and the value head's: half of one process's (2 moments of 8 bytes each).
    expect(r0.memory.optimizerState / single.memory.optimizerState).toBeGreaterThan(0.49);
    expect(r0.memory.optimizerState / single.memory.optimizerState).toBeLessThan(0.51);
    expect(single.memory.optimizerState).toBe((16 * single.memory.trainable) / 8);
  }, 300_000);

  it('LoRA dropout: stages 1 and 2 draw the masks of stage 0 at every step (the one step counter); the step metric counts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-zero-dropout-'));
    const env = { LAMER_TEST_LORA: '1', LAMER_TEST_DROPOUT: '0.3' };
    const [z0] = await twoRanks(dir, 'z0', ['0', 'gigpo', 'run', '3'], env);
    const nodrop = await oneProcess(dir, 'nodrop', ['0', 'gigpo', 'run', '3'], { LAMER_TEST_LORA: '1' });
    // Dropout acted: the masks moved the run away from the one without.
    expect(maxRelDiff(z0.params, nodrop.params)).toBeGreaterThan(1e-3);
    for (const stage of ['1', '2']) {
      const [r0, r1] = await twoRanks(dir, `z${stage}`, [stage, 'gigpo', 'run', '3'], env);
      for (const r of [r0, r1]) {
        expect(
          r.metrics.map((m) => m.step),
          `stage ${stage}`,
        ).toEqual([1, 2, 3]);
        expect(maxRelDiff(r.params, z0.params), `stage ${stage} vs stage 0`).toBeLessThan(1e-6);
      }
    }
  }, 300_000);

  it('a stage-2 run saved after step 1 resumes at 2 ranks as if uninterrupted; at 1 rank and at stage 0 it goes on the same way', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-zero-resume-'));
    const saveDir = mkdtempSync(join(tmpdir(), 'lamer-zero-saved-'));
    const [full] = await twoRanks(dir, 'full', ['2', 'ppo', 'run', '3']);
    await twoRanks(dir, 'first', ['2', 'ppo', 'save', '1', saveDir]);
    // Rank 0 wrote its shard into optimizer.safetensors and rank 1's beside it.
    expect(readdirSync(saveDir).sort()).toEqual(['optimizer.safetensors', 'optimizer.shard-00001-of-00002.safetensors', 'params.json']);
    const [a0, a1] = await twoRanks(dir, 'resumed', ['2', 'ppo', 'resume', '3', saveDir]);
    expect(a0.steps).toBe(3);
    expect(maxRelDiff(a0.params, full.params)).toBe(0);
    expect(maxRelDiff(a1.params, full.params)).toBe(0);
    // Another world size: the shards are cut anew (one process holds them all); and read whole at stage 0.
    const one = await oneProcess(dir, 'resumed-1', ['2', 'ppo', 'resume', '3', saveDir]);
    expect(maxRelDiff(one.params, full.params)).toBeLessThan(1e-6);
    const whole = await oneProcess(dir, 'resumed-stage0', ['0', 'ppo', 'resume', '3', saveDir]);
    expect(maxRelDiff(whole.params, full.params)).toBeLessThan(1e-6);
  }, 300_000);
});
