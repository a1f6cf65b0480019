// Public surface of the model concern (re-exported by src/index.ts).
export { Policy } from './policy.js';
export type { ComputeDType, LogprobsBatch, PolicyInitOptions, PolicyLoadOptions, SaveOptions } from './policy.js';
export { parseModelConfig, parameterCount } from './config.js';
export type { CheckpointDType, ModelConfig, ModelType } from './config.js';
export { TextTokenizer } from './tokenizer.js';
export { ChatTemplate } from './chat.js';
export type { ChatMessage, ChatRenderOptions } from './chat.js';
export { presetCheckpoint, PRESETS, QWEN3_IDS } from './presets.js';
export type { PresetName, TokenizerChoice } from './presets.js';
export { buildCompactTokenizer } from './compact-tokenizer.js';
