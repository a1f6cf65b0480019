// What an adapter folder may hold (issue: hostile adapters): adapter_config.json read with peft's defaults and strict
// types, and adapter tensors refused when they are not floating point, not finite, or large enough that the update
// scale B A overflows. Pure TypeScript: no addon (test/native/model/lora-hostile.test.ts loads and merges such
// adapters end to end).
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkAdapterTensors, PEFT_DEFAULT_LORA_ALPHA, readAdapterConfig, type AdapterTensor } from '../../src/model/lora.js';
import { LamerError } from '../../src/errors.js';
import { removeTempDirs, tempDir } from '../helpers/index.js';

afterAll(removeTempDirs);

const A = 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight';
const B = 'base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight';
const model = { numHiddenLayers: 2 };

function configDir(config: Record<string, unknown>): string {
  const dir = tempDir('lora-config');
  writeFileSync(join(dir, 'adapter_config.json'), JSON.stringify(config));
  return dir;
}

function codeOf(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LamerError);
    return { code: (e as LamerError).code, message: (e as Error).message };
  }
  throw new Error('expected a LamerError, nothing was thrown');
}

const f32 = (values: number[]): AdapterTensor => ({ dtype: 'float32', shape: [values.length], data: Float32Array.from(values) });
const opts = { r: 2, alpha: 4, rslora: false };

describe('adapter_config.json', () => {
  it("takes peft's default lora_alpha (8, not r) when the field is missing", () => {
    const { options } = readAdapterConfig(configDir({ peft_type: 'LORA', r: 4, target_modules: ['q_proj'] }), [A, B], model);
    expect(PEFT_DEFAULT_LORA_ALPHA).toBe(8);
    expect(options.alpha).toBe(8);
    expect(options.rslora).toBe(false);
  });

  it('refuses a use_rslora that is not a boolean, naming the field', () => {
    for (const value of ['yes', 1, 'true', {}]) {
      const dir = configDir({ peft_type: 'LORA', r: 4, lora_alpha: 8, use_rslora: value, target_modules: ['q_proj'] });
      const { code, message } = codeOf(() => readAdapterConfig(dir, [A, B], model));
      expect(code).toBe('E_CHECKPOINT');
      expect(message).toContain("'use_rslora'");
      expect(message).toContain(join(dir, 'adapter_config.json'));
    }
    expect(readAdapterConfig(configDir({ r: 4, use_rslora: true, target_modules: ['q_proj'] }), [A, B], model).options.rslora).toBe(true);
    expect(readAdapterConfig(configDir({ r: 4, use_rslora: null, target_modules: ['q_proj'] }), [A, B], model).options.rslora).toBe(false);
  });
});

describe('adapter_config.json target_modules', () => {
  const withTargets = (target_modules: unknown) =>
    configDir(target_modules === undefined ? { peft_type: 'LORA', r: 4 } : { peft_type: 'LORA', r: 4, target_modules });

  it('refuses what peft refuses (not a name, a pattern or a list of names; a name the model lacks), naming the file and the field', () => {
    for (const value of [5, ['no_such_proj'], [], ['q_proj', 7], null, undefined, { q_proj: true }, '(q_proj', ['lm_head'], ['layers.2.self_attn.q_proj']]) {
      const dir = withTargets(value);
      const { code, message } = codeOf(() => readAdapterConfig(dir, [A, B], model));
      expect(code, JSON.stringify(value)).toBe('E_CHECKPOINT');
      expect(message).toContain(join(dir, 'adapter_config.json'));
      expect(message).toContain("'target_modules'");
    }
  });

  it('matches a pattern in linear time: one that backtracks exponentially ends at once, one that needs backtracking is refused', () => {
    const started = Date.now();
    for (const value of ['(.*)*x', '([a-z.]+)+X', '(a|a)*x']) {
      const { code, message } = codeOf(() => readAdapterConfig(withTargets(value), [A, B], model));
      expect(code).toBe('E_CHECKPOINT');
      expect(message).toContain('does not name module model.layers.0.self_attn.q_proj');
    }
    expect(Date.now() - started).toBeLessThan(2000);
    for (const value of ['(q)\\1_proj', '.*(?<=q)_proj']) {
      const { code, message } = codeOf(() => readAdapterConfig(withTargets(value), [A, B], model));
      expect(code).toBe('E_CHECKPOINT');
      expect(message).toContain('is not a regular expression this program can read');
    }
  });

  it('refuses target_modules that leave out a module the tensors adapt (peft would drop its weights)', () => {
    for (const value of [['v_proj'], 'model\\.layers\\.1\\..*', '.*v_proj', ['layers.1.self_attn.q_proj']]) {
      const { code, message } = codeOf(() => readAdapterConfig(withTargets(value), [A, B], model));
      expect(code).toBe('E_CHECKPOINT');
      expect(message).toContain('does not name module model.layers.0.self_attn.q_proj');
    }
  });

  it('accepts names, paths, path endings, patterns and all-linear that name every adapted module', () => {
    for (const value of [
      ['q_proj'],
      ['q_proj', 'v_proj', 'down_proj'],
      ['model.layers.0.self_attn.q_proj'],
      ['self_attn.q_proj'],
      'all-linear',
      '.*\\.(q_proj|v_proj)',
      'model\\.layers\\.0\\.self_attn\\.q_proj',
    ]) {
      expect(readAdapterConfig(withTargets(value), [A, B], model).options.modules, JSON.stringify(value)).toEqual(['model.layers.0.self_attn.q_proj']);
    }
  });
});

describe('adapter tensors', () => {
  const file = '/some/adapter/adapter_model.safetensors';

  it('accepts finite float adapters of every float dtype', () => {
    expect(() => checkAdapterTensors(file, { [A]: f32([0.5, -0.25]), [B]: f32([0, 1]) }, opts, 'float32')).not.toThrow();
    const bf16 = { dtype: 'bfloat16', shape: [2], data: Uint16Array.from([0x3f80, 0xbf00]) }; // 1, -0.5
    const f16 = { dtype: 'float16', shape: [2], data: Uint16Array.from([0x3c00, 0x0001]) }; // 1, a subnormal
    expect(() => checkAdapterTensors(file, { [A]: bf16, [B]: f16 }, opts, 'float32')).not.toThrow();
  });

  it('refuses NaN and infinite values, naming the file and the tensor', () => {
    const cases: Record<string, AdapterTensor>[] = [
      { [A]: f32([0, NaN]), [B]: f32([0, 0]) },
      { [A]: f32([0, 0]), [B]: f32([Infinity, 0]) },
      { [A]: { dtype: 'bfloat16', shape: [1], data: Uint16Array.from([0x7fc0]) }, [B]: f32([0]) }, // bf16 NaN
      { [A]: { dtype: 'float16', shape: [1], data: Uint16Array.from([0xfc00]) }, [B]: f32([0]) }, // fp16 -inf
      // A float64 value beyond float32's range turns infinite in a float32 adapter.
      { [A]: { dtype: 'float64', shape: [1], data: Float64Array.from([1e39]) }, [B]: f32([0]) },
    ];
    for (const tensors of cases) {
      const { code, message } = codeOf(() => checkAdapterTensors(file, tensors, opts, 'float32'));
      expect(code).toBe('E_CHECKPOINT');
      expect(message).toContain(file);
      expect(message).toMatch(/tensor 'base_model\.model\.model\.layers\.0\.self_attn\.q_proj\.lora_[AB]\.weight' holds NaN or infinite/);
    }
    // The same float64 value is finite in a float64 adapter.
    const big = { [A]: { dtype: 'float64', shape: [1], data: Float64Array.from([1e39]) }, [B]: f32([0]) };
    expect(() => checkAdapterTensors(file, big, opts, 'float64')).not.toThrow();
  });

  it('refuses integer-typed adapters instead of converting them', () => {
    for (const dtype of ['int32', 'int64', 'uint8', 'bool']) {
      const t: AdapterTensor = { dtype, shape: [2], data: Int32Array.from([1, 2]) };
      const { code, message } = codeOf(() => checkAdapterTensors(file, { [A]: t, [B]: f32([0, 0]) }, opts, 'float32'));
      expect(code).toBe('E_CHECKPOINT');
      expect(message).toContain(`tensor '${A}' is of dtype ${dtype}`);
    }
  });

  it('refuses weights whose update scale B A overflows float32', () => {
    const { code, message } = codeOf(() => checkAdapterTensors(file, { [A]: f32([1e20, 1]), [B]: f32([1e19, 0]) }, opts, 'float32'));
    expect(code).toBe('E_CHECKPOINT');
    expect(message).toContain(A);
    expect(message).toContain(B);
    expect(message).toMatch(/overflows float32/);
    // Large but bounded: accepted.
    expect(() => checkAdapterTensors(file, { [A]: f32([1e10]), [B]: f32([1e10]) }, opts, 'float32')).not.toThrow();
  });
});
