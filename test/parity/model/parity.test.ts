// The decoder against transformers on tiny random checkpoints that transformers itself wrote: log-probs agree within
// 1e-4 in fp32 for every architecture variant SPEC §9 lists, batching with left padding changes nothing, and
// checkpoints travel both ways (transformers -> project, project -> transformers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Policy } from '../../../src/model/policy.js';
import { parityPython, Oracle } from '../python.js';
import { maxAbsDiff, randomIds, removeTempDirs, rng, tempDir } from '../../helpers/index.js';

afterAll(removeTempDirs);

const py = parityPython();
const TOL = 1e-4;

/** Sequences of different lengths (so batching pads on the left), ids below `vocab`. */
function sequences(vocab: number, seed: number, lengths = [9, 2, 17, 5, 12]): number[][] {
  const r = rng(seed);
  return lengths.map((n) => randomIds(r, n, vocab));
}

interface Case {
  name: string;
  args: string[];
}

const CASES: Case[] = [
  {
    name: 'Qwen3, tied, heads*head_dim (64) != hidden (48)',
    args: ['--arch', 'qwen3', '--tied', '--hidden', '48', '--heads', '4', '--kv-heads', '2', '--head-dim', '16'],
  },
  { name: 'Qwen3, untied, GQA 6/2', args: ['--arch', 'qwen3', '--hidden', '48', '--heads', '6', '--kv-heads', '2', '--head-dim', '8', '--layers', '3'] },
  { name: 'Qwen2 (q/k/v biases)', args: ['--arch', 'qwen2', '--hidden', '48', '--heads', '4', '--kv-heads', '2', '--head-dim', '12'] },
  {
    name: 'Llama with llama3 RoPE scaling',
    args: ['--arch', 'llama', '--llama3-rope', '--hidden', '48', '--heads', '4', '--kv-heads', '1', '--head-dim', '12', '--rope-theta', '500000'],
  },
  {
    name: 'Qwen3 sharded (index + 4 shards)',
    args: ['--arch', 'qwen3', '--hidden', '48', '--heads', '4', '--kv-heads', '2', '--head-dim', '16', '--shard-bytes', '40000'],
  },
  {
    name: 'Qwen3 stored in bf16, computed in fp32',
    args: ['--arch', 'qwen3', '--tied', '--dtype', 'bfloat16', '--hidden', '48', '--heads', '4', '--kv-heads', '2', '--head-dim', '16'],
  },
];

let oracle: Oracle;
const makeCheckpoint = (args: string[]): Promise<string> => oracle.makeCheckpoint(args);
const reference: Oracle['reference'] = (...a) => oracle.reference(...a);

describe.skipIf(!py.ok)(`parity with transformers${py.ok ? '' : ` (skipped: ${py.reason})`}`, () => {
  beforeAll(() => {
    oracle = new Oracle();
  });
  afterAll(() => oracle?.close());

  for (const c of CASES) {
    it(`${c.name}: log-probs within ${TOL} at T=1 and T=0.7; logits within ${TOL}`, async () => {
      const dir = await makeCheckpoint([...c.args, '--seed', String(CASES.indexOf(c) + 1)]);
      if (c.name.includes('sharded')) {
        expect(existsSync(join(dir, 'model.safetensors.index.json'))).toBe(true);
        expect(readdirSync(dir).filter((f) => /^model-.*\.safetensors$/.test(f)).length).toBeGreaterThan(1);
      }
      await using policy = await Policy.load(dir);
      const seqs = sequences(policy.config.vocabSize, 7 + CASES.indexOf(c));
      for (const temperature of [1, 0.7]) {
        const ref = await reference(dir, seqs, { temperature, logits: temperature === 1 });
        const ours = await policy.logprobs(seqs, { temperature });
        expect(maxAbsDiff(ours, ref.logprobs)).toBeLessThan(TOL);
        if (temperature === 1) {
          // Logits of the longest sequence (row 2, no padding in the batch of one).
          using logits = await policy.logits([seqs[2]]);
          const V = policy.config.vocabSize;
          const flat = logits.data as Float32Array;
          const rows = ref.logits[2].map((_, t) => flat.subarray(t * V, (t + 1) * V));
          expect(maxAbsDiff(rows, ref.logits[2])).toBeLessThan(TOL);
        }
      }
    });
  }

  it('left padding does not change a row: batched results equal each sequence scored alone', async () => {
    const dir = await makeCheckpoint(CASES[0].args.concat(['--seed', '11']));
    const seqs = sequences(96, 3, [3, 20, 1, 8, 14, 2]);
    await using batched = await Policy.load(dir);
    await using alone = await Policy.load(dir, { tokenBudget: 1 }); // budget 1: one sequence per forward
    const a = await batched.logprobs(seqs);
    const b = await alone.logprobs(seqs);
    expect(maxAbsDiff(a, b)).toBeLessThan(1e-5);
    // And a padded logits row equals the unpadded one at the real positions.
    using padded = await batched.logits([seqs[1], seqs[0]]); // seqs[0] padded by 17 on the left
    using single = await batched.logits([seqs[0]]);
    const V = batched.config.vocabSize;
    const T = seqs[1].length;
    const row = (padded.data as Float32Array).subarray(T * V + (T - 3) * V, 2 * T * V);
    expect(maxAbsDiff([row], [single.data as Float32Array])).toBeLessThan(1e-5);
    expect(Array.from(padded.data as Float32Array).every(Number.isFinite)).toBe(true);
  });

  it('prompt/completion scoring equals the tail of whole-sequence scoring', async () => {
    const dir = await makeCheckpoint(CASES[2].args.concat(['--seed', '12']));
    await using policy = await Policy.load(dir);
    const seqs = sequences(96, 5, [10, 6]);
    const whole = await policy.logprobs(seqs);
    const split = await policy.logprobs({ prompts: [seqs[0].slice(0, 4), seqs[1].slice(0, 1)], completions: [seqs[0].slice(4), seqs[1].slice(1)] });
    expect(maxAbsDiff(split, [whole[0].slice(3), whole[1]])).toBeLessThan(1e-5);
    const ref = await reference(dir, seqs, { starts: [4, 1] });
    expect(maxAbsDiff(split, ref.logprobs)).toBeLessThan(TOL);
  });

  for (const layout of ['single file', 'sharded'] as const) {
    it(`a checkpoint the project saved (${layout}) loads in transformers with the same log-probs`, async () => {
      const src = await makeCheckpoint(CASES[3].args.concat(['--seed', '13']));
      const out = tempDir('saved');
      const seqs = sequences(96, 9);
      await using policy = await Policy.load(src);
      const ours = await policy.logprobs(seqs);
      await policy.save(out, layout === 'sharded' ? { maxShardBytes: 30_000 } : {});
      const files = readdirSync(out);
      if (layout === 'sharded') {
        expect(files).toContain('model.safetensors.index.json');
        expect(files).not.toContain('model.safetensors');
      } else {
        expect(files).toContain('model.safetensors');
      }
      expect(files).toContain('generation_config.json');
      expect(files.some((f) => f.includes('.tmp-'))).toBe(false);
      const ref = await reference(out, seqs);
      expect(maxAbsDiff(ours, ref.logprobs)).toBeLessThan(TOL);
      // The saved config keeps the llama3 scaling transformers needs.
      const cfg = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as { rope_parameters: { rope_type: string } };
      expect(cfg.rope_parameters.rope_type).toBe('llama3');
      // And it loads back here with the same results.
      await using again = await Policy.load(out);
      expect(maxAbsDiff(await again.logprobs(seqs), ours)).toBe(0);
    });
  }

  it('a bf16 save of an fp32 model loads in transformers and matches the project on the same bf16 weights', async () => {
    const src = await makeCheckpoint(CASES[0].args.concat(['--seed', '14']));
    const out = tempDir('saved-bf16');
    await using policy = await Policy.load(src);
    await policy.save(out, { dtype: 'bfloat16' });
    const cfg = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as { dtype: string };
    expect(cfg.dtype).toBe('bfloat16');
    await using reloaded = await Policy.load(out);
    const seqs = sequences(96, 10);
    const ref = await reference(out, seqs);
    expect(maxAbsDiff(await reloaded.logprobs(seqs), ref.logprobs)).toBeLessThan(TOL);
  });

  it('a model from `lamer init-model --preset tiny` loads in transformers with the same log-probs and tokenization', async () => {
    const { command } = await import('../../../src/cli/commands/init-model.js');
    const out = tempDir('init');
    expect(await command.run(['--preset', 'tiny', '--out', out, '--seed', '5'])).toBe(0);
    await using policy = await Policy.load(out);
    expect(policy.config.hiddenSize).toBe(64);
    expect(policy.config.numHiddenLayers).toBe(2);
    const text = policy.renderChat([{ role: 'user', content: 'Open the cell (2, 3). <action>(2, 3)</action>' }]);
    const ids = policy.encode(text);
    expect(policy.decode(ids)).toBe(text);
    const ref = await reference(out, [ids]);
    expect(maxAbsDiff(await policy.logprobs([ids]), ref.logprobs)).toBeLessThan(TOL);
  });
});
