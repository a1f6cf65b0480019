import { describe, expect, it } from 'vitest';
import { PRESETS, presetCheckpoint } from '../../src/model/presets.js';
import { parameterCount } from '../../src/model/config.js';
import { loadConfig } from '../../src/train/config.js';
// The compact-webshop vocabulary is handed to the model layer by the WebShop module.
import '../../src/envs/webshop/index.js';

describe('model presets', () => {
  it('mini sits between tiny and small: twice tiny width, as many layers, about 2.6x its multiply-adds a token', async () => {
    const count = async (preset: 'tiny' | 'mini' | 'small') => {
      const { config } = await presetCheckpoint(preset, 'compact-webshop');
      expect(config.hiddenSize).toBe(PRESETS[preset].hidden_size);
      expect(config.numAttentionHeads * config.headDim).toBe(config.hiddenSize);
      return { config, params: parameterCount(config) };
    };
    const tiny = await count('tiny');
    const mini = await count('mini');
    const small = await count('small');
    expect(mini.config.numHiddenLayers).toBe(tiny.config.numHiddenLayers);
    expect(mini.config.vocabSize).toBe(tiny.config.vocabSize);
    expect(mini.params / tiny.params).toBeGreaterThan(2);
    expect(mini.params / tiny.params).toBeLessThan(3);
    expect(small.params / mini.params).toBeGreaterThan(3);
  });

  it('refuses an unknown preset with E_CONFIG naming the choices, in the library and in a run config', async () => {
    await expect(presetCheckpoint('medium' as never)).rejects.toMatchObject({ code: 'E_CONFIG', message: expect.stringContaining('tiny, mini, small') });
    await expect(presetCheckpoint('toString' as never)).rejects.toMatchObject({ code: 'E_CONFIG' });
    expect(() => loadConfig('default', ['model.init.preset=medium'])).toThrow(
      expect.objectContaining({ code: 'E_CONFIG', message: expect.stringContaining('preset') }),
    );
    expect(loadConfig('default', ['model.init.preset=mini']).model.init.preset).toBe('mini');
  });
});
