// LoRA against peft on tiny checkpoints transformers wrote: log-probs of a peft-written adapter loaded here equal
// peft's, gradients of one step equal peft's, an adapter written here loads in peft with the same logits, a merged
// checkpoint gives the adapted model's log-probs, and the trainable parameter count is peft's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Policy } from '../../../src/model/policy.js';
import { Optimizer } from '../../../src/train/optimizer.js';
import { parityPython, Oracle } from '../python.js';
import { maxAbsDiff, randomIds, removeTempDirs, rng, tempDir } from '../../helpers/index.js';

afterAll(removeTempDirs);

const py = parityPython();

function sequences(vocab: number, seed: number, lengths = [9, 3, 14, 6]): number[][] {
  const r = rng(seed);
  return lengths.map((n) => randomIds(r, n, vocab));
}

interface PeftReference {
  logprobs: number[][];
  logits: number[][][];
  grads: Record<string, number[]>;
}

let oracle: Oracle;

describe.skipIf(!py.ok)(`LoRA parity with peft${py.ok ? '' : ` (skipped: ${py.reason})`}`, () => {
  let base: string;
  let untied: string;
  beforeAll(async () => {
    oracle = new Oracle();
    base = await oracle.makeCheckpoint(['--arch', 'qwen3', '--tied', '--hidden', '48', '--heads', '4', '--kv-heads', '2', '--head-dim', '16', '--seed', '3']);
    untied = await oracle.makeCheckpoint(['--arch', 'qwen2', '--hidden', '48', '--heads', '4', '--kv-heads', '2', '--head-dim', '12', '--seed', '4']);
  });
  afterAll(() => oracle?.close());

  const cases: { name: string; model: () => string; targets: string[] | 'all-linear'; rslora?: boolean; r: number; alpha: number }[] = [
    { name: 'Qwen3, all-linear, r 4', model: () => base, targets: 'all-linear', r: 4, alpha: 8 },
    { name: 'Qwen3, q/v only, r 8, rsLoRA', model: () => base, targets: ['q_proj', 'v_proj'], r: 8, alpha: 16, rslora: true },
    { name: 'Qwen2 (biases), o/up/down, r 2', model: () => untied, targets: ['o_proj', 'up_proj', 'down_proj'], r: 2, alpha: 3 },
  ];

  for (const c of cases) {
    it(`${c.name}: a peft adapter loads here with peft's log-probs (1e-5), gradients (1e-4 relative) and parameter count`, async () => {
      const adapter = tempDir('adapter');
      const made = await oracle.request<{ trainable: number }>({
        op: 'peft_make',
        model: c.model(),
        out: adapter,
        r: c.r,
        alpha: c.alpha,
        targets: c.targets,
        seed: 11,
        use_rslora: c.rslora ?? false,
      });
      await using policy = await Policy.load(c.model());
      await policy.loadAdapter(adapter);
      expect(policy.lora?.r).toBe(c.r);
      expect(policy.loraParameterCount).toBe(made.trainable);
      const seqs = sequences(policy.config.vocabSize, 5);
      const rows = [
        { prompt: seqs[0].slice(0, 4), response: seqs[0].slice(4) },
        { prompt: seqs[2].slice(0, 6), response: seqs[2].slice(6) },
      ];
      const ref = await oracle.request<PeftReference>({
        op: 'peft_reference',
        model: c.model(),
        adapter,
        sequences: seqs,
        starts: seqs.map(() => 1),
        sft_rows: rows,
      });
      const ours = await policy.logprobs(seqs);
      expect(maxAbsDiff(ours, ref.logprobs)).toBeLessThan(1e-5);
      // Scoring from merged copies W + scale B A gives the same.
      await policy.setAdapterMerged(true);
      expect(maxAbsDiff(await policy.logprobs(seqs), ref.logprobs)).toBeLessThan(1e-5);
      await policy.setAdapterMerged(false);
      // Without the adapter the log-probs differ: the comparison above is not of the base with itself.
      const plain = await Policy.load(c.model());
      expect(maxAbsDiff(await plain.logprobs(seqs), ref.logprobs)).toBeGreaterThan(1e-3);
      plain.dispose();

      using opt = Optimizer.create(policy, { lr: 1e-3 });
      const g = await opt.lossAndGrad(rows, { objective: 'sft' });
      const names = Object.keys(g.grads!).sort();
      expect(names).toEqual(Object.keys(ref.grads).sort());
      for (const n of names) {
        const mine = g.grads![n].toArray();
        const theirs = ref.grads[n];
        const scale = Math.max(...theirs.map(Math.abs));
        expect(scale).toBeGreaterThan(0);
        expect(maxAbsDiff([mine], [theirs]) / scale).toBeLessThan(1e-4);
        g.grads![n].dispose();
      }
      expect((await opt.memory()).trainableCount).toBe(made.trainable);
    });
  }

  it('an adapter written here loads in peft with the same logits (1e-5); its config carries peft fields', async () => {
    await using policy = await Policy.load(base);
    await policy.addLora({ r: 4, alpha: 8, dropout: 0, targets: ['q_proj', 'k_proj', 'gate_proj', 'down_proj'], seed: 2 });
    const count = await oracle.request<{ trainable: number }>({ op: 'peft_count', model: base, r: 4, targets: ['q_proj', 'k_proj', 'gate_proj', 'down_proj'] });
    expect(policy.loraParameterCount).toBe(count.trainable);
    // B starts at zero (peft's initialisation): the adapted model is the base until it trains.
    const seqs = sequences(policy.config.vocabSize, 9);
    using plainLogits = await policy.logits([seqs[2]]);
    // Train it a few steps so that B moves off zero.
    using opt = Optimizer.create(policy, { lr: 5e-2, weightDecay: 0 });
    const rows = [{ prompt: seqs[0].slice(0, 3), response: seqs[0].slice(3) }];
    for (let i = 0; i < 3; i++) await opt.sftStep(rows);
    const dir = tempDir('saved-adapter');
    await policy.saveAdapter(dir);
    const config = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({
      peft_type: 'LORA',
      r: 4,
      lora_alpha: 8,
      base_model_name_or_path: base,
      target_modules: ['down_proj', 'gate_proj', 'k_proj', 'q_proj'],
    });
    const ref = await oracle.request<PeftReference>({ op: 'peft_reference', model: base, adapter: dir, sequences: [seqs[2]], starts: [1], logits: true });
    using ours = await policy.logits([seqs[2]]);
    const flat = (t: number[][]) => t.flat();
    const mine = Array.from(ours.data as Float32Array);
    expect(maxAbsDiff([mine], [flat(ref.logits[0])])).toBeLessThan(1e-5);
    expect(maxAbsDiff([mine], [Array.from(plainLogits.data as Float32Array)])).toBeGreaterThan(1e-4);
  });

  it('a merged checkpoint (mergeAdapter, lamer merge) gives the adapted log-probs (1e-5), in transformers and here', async () => {
    const adapter = tempDir('adapter');
    await oracle.request({ op: 'peft_make', model: base, out: adapter, r: 4, alpha: 8, targets: 'all-linear', seed: 5 });
    // An adapter folder opens with its base (base_model_name_or_path) like peft's AutoPeftModel.
    await using adapted = await Policy.load(adapter);
    expect(adapted.lora?.modules.length).toBe(14);
    const seqs = sequences(adapted.config.vocabSize, 13);
    const want = await adapted.logprobs(seqs);
    await adapted.mergeAdapter();
    expect(adapted.lora).toBeNull();
    expect(maxAbsDiff(await adapted.logprobs(seqs), want)).toBeLessThan(1e-5);
    // `lamer merge` writes the same merged checkpoint; transformers alone (no peft) reads it.
    const out = tempDir('merged');
    const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'lamer.js');
    const r = spawnSync(process.execPath, [bin, 'merge', '--model', base, '--adapter', adapter, '--out', out], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('14 projections');
    expect(existsSync(join(out, 'adapter_config.json'))).toBe(false);
    const ref = await oracle.reference(out, seqs);
    expect(maxAbsDiff(ref.logprobs, want)).toBeLessThan(1e-5);
    await using merged = await Policy.load(out);
    expect(merged.lora).toBeNull();
    expect(maxAbsDiff(await merged.logprobs(seqs), want)).toBeLessThan(1e-5);
    // Usage errors exit 2 with the usage text.
    const bad = spawnSync(process.execPath, [bin, 'merge', '--model', base], { encoding: 'utf8', timeout: 60_000 });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--adapter');
  });
});
