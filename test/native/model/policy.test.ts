// Policy API and the model CLI commands: init-model is seeded, saves are atomic and leave no stale weights, bad inputs
// and disposed models raise coded errors, score names the line of a bad input (test/parity/model/score.test.ts
// compares what score writes with transformers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Policy } from '../../../src/model/policy.js';
import { presetCheckpoint } from '../../../src/model/presets.js';
import { addon } from '../../../src/native/addon.js';
import { command as initModel } from '../../../src/cli/commands/init-model.js';
import { command as score } from '../../../src/cli/commands/score.js';
import { hasCode } from '../../../src/errors.js';
import { maxAbsDiff, removeTempDirs, tempDir } from '../../helpers/index.js';

afterAll(removeTempDirs);

async function quiet<T>(fn: () => Promise<T>): Promise<T> {
  const log = console.log;
  console.log = () => {};
  try {
    return await fn();
  } finally {
    console.log = log;
  }
}

let tiny: string;
beforeAll(async () => {
  tiny = tempDir('tiny');
  expect(await quiet(() => initModel.run(['--preset', 'tiny', '--out', tiny, '--seed', '1']))).toBe(0);
});

describe('init-model', () => {
  it('writes config, weights, tokenizer and generation config; the same seed gives the same weights', async () => {
    expect(readdirSync(tiny).sort()).toEqual(['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
    const again = tempDir('tiny2');
    const other = tempDir('tiny3');
    await quiet(() => initModel.run(['--preset', 'tiny', '--out', again, '--seed', '1']));
    await quiet(() => initModel.run(['--preset', 'tiny', '--out', other, '--seed', '2']));
    const w = (d: string): Float32Array => {
      const st = addon().safetensorsRead(join(d, 'model.safetensors'));
      return Float32Array.from(st.tensors['model.layers.1.mlp.up_proj.weight'].data as Float32Array);
    };
    expect(w(again)).toEqual(w(tiny));
    expect(w(other)).not.toEqual(w(tiny));
    const cfg = JSON.parse(readFileSync(join(tiny, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(cfg).toMatchObject({ model_type: 'qwen3', hidden_size: 64, num_hidden_layers: 2, tie_word_embeddings: true, dtype: 'float32' });
  });

  it("small preset has the issue's shape", async () => {
    const { config } = await presetCheckpoint('small');
    expect([config.hiddenSize, config.numHiddenLayers, config.numAttentionHeads, config.numKeyValueHeads, config.headDim, config.intermediateSize]).toEqual([
      256, 4, 4, 2, 64, 768,
    ]);
    expect(config.vocabSize).toBeGreaterThan(256);
    expect(config.vocabSize).toBeLessThan(1000);
  });

  it('rejects bad arguments with exit code 2', async () => {
    const err = console.error;
    console.error = () => {};
    try {
      expect(await initModel.run(['--preset', 'huge', '--out', tempDir('x')])).toBe(2);
      expect(await initModel.run(['--preset', 'tiny'])).toBe(2);
      expect(await initModel.run(['--preset', 'tiny', '--out', tempDir('x'), '--seed', '-1'])).toBe(2);
      expect(await initModel.run(['--bogus'])).toBe(2);
    } finally {
      console.error = err;
    }
  });
});

describe('Policy', () => {
  it('stop ids come from generation_config.json; the chat template and tokenizer load with the checkpoint', async () => {
    await using p = await Policy.load(tiny);
    const im_end = p.tokenizer!.tokenToId('<|im_end|>')!;
    const eot = p.tokenizer!.tokenToId('<|endoftext|>')!;
    expect(p.stopIds).toEqual([im_end, eot]);
    const prompt = p.renderChat([{ role: 'user', content: 'hi' }], { enableThinking: false });
    expect(prompt).toBe('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
    expect(p.encodeChat([{ role: 'user', content: 'hi' }])[0]).toBe(p.tokenizer!.tokenToId('<|im_start|>'));
  });

  it('text prompts/completions score the same as their ids', async () => {
    await using p = await Policy.load(tiny);
    const prompt = p.renderChat([{ role: 'user', content: 'Open a cell.' }]);
    const completion = 'I open the corner. <action>(1, 1)</action><|im_end|>';
    const [byText] = await p.logprobs({ prompts: [prompt], completions: [completion] });
    const [byIds] = await p.logprobs({ prompts: [p.encode(prompt)], completions: [p.encode(completion)] });
    expect(byText.length).toBe(p.encode(completion).length);
    expect(Array.from(byText)).toEqual(Array.from(byIds));
  });

  it('bad ids, bad temperatures and disposed models raise coded errors', async () => {
    const p = await Policy.load(tiny);
    await expect(p.logprobs([[1, 99999]])).rejects.toSatisfy((e) => hasCode(e, 'E_ARG') && /outside the vocabulary/.test((e as Error).message));
    await expect(p.logprobs([[1, -1]])).rejects.toSatisfy((e) => hasCode(e, 'E_ARG'));
    await expect(p.logprobs([[1, 2]], { temperature: 0 })).rejects.toSatisfy((e) => hasCode(e, 'E_ARG'));
    await expect(p.logprobs([[]])).rejects.toSatisfy((e) => hasCode(e, 'E_ARG'));
    expect(await p.logprobs([[7]])).toEqual([new Float32Array(0)]);
    // A job queued before dispose still completes: it holds its own reference to the parameters.
    const pending = p.logprobs([[1, 2, 3]]);
    p.dispose();
    expect((await pending)[0].length).toBe(2);
    expect(p.disposed).toBe(true);
    await expect(p.logprobs([[1, 2]])).rejects.toSatisfy((e) => hasCode(e, 'E_DISPOSED'));
    p.dispose(); // twice is fine
  });

  it('missing folder or config.json: E_CHECKPOINT', async () => {
    await expect(Policy.load(join(tempDir('empty'), 'nope'))).rejects.toSatisfy(
      (e) => hasCode(e, 'E_CHECKPOINT') && /no config\.json/.test((e as Error).message),
    );
    const d = tempDir('nojson');
    writeFileSync(join(d, 'config.json'), '{not json');
    await expect(Policy.load(d)).rejects.toSatisfy((e) => hasCode(e, 'E_CHECKPOINT') && /config\.json: not valid JSON/.test((e as Error).message));
  });

  it("save is atomic and switching layouts removes the other layout's weight files", async () => {
    await using p = await Policy.load(tiny);
    const out = tempDir('resave');
    await p.save(out, { maxShardBytes: 100_000 });
    const sharded = readdirSync(out);
    expect(sharded.filter((f) => /^model-\d{5}-of-\d{5}\.safetensors$/.test(f)).length).toBeGreaterThan(2);
    await p.save(out); // single file now
    const single = readdirSync(out);
    expect(single).toContain('model.safetensors');
    expect(single.filter((f) => f.startsWith('model-') || f.endsWith('index.json'))).toEqual([]);
    expect(single.some((f) => f.includes('.tmp-'))).toBe(false);
    await using back = await Policy.load(out);
    const seq = [[1, 2, 3, 4, 5]];
    expect(maxAbsDiff(await back.logprobs(seq), await p.logprobs(seq))).toBe(0);
  });

  it('saving over the checkpoint the model is mapped from keeps both the live model and the new file intact', async () => {
    const d = tempDir('inplace');
    await quiet(() => initModel.run(['--preset', 'tiny', '--out', d, '--seed', '4']));
    await using p = await Policy.load(d);
    const seq = [[3, 1, 4, 1, 5, 9, 2, 6]];
    const before = await p.logprobs(seq);
    await p.save(d);
    expect(maxAbsDiff(await p.logprobs(seq), before)).toBe(0);
    await using q = await Policy.load(d);
    expect(maxAbsDiff(await q.logprobs(seq), before)).toBe(0);
  });

  it('bf16 parameters on the CPU stay close to fp32 (bf16 rounding only)', async () => {
    await using f32 = await Policy.load(tiny);
    await using b16 = await Policy.load(tiny, { dtype: 'bfloat16' });
    expect(b16.native.paramDtype).toBe('bfloat16');
    const seq = [[5, 6, 7, 8, 9, 10, 11, 12]];
    const d = maxAbsDiff(await b16.logprobs(seq), await f32.logprobs(seq));
    expect(d).toBeGreaterThan(0);
    expect(d).toBeLessThan(0.05);
  });
});

describe('lamer score', () => {
  it('reports the line of a bad input and exits 1', async () => {
    const d = tempDir('score-bad');
    writeFileSync(join(d, 'in.jsonl'), '{"ids":[1,2]}\n{"ids":[1, 100000]}\n');
    const err = console.error;
    const messages: string[] = [];
    console.error = (m: string) => messages.push(m);
    try {
      expect(await score.run(['--model', tiny, '--input', join(d, 'in.jsonl'), '--out', join(d, 'out.jsonl')])).toBe(1);
    } finally {
      console.error = err;
    }
    expect(messages.join('\n')).toMatch(/in\.jsonl:2: expected/);
    expect(existsSync(join(d, 'out.jsonl'))).toBe(true);
  });
});
