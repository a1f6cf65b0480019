// Public surface of the model concern (re-exported by src/index.ts).
export { Policy, isAdapterDir, isCheckpointDir } from './policy.js';
export type { AddLoraOptions, ComputeDType, LogprobsBatch, PolicyInitOptions, PolicyLoadOptions, SaveOptions } from './policy.js';
export { LORA_MODULES, loraModulePaths, loraParameterCount } from './lora.js';
export type { LoraModule, LoraSettings } from './lora.js';
export { parseModelConfig, parameterCount } from './config.js';
export type { CheckpointDType, ModelConfig, ModelType } from './config.js';
export { TextTokenizer } from './tokenizer.js';
export { ChatTemplate } from './chat.js';
export type { ChatMessage, ChatRenderOptions } from './chat.js';
export { presetCheckpoint, PRESETS, QWEN3_IDS } from './presets.js';
export type { PresetName, TokenizerChoice } from './presets.js';
export { buildCompactTokenizer } from './compact-tokenizer.js';
