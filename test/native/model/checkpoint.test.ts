// Checkpoint validation (SPEC §9): every malformed safetensors file or config is rejected with E_CHECKPOINT and a
// message naming the file, the tensor or field, what was expected and what was found; 1,000 random corruptions of a
// valid file are each rejected or read exactly as an independent parser of the same bytes reads them, never a crash.
// Files here are written by a small writer in this test, independent of the project's writer.
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync, copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { addon, type NativeSafetensorsContents } from '../../../src/native/addon.js';
import { Policy } from '../../../src/model/policy.js';
import { parseModelConfig } from '../../../src/model/config.js';
import { hasCode } from '../../../src/errors.js';
import { removeTempDirs, rng, tempDir } from '../../helpers/index.js';

afterAll(removeTempDirs);

const ITEM: Record<string, number> = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

interface Spec {
  name: string;
  dtype: string;
  shape: number[];
  /** data_offsets override */
  offsets?: [number, number];
  bytes?: Uint8Array;
}

/** Serialises a safetensors file; `headerText` replaces the generated header; `lengthOverride` the length field. */
function safetensors(specs: Spec[], opts: { headerText?: string; lengthOverride?: bigint; extra?: number; seed?: number } = {}): Buffer {
  const r = rng(opts.seed ?? 1);
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  const chunks: Buffer[] = [];
  let offset = 0;
  for (const s of specs) {
    const n = s.shape.reduce((a, b) => a * b, 1) * (ITEM[s.dtype] ?? 4);
    const data = s.bytes ?? Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
    header[s.name] = { dtype: s.dtype, shape: s.shape, data_offsets: s.offsets ?? [offset, offset + data.length] };
    chunks.push(Buffer.from(data));
    offset += data.length;
  }
  let text = opts.headerText ?? JSON.stringify(header);
  while ((8 + Buffer.byteLength(text)) % 8 !== 0) text += ' ';
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(opts.lengthOverride ?? BigInt(Buffer.byteLength(text)));
  return Buffer.concat([len, Buffer.from(text), ...chunks, Buffer.alloc(opts.extra ?? 0)]);
}

const dir = tempDir('st');
let fileNo = 0;
function write(buf: Buffer): string {
  const p = join(dir, `f${fileNo++}.safetensors`);
  writeFileSync(p, buf);
  return p;
}

/** The error thrown by reading `buf`; fails the test when the read succeeds. */
function readError(buf: Buffer): Error & { code?: string } {
  const path = write(buf);
  try {
    const got = addon().safetensorsRead(path);
    for (const t of Object.values(got.tensors)) t.dispose();
  } catch (e) {
    expect(e).toBeInstanceOf(Error);
    expect((e as Error).message).toContain(path);
    return e as Error & { code?: string };
  }
  throw new Error(`expected ${path} to be rejected`);
}

const good: Spec[] = [
  { name: 'a', dtype: 'F32', shape: [2, 3] },
  { name: 'b', dtype: 'BF16', shape: [5] },
  { name: 'c', dtype: 'I64', shape: [1, 2] },
];

describe('safetensors reader rejects malformed files with E_CHECKPOINT', () => {
  it('reads a valid file as views with the right values', () => {
    const a = Float32Array.from([1, 2, 3, 4, 5, 6]);
    const p = write(safetensors([{ name: 'w', dtype: 'F32', shape: [2, 3], bytes: new Uint8Array(a.buffer) }, good[1]]));
    const got = addon().safetensorsRead(p);
    expect(got.order).toEqual(['w', 'b']);
    expect(got.metadata).toEqual({ format: 'pt' });
    expect(got.tensors.w.shape).toEqual([2, 3]);
    expect(Array.from(got.tensors.w.data as Float32Array)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(got.tensors.b.dtype).toBe('bfloat16');
    for (const t of Object.values(got.tensors)) t.dispose();
  });

  const cases: [string, () => Buffer, RegExp][] = [
    ['a file shorter than the length field', () => Buffer.from([1, 2, 3]), /truncated/],
    ['a file truncated inside the data', () => safetensors(good).subarray(0, safetensors(good).length - 3), /tensor 'c'.*data buffer holds/],
    [
      'a header length past the end of the file',
      () => safetensors(good, { lengthOverride: 10_000n }),
      /header length field runs past the end of the file \(\d+ bytes\): not a safetensors file/,
    ],
    ['a header length of 2^64 - 1', () => safetensors(good, { lengthOverride: 0xffffffffffffffffn }), /runs past the end/],
    [
      'overlapping offsets',
      () => safetensors([good[0], { ...good[1], offsets: [20, 30] }, { ...good[2], offsets: [30, 46] }]),
      /tensor 'b'.*overlapping tensor 'a'/,
    ],
    [
      'a gap between tensors',
      () => safetensors([good[0], { ...good[1], offsets: [28, 38] }, { ...good[2], offsets: [38, 54] }], { extra: 4 }),
      /tensor 'b'.*gap of 4 bytes/,
    ],
    ['offsets past the buffer', () => safetensors([good[0], good[1], { ...good[2], offsets: [34, 60] }]), /tensor 'c'.*data buffer holds 50 bytes/],
    ['bytes left after the last tensor', () => safetensors(good, { extra: 8 }), /buffer holds 58 bytes but the tensors cover 50/],
    [
      'a shape that does not match the byte size',
      () =>
        safetensors(
          [
            { ...good[0], shape: [2, 3], offsets: [0, 20] },
            { ...good[1], offsets: [20, 30] },
            { ...good[2], offsets: [30, 46] },
          ],
          { extra: 0 },
        ),
      /tensor 'a': shape \[2, 3\] x F32 needs 24 bytes, but data_offsets span 20/,
    ],
    [
      'a shape whose size overflows 64 bits',
      () => safetensors([], { headerText: '{"x":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,0]}}' }),
      /more than 2\^64/,
    ],
    [
      'an unknown dtype',
      () => safetensors([{ name: 'q', dtype: 'F12', shape: [2], offsets: [0, 4] }], { extra: 4 }),
      /tensor 'q': unknown or unsupported dtype 'F12'/,
    ],
    [
      'a duplicate tensor name',
      () =>
        safetensors([], { headerText: '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', extra: 2 }),
      /duplicate key "a"/,
    ],
    ['a header that is not JSON', () => safetensors([], { headerText: '{"a": [1, 2' }), /not valid JSON/],
    ['a header that is a JSON array', () => safetensors([], { headerText: '[]' }), /expected a JSON object/],
    ['negative offsets', () => safetensors([], { headerText: '{"a":{"dtype":"U8","shape":[1],"data_offsets":[-1,0]}}' }), /non-negative integers/],
    [
      'fractional shape',
      () => safetensors([], { headerText: '{"a":{"dtype":"U8","shape":[0.5],"data_offsets":[0,0]}}' }),
      /shape entries must be non-negative integers/,
    ],
    [
      'a tensor entry with an unknown field',
      () => safetensors([], { headerText: '{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0],"x":1}}' }),
      /unexpected field 'x'/,
    ],
    ['nesting deep enough to exhaust a recursive parser', () => safetensors([], { headerText: '['.repeat(100000) }), /nested deeper/],
  ];
  for (const [what, make, message] of cases) {
    it(what, () => {
      const e = readError(make());
      expect(e.code).toBe('E_CHECKPOINT');
      expect(e.message).toMatch(message);
    });
  }
});

// A small valid Qwen3 checkpoint folder made from a config and hand-written tensors.
const TINY_CONFIG = {
  model_type: 'qwen3',
  vocab_size: 16,
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 4,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  dtype: 'float32',
  eos_token_id: 2,
};
function tinyTensors(): Spec[] {
  const p = 'model.layers.0.';
  return [
    { name: 'model.embed_tokens.weight', dtype: 'F32', shape: [16, 8] },
    { name: `${p}input_layernorm.weight`, dtype: 'F32', shape: [8] },
    { name: `${p}self_attn.q_proj.weight`, dtype: 'F32', shape: [8, 8] },
    { name: `${p}self_attn.k_proj.weight`, dtype: 'F32', shape: [4, 8] },
    { name: `${p}self_attn.v_proj.weight`, dtype: 'F32', shape: [4, 8] },
    { name: `${p}self_attn.o_proj.weight`, dtype: 'F32', shape: [8, 8] },
    { name: `${p}self_attn.q_norm.weight`, dtype: 'F32', shape: [4] },
    { name: `${p}self_attn.k_norm.weight`, dtype: 'F32', shape: [4] },
    { name: `${p}post_attention_layernorm.weight`, dtype: 'F32', shape: [8] },
    { name: `${p}mlp.gate_proj.weight`, dtype: 'F32', shape: [12, 8] },
    { name: `${p}mlp.up_proj.weight`, dtype: 'F32', shape: [12, 8] },
    { name: `${p}mlp.down_proj.weight`, dtype: 'F32', shape: [8, 12] },
    { name: 'model.norm.weight', dtype: 'F32', shape: [8] },
  ].map((s) => {
    // Small finite floats (random bytes would be NaN/huge floats).
    const n = s.shape.reduce((a, b) => a * b, 1);
    const r = rng(n);
    return { ...s, bytes: new Uint8Array(Float32Array.from({ length: n }, () => r() - 0.5).buffer) };
  });
}
function checkpointDir(config: Record<string, unknown>, specs: Spec[], opts: Parameters<typeof safetensors>[1] = {}): string {
  const d = tempDir('ckdir');
  writeFileSync(join(d, 'config.json'), JSON.stringify(config));
  writeFileSync(join(d, 'model.safetensors'), safetensors(specs, opts));
  return d;
}

async function loadError(d: string): Promise<Error & { code?: string }> {
  try {
    const p = await Policy.load(d);
    p.dispose();
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error(`expected ${d} to be rejected`);
}

describe('checkpoint folders are checked against config.json', () => {
  it('a valid hand-made folder loads and scores finite log-probs', async () => {
    await using p = await Policy.load(checkpointDir(TINY_CONFIG, tinyTensors()));
    const lp = await p.logprobs([[1, 2, 3, 4]]);
    expect(lp[0].length).toBe(3);
    expect(Array.from(lp[0]).every((v) => Number.isFinite(v) && v < 0)).toBe(true);
  });

  it('a missing tensor names the tensor and the shape it should have', async () => {
    const e = await loadError(
      checkpointDir(
        TINY_CONFIG,
        tinyTensors().filter((s) => !s.name.includes('k_norm')),
      ),
    );
    expect(e.code).toBe('E_CHECKPOINT');
    expect(e.message).toMatch(/missing tensor 'model\.layers\.0\.self_attn\.k_norm\.weight' \(expected shape \[4\]/);
  });

  it('a tensor whose shape disagrees with config.json', async () => {
    const e = await loadError(checkpointDir({ ...TINY_CONFIG, intermediate_size: 10 }, tinyTensors()));
    expect(e.code).toBe('E_CHECKPOINT');
    expect(e.message).toMatch(
      /model\.safetensors: tensor 'model\.layers\.0\.mlp\.gate_proj\.weight': expected shape \[10, 8\] from config\.json, found \[12, 8\]/,
    );
  });

  it('an extra tensor the config does not describe', async () => {
    const e = await loadError(checkpointDir(TINY_CONFIG, [...tinyTensors(), { name: 'model.layers.1.mlp.up_proj.weight', dtype: 'F32', shape: [2] }]));
    expect(e.code).toBe('E_CHECKPOINT');
    expect(e.message).toMatch(/unexpected tensor 'model\.layers\.1\.mlp\.up_proj\.weight'/);
  });

  it('an integer tensor where weights belong', async () => {
    const specs = tinyTensors().map((s) => (s.name === 'model.norm.weight' ? { ...s, dtype: 'I32' } : s));
    const e = await loadError(checkpointDir(TINY_CONFIG, specs));
    expect(e.message).toMatch(/tensor 'model\.norm\.weight': expected a floating dtype/);
  });

  for (const field of ['vocab_size', 'hidden_size', 'num_hidden_layers', 'num_attention_heads', 'intermediate_size', 'model_type']) {
    it(`config.json missing '${field}'`, async () => {
      const { [field]: _dropped, ...config } = TINY_CONFIG as Record<string, unknown>;
      const e = await loadError(checkpointDir(config, tinyTensors()));
      expect(e.code).toBe('E_CHECKPOINT');
      expect(e.message).toContain('config.json');
      expect(e.message).toContain(`'${field}'`);
      expect(e.message).toMatch(/found nothing \(the field is missing\)/);
    });
  }

  it('config values of the wrong kind name what was expected and found', () => {
    const bad = (patch: Record<string, unknown>): string => {
      try {
        parseModelConfig({ ...TINY_CONFIG, ...patch }, 'x/config.json');
      } catch (e) {
        expect(hasCode(e, 'E_CHECKPOINT')).toBe(true);
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(bad({ num_key_value_heads: 3 })).toMatch(/'num_key_value_heads': expected a divisor of num_attention_heads \(2\), found number 3/);
    expect(bad({ hidden_act: 'gelu' })).toMatch(/'hidden_act'/);
    expect(bad({ rope_scaling: { rope_type: 'yarn', factor: 2 } })).toMatch(/rope_type.*"default" or "llama3"/);
    expect(bad({ eos_token_id: 'x' })).toMatch(/'eos_token_id'/);
    expect(bad({ dtype: 'int8' })).toMatch(/'dtype'/);
    expect(bad({ head_dim: 5 })).toMatch(/'head_dim': expected an even number/);
    // Values that parse but would turn the math into NaN or garbage, and ids outside the vocabulary.
    expect(bad({ rope_theta: 1e-300 })).toMatch(/'rope_theta': expected a number in \[1, 1000000000000\]/);
    expect(bad({ rms_norm_eps: 1e300 })).toMatch(/'rms_norm_eps': expected a number in/);
    const llama3 = (p: Record<string, unknown>) => ({
      model_type: 'llama',
      rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 64, ...p },
    });
    expect(bad(llama3({ factor: 1e-300 }))).toMatch(/factor': expected a number in \[1, /);
    expect(bad(llama3({ low_freq_factor: 5, high_freq_factor: 4 }))).toMatch(/high_freq_factor': expected a value above low_freq_factor \(5\)/);
    const vocab = (TINY_CONFIG as { vocab_size: number }).vocab_size;
    for (const field of ['eos_token_id', 'bos_token_id', 'pad_token_id']) {
      expect(bad({ [field]: vocab })).toMatch(new RegExp(`'${field}': expected a token id or a list of token ids in \\[0, ${vocab}\\)`));
    }
  });

  it('a tied checkpoint carrying an lm_head.weight of another shape is refused', async () => {
    const tied = { ...TINY_CONFIG, tie_word_embeddings: true };
    const specs = tinyTensors().filter((s) => s.name !== 'lm_head.weight');
    const embed = specs.find((s) => s.name === 'model.embed_tokens.weight')!;
    const wrong = { name: 'lm_head.weight', dtype: embed.dtype, shape: [embed.shape[0] + 1, embed.shape[1]] };
    const e = await loadError(checkpointDir(tied, [...specs, wrong]));
    expect(e.code).toBe('E_CHECKPOINT');
    expect(e.message).toMatch(/'lm_head.weight': expected shape .*found \[/);
  });

  it('config spellings: rope_parameters vs rope_theta, torch_dtype vs dtype, eos id or list, implicit head_dim', () => {
    const a = parseModelConfig({ ...TINY_CONFIG, rope_theta: undefined, rope_parameters: { rope_theta: 5e5, rope_type: 'default' }, eos_token_id: [2, 7] });
    expect(a.ropeTheta).toBe(5e5);
    expect(a.eosTokenIds).toEqual([2, 7]);
    const b = parseModelConfig({ ...TINY_CONFIG, dtype: undefined, torch_dtype: 'bfloat16', head_dim: undefined, rope_theta: 1e6 });
    expect(b.dtype).toBe('bfloat16');
    expect(b.headDim).toBe(4);
    expect(b.ropeTheta).toBe(1e6);
    expect(b.eosTokenIds).toEqual([2]);
    const q2 = parseModelConfig({ ...TINY_CONFIG, model_type: 'qwen2' });
    expect([q2.qkvBias, q2.oBias, q2.qkNorm]).toEqual([true, false, false]);
    const l = parseModelConfig({
      ...TINY_CONFIG,
      model_type: 'llama',
      rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 },
    });
    expect(l.ropeLlama3).toEqual({ factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 });
  });

  it('sharded: an index naming a tensor its shard lacks, a tensor in two shards, a missing shard file', async () => {
    const specs = tinyTensors();
    const mk = (shards: Spec[][], map: Record<string, string>): string => {
      const d = tempDir('shard');
      writeFileSync(join(d, 'config.json'), JSON.stringify(TINY_CONFIG));
      shards.forEach((s, i) => writeFileSync(join(d, `s${i}.safetensors`), safetensors(s)));
      writeFileSync(join(d, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: map }));
      return d;
    };
    const half = Math.floor(specs.length / 2);
    const map: Record<string, string> = {};
    specs.forEach((s, i) => (map[s.name] = i < half ? 's0.safetensors' : 's1.safetensors'));
    await (await Policy.load(mk([specs.slice(0, half), specs.slice(half)], map))).dispose();

    let e = await loadError(mk([specs.slice(0, half - 1), specs.slice(half)], map));
    expect(e.message).toMatch(/s0\.safetensors: tensor '.*' is listed in the index for this file but not stored in it/);
    e = await loadError(mk([specs.slice(0, half + 1), specs.slice(half)], map));
    expect(e.message).toMatch(/is not listed for this file/);
    e = await loadError(mk([specs.slice(0, half)], map));
    expect(e.code).toBe('E_CHECKPOINT');
    expect(e.message).toMatch(/s1\.safetensors: file not found/);
    e = await loadError(mk([specs], { ...map, x: '../../etc/passwd' }));
    expect(e.message).toMatch(/expected a file name inside the checkpoint folder/);
  });
});

/** An independent reading of a safetensors buffer: null when it is malformed by SPEC §9's rules. */
function independentRead(buf: Buffer): Map<string, { dtype: string; shape: number[]; bytes: Buffer }> | null {
  if (buf.length < 8) return null;
  const n = buf.readBigUInt64LE(0);
  if (n > BigInt(buf.length - 8)) return null;
  const start = 8 + Number(n);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(buf.subarray(8, start).toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
  const out = new Map<string, { dtype: string; shape: number[]; bytes: Buffer }>();
  for (const [name, v] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const e = v as { dtype: string; shape: number[]; data_offsets: [number, number] };
    const [b, en] = e.data_offsets;
    out.set(name, { dtype: e.dtype, shape: e.shape, bytes: buf.subarray(start + b, start + en) });
  }
  return out;
}

describe('1,000 random corruptions of a valid file: each rejected with E_CHECKPOINT or read exactly', () => {
  it('never crashes, never returns wrong bytes', () => {
    const specs: Spec[] = [
      { name: 'model.embed_tokens.weight', dtype: 'F32', shape: [4, 3] },
      { name: 'model.norm.weight', dtype: 'BF16', shape: [3] },
      { name: 'x.bias', dtype: 'F16', shape: [2, 2] },
      { name: 'ids', dtype: 'I32', shape: [3] },
      { name: 'flags', dtype: 'BOOL', shape: [5] },
      { name: 'empty', dtype: 'F32', shape: [0, 4] },
    ];
    const valid = safetensors(specs, { seed: 9 });
    const headerEnd = 8 + Number(valid.readBigUInt64LE(0));
    const r = rng(2024);
    const pick = (n: number): number => Math.floor(r() * n);
    let rejected = 0;
    let accepted = 0;
    for (let k = 0; k < 1000; k++) {
      let buf = Buffer.from(valid);
      const kind = k % 6;
      if (kind === 0) {
        for (let f = 0, m = 1 + pick(3); f < m; f++) buf[8 + pick(headerEnd - 8)] = pick(256); // header bytes
      } else if (kind === 1) {
        const digits = [...buf.subarray(0, headerEnd).entries()].filter(([i, b]) => i >= 8 && b >= 48 && b <= 57);
        const [at] = digits[pick(digits.length)];
        buf[at] = 48 + pick(10); // a number in the header changed to another
      } else if (kind === 2) {
        buf = buf.subarray(0, pick(buf.length)); // truncated
      } else if (kind === 3) {
        buf.writeBigUInt64LE(BigInt(pick(2 ** 31)) * (r() < 0.5 ? 1n : 1n << BigInt(pick(33))), 0); // length field
      } else if (kind === 4) {
        buf[pick(buf.length)] ^= 1 << pick(8); // any single bit
      } else {
        const at = 8 + pick(headerEnd - 8); // bytes inserted into or deleted from the header
        buf =
          r() < 0.5
            ? Buffer.concat([buf.subarray(0, at), Buffer.from([pick(128)]), buf.subarray(at)])
            : Buffer.concat([buf.subarray(0, at), buf.subarray(at + 1)]);
      }
      const path = join(dir, 'fuzz.safetensors');
      writeFileSync(path, buf);
      let got: NativeSafetensorsContents;
      try {
        got = addon().safetensorsRead(path);
      } catch (e) {
        if (!hasCode(e, 'E_CHECKPOINT'))
          throw new Error(`corruption ${k} (kind ${kind}) raised ${(e as { code?: string }).code}: ${(e as Error).message}`, { cause: e });
        rejected++;
        continue;
      }
      accepted++;
      const ref = independentRead(buf);
      expect(ref, `corruption ${k} was accepted but is malformed`).not.toBeNull();
      expect(new Set(got.order)).toEqual(new Set(ref!.keys()));
      for (const name of got.order) {
        const t = got.tensors[name];
        const want = ref!.get(name)!;
        expect(t.shape).toEqual(want.shape);
        const view = t.data;
        const bytes = Buffer.from(view.buffer, view.byteOffset, view.byteLength);
        expect(bytes.equals(want.bytes), `corruption ${k}: tensor ${name} bytes`).toBe(true);
        t.dispose();
      }
    }
    // Both outcomes must actually occur, or the fuzzer is not exercising anything.
    expect(rejected).toBeGreaterThan(300);
    expect(accepted).toBeGreaterThan(50);
    rmSync(join(dir, 'fuzz.safetensors'));
  });

  it('200 corruptions of a whole checkpoint folder: Policy.load rejects with E_CHECKPOINT or scores finite log-probs', async () => {
    const base = checkpointDir(TINY_CONFIG, tinyTensors());
    const valid = readFileSync(join(base, 'model.safetensors'));
    const headerEnd = 8 + Number(valid.readBigUInt64LE(0));
    const r = rng(77);
    const pick = (n: number): number => Math.floor(r() * n);
    const d = tempDir('fuzzdir');
    copyFileSync(join(base, 'config.json'), join(d, 'config.json'));
    let loaded = 0;
    for (let k = 0; k < 200; k++) {
      const buf = Buffer.from(valid);
      if (k % 2 === 0) buf[8 + pick(headerEnd - 8)] = pick(128);
      else buf[headerEnd + pick(buf.length - headerEnd)] = pick(256); // data bytes: may become NaN, still a valid file
      writeFileSync(join(d, 'model.safetensors'), buf);
      try {
        await using p = await Policy.load(d);
        const lp = await p.logprobs([[1, 5, 3]]);
        expect(lp[0].length).toBe(2);
        loaded++;
      } catch (e) {
        if (!hasCode(e, 'E_CHECKPOINT')) throw new Error(`corruption ${k} raised ${(e as { code?: string }).code}: ${(e as Error).message}`, { cause: e });
      }
    }
    expect(loaded).toBeGreaterThan(50);
  });
});
