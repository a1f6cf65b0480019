// LoRA without peft to compare with: adapters it cannot apply are refused by name, and a model with an adapter
// attached saves only through saveAdapter (test/parity/model/lora.test.ts compares LoRA with peft).
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Policy } from '../../../src/model/policy.js';
import { presetCheckpoint } from '../../../src/model/presets.js';
import { LamerError } from '../../../src/errors.js';
import { removeTempDirs, tempDir } from '../../helpers/index.js';

afterAll(removeTempDirs);

describe('LoRA without peft', () => {
  it('refuses adapters it cannot apply, by name, and save() with an adapter attached', async () => {
    const preset = await presetCheckpoint('tiny', 'compact');
    await using policy = await Policy.init(preset.config, { seed: 1, assets: preset.assets });
    await policy.addLora({ r: 2, alpha: 4, dropout: 0, targets: 'all-linear', seed: 3 });
    const dir = tempDir('lora-refuse');
    await expect(policy.save(dir)).rejects.toThrow(/saveAdapter/);
    await policy.saveAdapter(dir, { baseModel: null });
    // An adapter naming no base cannot open on its own.
    await expect(Policy.load(dir)).rejects.toThrow(/base_model_name_or_path/);
    const config = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8')) as Record<string, unknown>;
    for (const [field, value] of [
      ['use_dora', true],
      ['bias', 'all'],
      ['modules_to_save', ['lm_head']],
      ['rank_pattern', { q_proj: 8 }],
    ] as const) {
      const bad = tempDir('lora-bad');
      mkdirSync(bad, { recursive: true });
      writeFileSync(join(bad, 'adapter_config.json'), JSON.stringify({ ...config, [field]: value }));
      writeFileSync(join(bad, 'adapter_model.safetensors'), readFileSync(join(dir, 'adapter_model.safetensors')));
      const err = await policy.loadAdapter(bad).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LamerError);
      expect((err as LamerError).code).toBe('E_CHECKPOINT');
      expect((err as Error).message).toContain(field);
    }
    expect(existsSync(join(dir, 'adapter_model.safetensors'))).toBe(true);
  });
});
