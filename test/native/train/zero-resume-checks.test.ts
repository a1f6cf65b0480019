// A ZeRO resume checks what it reads against what wrote it (docs/distributed.md): each shard's rank, world size,
// chunking, step and save against the main file's, the chunking against the world size, every tensor's length and
// dtype, finite moments and non-negative second moments, and a stage-0 state's parameter set in both directions.
// Sharded sets are made here from a one-rank stage-1 save cut as ZeroAdamW::Save cuts them (rank 0's chunk in the
// main file, rank r's in optimizer.shard-r-of-W), and a well-formed cut loads and steps exactly as the original.
import { afterAll, describe, expect, it } from 'vitest';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Optimizer } from '../../../src/train/optimizer.js';
import type { TrainRow } from '../../../src/train/batch.js';
import { LamerError } from '../../../src/errors.js';
import { removeTempDirs, tempDir } from '../../helpers/index.js';
import { cutZeroSave, readSafetensors, writeSafetensors, zeroShardName, type Safetensors, type SafetensorsEntry as Entry } from '../../helpers/safetensors.js';
import { maxParamDiff, snapshot, tinyPolicy } from './step-helpers.js';
import { randomIds, rng } from '../../helpers/index.js';

afterAll(removeTempDirs);

const readSt = readSafetensors;
const writeSt = writeSafetensors;
const shardName = zeroShardName;
const cut = cutZeroSave;

function rowsOf(step: number): TrainRow[] {
  const r = rng(5 + 17 * step);
  return Array.from({ length: 6 }, (_, i) => {
    const response = randomIds(r, 2 + ((i * 5) % 7), 50);
    return { prompt: randomIds(r, 3 + ((i * 3) % 5), 50), response, advantage: r() * 2 - 1, oldLogprobs: Float32Array.from(response, () => -3 - r()) };
  });
}

async function refusal(stage: 0 | 1 | 2, path: string, seed = 11): Promise<LamerError> {
  const policy = await tinyPolicy(seed);
  const opt = Optimizer.create(policy, { lr: 1e-2, zero: stage });
  try {
    const err = await opt.load(path).catch((e: unknown) => e);
    expect(err, `${path} at stage ${stage} must be refused`).toBeInstanceOf(Error);
    expect((err as LamerError).code).toBe('E_CHECKPOINT');
    return err as LamerError;
  } finally {
    opt.dispose();
    policy.dispose();
  }
}

/** Saves (one rank, stage 1) after steps 1 and 2 into DIR/s1 and DIR/s2. */
async function saves(dir: string): Promise<{ s1: string; s2: string }> {
  const policy = await tinyPolicy(11);
  const opt = Optimizer.create(policy, { lr: 1e-2, zero: 1 });
  const s1 = join(dir, 's1.safetensors');
  const s2 = join(dir, 's2.safetensors');
  await opt.trainStep(rowsOf(1), { microBatchTokens: 16 });
  await opt.save(s1);
  await opt.trainStep(rowsOf(2), { microBatchTokens: 16 });
  await opt.save(s2);
  opt.dispose();
  policy.dispose();
  return { s1, s2 };
}

function edit(file: string, f: (st: Safetensors) => void): void {
  const st = readSt(file);
  f(st);
  writeSt(file, st);
}

describe('ZeRO resume checks', () => {
  it('a set cut for 3 ranks loads and steps exactly as the one-rank save it was cut from', async () => {
    const dir = tempDir('zero-checks-ok');
    const { s2 } = await saves(dir);
    const three = join(dir, 'three.safetensors');
    cut(s2, three, 3);
    const after: Map<string, Float64Array>[] = [];
    for (const path of [s2, three]) {
      const policy = await tinyPolicy(11);
      const opt = Optimizer.create(policy, { lr: 1e-2, zero: 2 });
      await opt.load(path);
      expect(opt.stepCount).toBe(2);
      await opt.trainStep(rowsOf(3), { microBatchTokens: 16 });
      after.push(snapshot(policy));
      opt.dispose();
      policy.dispose();
    }
    expect(maxParamDiff(after[0], after[1])).toBe(0);
  }, 120_000);

  it('refuses shards swapped, copied over one another, or from another checkpoint, naming the shard', async () => {
    const dir = tempDir('zero-checks-shards');
    const { s1, s2 } = await saves(dir);
    const swapped = join(dir, 'swapped.safetensors');
    cut(s2, swapped, 3);
    const [a, b] = [shardName(swapped, 1, 3), shardName(swapped, 2, 3)];
    const bytesA = readFileSync(a);
    copyFileSync(b, a);
    writeFileSync(b, bytesA);
    let err = await refusal(1, swapped);
    expect(err.message).toContain(a);
    expect(err.message).toMatch(/'zero_rank' is '2', expected 1/);

    const copied = join(dir, 'copied.safetensors');
    cut(s2, copied, 3);
    copyFileSync(shardName(copied, 1, 3), shardName(copied, 2, 3));
    err = await refusal(2, copied);
    expect(err.message).toContain(shardName(copied, 2, 3));
    expect(err.message).toMatch(/'zero_rank' is '1', expected 2/);

    const early = join(dir, 'early.safetensors');
    const late = join(dir, 'late.safetensors');
    cut(s1, early, 2);
    cut(s2, late, 2);
    copyFileSync(shardName(early, 1, 2), shardName(late, 1, 2));
    err = await refusal(1, late);
    expect(err.message).toContain(shardName(late, 1, 2));
    expect(err.message).toMatch(/a shard of step 1, .* is of step 2/);

    // The same step and parameters, another save: told apart by the save's identity.
    const other = join(dir, 'other.safetensors');
    const again = join(dir, 'again.safetensors');
    cut(s2, other, 2);
    cut(s2, again, 2);
    edit(shardName(other, 1, 2), (st) => (st.metadata.zero_save = 'ffffffffffffffff'));
    err = await refusal(1, other);
    expect(err.message).toMatch(/'zero_save'.*another save/);
    const policy = await tinyPolicy(11);
    const opt = Optimizer.create(policy, { lr: 1e-2, zero: 1 });
    await opt.load(again);
    expect(opt.stepCount).toBe(2);
    opt.dispose();
    policy.dispose();
  }, 120_000);

  it('refuses zero_world or zero_chunks that disagree with the files, a zero_world removed or not a number, and a short shard', async () => {
    const dir = tempDir('zero-checks-meta');
    const { s2 } = await saves(dir);
    const cases: [string, (st: Safetensors) => void, RegExp, 'main' | 'shard'][] = [
      ['world-2-of-3', (st) => (st.metadata.zero_world = '2'), /'zero_chunks' is .* cut in chunks of/, 'main'],
      ['chunks', (st) => (st.metadata.zero_chunks = st.metadata.zero_chunks.replace(/\d+/, (n) => String(Number(n) + 1))), /'zero_chunks'/, 'main'],
      ['world-gone', (st) => delete st.metadata.zero_world, /metadata 'zero_world' missing/, 'main'],
      ['world-text', (st) => (st.metadata.zero_world = 'three'), /metadata 'zero_world' is 'three', expected an integer/, 'main'],
      [
        'short',
        (st) => {
          const e = st.tensors.get('exp_avg.0')!;
          st.tensors.set('exp_avg.0', { dtype: e.dtype, shape: [e.shape[0] - 1], bytes: e.bytes.subarray(0, e.bytes.length - e.bytes.length / e.shape[0]) });
        },
        /tensor 'exp_avg\.0' has \d+ elements .* expected one dimension of zero_chunks'/,
        'shard',
      ],
    ];
    for (const [name, change, why, which] of cases) {
      const path = join(dir, `${name}.safetensors`);
      cut(s2, path, 3);
      const file = which === 'main' ? path : shardName(path, 1, 3);
      edit(file, change);
      for (const stage of [1, 2] as const) {
        const err = await refusal(stage, path);
        expect(err.message, name).toContain(file);
        expect(err.message, name).toMatch(why);
      }
    }
    // zero_world removed is not read as a stage-0 state at stage 0 either.
    const gone = join(dir, 'gone0.safetensors');
    cut(s2, gone, 3);
    edit(gone, (st) => delete st.metadata.zero_world);
    expect((await refusal(0, gone)).message).toMatch(/'zero_world' missing/);
  }, 120_000);

  it('refuses NaN, infinite or negative second moments and integer-typed moments, sharded and whole', async () => {
    const dir = tempDir('zero-checks-values');
    const { s2 } = await saves(dir);
    const policy = await tinyPolicy(11);
    const stage0 = Optimizer.create(policy, { lr: 1e-2 });
    await stage0.trainStep(rowsOf(1), { microBatchTokens: 16 });
    const whole = join(dir, 'stage0.safetensors');
    await stage0.save(whole);
    stage0.dispose();
    policy.dispose();
    const firstMoment = (st: Safetensors, kind: string): [string, Entry] => [...st.tensors].find(([n]) => n.startsWith(`${kind}.`))!;
    const cases: [string, (st: Safetensors) => void, RegExp][] = [
      ['nan', (st) => firstMoment(st, 'exp_avg')[1].bytes.writeFloatLE(NaN, 4), /'exp_avg\.[^']+' holds 1 NaN or infinite/],
      ['inf', (st) => firstMoment(st, 'exp_avg_sq')[1].bytes.writeFloatLE(Infinity, 0), /'exp_avg_sq\.[^']+' holds 1 NaN or infinite/],
      ['negative', (st) => firstMoment(st, 'exp_avg_sq')[1].bytes.writeFloatLE(-1e-3, 8), /'exp_avg_sq\.[^']+' holds 1 negative/],
      ['integer', (st) => (firstMoment(st, 'exp_avg_sq')[1].dtype = 'I32'), /'exp_avg_sq\.[^']+' is of dtype int32/],
    ];
    for (const [name, change, why] of cases) {
      const sharded = join(dir, `${name}.safetensors`);
      cut(s2, sharded, 2);
      edit(sharded, change);
      for (const stage of [0, 1, 2] as const) expect((await refusal(stage, sharded)).message, `${name} sharded`).toMatch(why);
      const flat = join(dir, `${name}-stage0.safetensors`);
      copyFileSync(whole, flat);
      edit(flat, change);
      for (const stage of [0, 1, 2] as const) expect((await refusal(stage, flat)).message, `${name} whole`).toMatch(why);
    }
  }, 180_000);

  it('refuses a stage-0 state of other parameters at stages 1 and 2 as at stage 0, and one missing a parameter', async () => {
    const dir = tempDir('zero-checks-other');
    // A LoRA run's state: moments for adapter tensors only, none of which this (full) model has.
    const other = await tinyPolicy(11);
    await other.addLora({ r: 2, alpha: 4, dropout: 0, targets: 'all-linear', seed: 3 });
    const opt = Optimizer.create(other, { lr: 1e-2 });
    await opt.trainStep(rowsOf(1), { microBatchTokens: 16 });
    const path = join(dir, 'other.safetensors');
    await opt.save(path);
    opt.dispose();
    other.dispose();
    for (const stage of [0, 1, 2] as const)
      expect((await refusal(stage, path)).message).toMatch(/'exp_avg\.base_model\.model\..*lora_A\.weight' is for a parameter .* this model does not have/);
    // This model's own stage-0 state with one parameter's moments removed.
    const policy = await tinyPolicy(11);
    const own = Optimizer.create(policy, { lr: 1e-2 });
    await own.trainStep(rowsOf(1), { microBatchTokens: 16 });
    const partial = join(dir, 'partial.safetensors');
    await own.save(partial);
    own.dispose();
    policy.dispose();
    let dropped = '';
    edit(partial, (st) => {
      dropped = [...st.tensors.keys()].find((n) => n.startsWith('exp_avg.'))!.slice('exp_avg.'.length);
      st.tensors.delete(`exp_avg.${dropped}`);
      st.tensors.delete(`exp_avg_sq.${dropped}`);
    });
    for (const stage of [0, 1, 2] as const) {
      const err = await refusal(stage, partial);
      expect(err.message).toContain(`'${dropped}'`);
      expect(err.message).toMatch(/other parameters/);
    }
  }, 120_000);
});
