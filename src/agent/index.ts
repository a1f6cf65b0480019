// Public API of the agent side: inter-episode memory and prompt assembly (variants of the play prompt).
export { DEFAULT_MEMORY_MODE, MEMORY_MODES, TrialMemory, isMemoryMode, memoryUsesReflection } from './memory.js';
export type { MemoryMode, TrialMemoryOptions } from './memory.js';
export { PROMPT_VARIANTS, agentPlayPrompt, agentReflectPrompt, isPromptVariant, toZeroShot } from './prompts.js';
export type { AgentPlayPromptInput, AgentReflectPromptInput, PromptVariant } from './prompts.js';
