// A base checkpoint whose weights hold NaN or infinite values is refused when it loads (E_CHECKPOINT naming the file
// and the tensor), not loaded to give NaN log-probs: in model.safetensors, in a shard of a sharded checkpoint, in
// bfloat16 as in float32, and where a finite value is beyond the range of the dtype the weights are loaded as; a finite
// value so large that the forward overflows gives a coded error from logprobs instead of NaN log-probs.
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Policy } from '../../../src/model/policy.js';
import { presetCheckpoint } from '../../../src/model/presets.js';
import { LamerError } from '../../../src/errors.js';
import { editSafetensors } from '../../helpers/safetensors.js';
import { removeTempDirs, tempDir } from '../../helpers/index.js';

afterAll(removeTempDirs);

const TARGET = 'model.layers.1.mlp.down_proj.weight';

async function base(options: { dtype?: 'float32' | 'bfloat16'; maxShardBytes?: number } = {}): Promise<string> {
  const preset = await presetCheckpoint('tiny', 'compact');
  await using policy = await Policy.init(preset.config, { seed: 1, assets: preset.assets });
  const dir = tempDir('base-finite');
  await policy.save(dir, { dtype: options.dtype ?? 'float32', maxShardBytes: options.maxShardBytes });
  return dir;
}

/** Sets element 3 of TARGET to `value`, in float32 or bfloat16 bits as the file holds it. */
function poison(file: string, value: number): void {
  editSafetensors(file, (st) => {
    const e = st.tensors.get(TARGET)!;
    if (e.dtype === 'F32') e.bytes.writeFloatLE(value, 12);
    else {
      const f = Buffer.alloc(4);
      f.writeFloatLE(value, 0);
      e.bytes.writeUInt16LE(f.readUInt16LE(2), 6);
    }
  });
}

async function loadError(dir: string, options: Parameters<typeof Policy.load>[1] = {}): Promise<LamerError> {
  const err = await Policy.load(dir, { device: 'cpu', ...options }).then(
    (p) => {
      p.dispose();
      return null;
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LamerError);
  return err as LamerError;
}

describe('non-finite base weights', () => {
  it('refuses NaN, +Inf and -Inf in model.safetensors, naming the file and the tensor', async () => {
    for (const [dtype, value] of [
      ['float32', NaN],
      ['float32', Infinity],
      ['bfloat16', -Infinity],
      ['bfloat16', NaN],
    ] as const) {
      const dir = await base({ dtype });
      poison(join(dir, 'model.safetensors'), value);
      const err = await loadError(dir);
      expect(err.code, `${dtype} ${value}`).toBe('E_CHECKPOINT');
      expect(err.message).toContain(join(dir, 'model.safetensors'));
      expect(err.message).toContain(`'${TARGET}'`);
      expect(err.message).toMatch(/NaN or infinite/);
    }
  });

  it('names the shard that holds the tensor in a sharded checkpoint', async () => {
    const dir = await base({ maxShardBytes: 20_000 });
    const index = JSON.parse(readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8')) as { weight_map: Record<string, string> };
    const shard = join(dir, index.weight_map[TARGET]);
    poison(shard, NaN);
    const err = await loadError(dir);
    expect(err.code).toBe('E_CHECKPOINT');
    expect(err.message).toContain(shard);
    expect(err.message).toContain(`'${TARGET}'`);
  });

  it('refuses a finite float32 value that rounds to infinity in the bfloat16 the weights load as', async () => {
    const dir = await base();
    poison(join(dir, 'model.safetensors'), 3.4e38); // above bfloat16's largest value (3.39e38) by more than half a step
    const err = await loadError(dir, { dtype: 'bfloat16', paramDtype: 'bfloat16' });
    expect(err.code).toBe('E_CHECKPOINT');
    expect(err.message).toContain(`'${TARGET}'`);
    expect(err.message).toMatch(/bfloat16/);
    // The same file loads as float32, where the value is finite.
    await using policy = await Policy.load(dir, { device: 'cpu', dtype: 'float32', paramDtype: 'float32' });
    expect(policy.config.numHiddenLayers).toBeGreaterThan(1);
  });

  it('a finite weight so large the forward overflows: log-probs are refused with a code, not returned as NaN', async () => {
    const dir = await base();
    // Finite values, as a flipped exponent byte makes them: a row of layer 0's gate projection at -1.4e38 drives SiLU to
    // -inf * 0 for every token (one such value in the last layer's down projection gives finite, if useless, scores).
    editSafetensors(join(dir, 'model.safetensors'), (st) => {
      const e = st.tensors.get('model.layers.0.mlp.gate_proj.weight')!;
      for (let i = 0; i < 64; i++) e.bytes.writeFloatLE(-1.4e38, 4 * i);
    });
    await using policy = await Policy.load(dir, { device: 'cpu' });
    const err = await policy.logprobs({ prompts: [[3, 4, 5]], completions: [[6, 7]] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LamerError);
    expect((err as LamerError).code).toBe('E_CHECKPOINT');
    expect((err as LamerError).message).toMatch(/non-finite log-prob .* sequence 0, token [34]/);
    expect((err as LamerError).message).toContain(dir);
  });

  it('loads the untouched checkpoint', async () => {
    await using policy = await Policy.load(await base(), { device: 'cpu' });
    expect(policy.config.numHiddenLayers).toBeGreaterThan(1);
  });
});
