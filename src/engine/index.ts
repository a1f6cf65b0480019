// Generation engine: continuous batching over the native KV-cache generator.
export { Engine, type EngineOptions, type EngineRequest, type EngineResult, type EngineStats, type FinishReason } from './engine.js';
export { EngineClient, type EngineClientOptions } from './client.js';
