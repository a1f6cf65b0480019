// Hostile adapter folders end to end (the checks themselves: test/model/lora-adapter-checks.test.ts): a NaN or
// integer-typed tensor in adapter_model.safetensors is refused when the adapter loads, naming the file and the tensor,
// so `lamer merge` writes nothing; and `lamer merge --out` through a symbolic link to the base is refused, the base
// left as it was; and target_modules that peft would refuse, or that leave out a module the tensors adapt, are refused
// at load.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Policy } from '../../../src/model/policy.js';
import { presetCheckpoint } from '../../../src/model/presets.js';
import { LamerError } from '../../../src/errors.js';
import { command as merge } from '../../../src/cli/commands/merge.js';
import { removeTempDirs, tempDir } from '../../helpers/index.js';

afterAll(removeTempDirs);

/** Rewrites a safetensors file: `edit` gets each tensor's header entry and its bytes, and may change either in place. */
function patchSafetensors(file: string, edit: (name: string, entry: { dtype: string }, bytes: Buffer) => void): void {
  const buf = readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8')) as Record<string, { dtype: string; data_offsets: [number, number] }>;
  const body = Buffer.from(buf.subarray(8 + n));
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    edit(name, e, body.subarray(e.data_offsets[0], e.data_offsets[1]));
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  writeFileSync(file, Buffer.concat([len, Buffer.from(text), body]));
}

async function fixture(): Promise<{ base: string; adapter: string }> {
  const preset = await presetCheckpoint('tiny', 'compact');
  await using policy = await Policy.init(preset.config, { seed: 1, assets: preset.assets });
  const base = tempDir('lora-hostile-base');
  await policy.save(base);
  await policy.addLora({ r: 2, alpha: 4, dropout: 0, targets: ['q_proj', 'v_proj'], seed: 3 });
  const adapter = tempDir('lora-hostile-adapter');
  await policy.saveAdapter(adapter, { baseModel: base });
  return { base, adapter };
}

function copyAdapter(from: string): string {
  const dir = tempDir('lora-hostile-copy');
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(from)) writeFileSync(join(dir, f), readFileSync(join(from, f)));
  return dir;
}

describe('hostile LoRA adapters', () => {
  it('refuses a NaN or integer-typed adapter at load, and merge writes nothing', async () => {
    const { base, adapter } = await fixture();
    const target = 'base_model.model.model.layers.1.self_attn.v_proj.lora_A.weight';
    const nan = copyAdapter(adapter);
    patchSafetensors(join(nan, 'adapter_model.safetensors'), (name, e, bytes) => {
      if (name === target) bytes.writeFloatLE(NaN, 4);
    });
    const integer = copyAdapter(adapter);
    patchSafetensors(join(integer, 'adapter_model.safetensors'), (name, e) => {
      if (name === target) e.dtype = 'I32'; // same width as F32: the file stays well formed
    });
    await using policy = await Policy.load(base, { device: 'cpu', dtype: 'float32', paramDtype: 'float32' });
    for (const [dir, why] of [
      [nan, /holds NaN or infinite/],
      [integer, /is of dtype int32/],
    ] as const) {
      const err = await policy.loadAdapter(dir).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LamerError);
      expect((err as LamerError).code).toBe('E_CHECKPOINT');
      expect((err as Error).message).toContain(join(dir, 'adapter_model.safetensors'));
      expect((err as Error).message).toContain(target);
      expect((err as Error).message).toMatch(why);
      const out = join(tempDir('lora-hostile-out'), 'merged');
      const mergeErr = await merge.run(['--model', base, '--adapter', dir, '--out', out]).catch((e: unknown) => e);
      expect((mergeErr as LamerError).code).toBe('E_CHECKPOINT');
      expect(existsSync(out)).toBe(false);
    }
    // The untouched adapter loads and merges.
    await policy.loadAdapter(adapter);
    expect(await merge.run(['--model', base, '--adapter', adapter, '--out', join(tempDir('lora-hostile-ok'), 'merged')])).toBe(0);
  });

  it('refuses target_modules that peft refuses or that leave out an adapted module, and merge writes nothing', async () => {
    const { base, adapter } = await fixture();
    const config = JSON.parse(readFileSync(join(adapter, 'adapter_config.json'), 'utf8')) as Record<string, unknown>;
    for (const [value, why] of [
      [5, /expected a module name pattern or a non-empty list/],
      [['no_such_proj'], /entry "no_such_proj" names no module of the model/],
      [['q_proj'], /does not name module model\.layers\.0\.self_attn\.v_proj/],
    ] as const) {
      const dir = copyAdapter(adapter);
      writeFileSync(join(dir, 'adapter_config.json'), JSON.stringify({ ...config, target_modules: value }));
      const out = join(tempDir('lora-hostile-out'), 'merged');
      const err = await merge.run(['--model', base, '--adapter', dir, '--out', out]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LamerError);
      expect((err as LamerError).code).toBe('E_CHECKPOINT');
      expect((err as Error).message).toContain(join(dir, 'adapter_config.json'));
      expect((err as Error).message).toContain("'target_modules'");
      expect((err as Error).message).toMatch(why);
      expect(existsSync(out)).toBe(false);
    }
  });

  it('refuses merge --out through a symbolic link to the base (or to a folder under a linked parent)', async () => {
    const { base, adapter } = await fixture();
    const before = Object.fromEntries(readdirSync(base).map((f) => [f, statSync(join(base, f)).mtimeMs]));
    const links = tempDir('lora-hostile-links');
    symlinkSync(base, join(links, 'to-base'));
    symlinkSync(join(base, '..'), join(links, 'to-parent'));
    const baseName = base.slice(base.lastIndexOf('/') + 1);
    for (const out of [join(links, 'to-base'), join(links, 'to-parent', baseName), join(links, 'to-base', '.')]) {
      expect(await merge.run(['--model', base, '--adapter', adapter, '--out', out])).toBe(2);
    }
    expect(Object.fromEntries(readdirSync(base).map((f) => [f, statSync(join(base, f)).mtimeMs]))).toEqual(before);
  });
});
