// The engine behind the rollout's PolicyClient boundary (src/rollout/policy.ts): prompt text in, the chat-templated
// prompt's ids, the sampled response's ids, log-probs and text out. Many trials call `generate` concurrently; the
// engine batches them.
import { LamerError } from '../errors.js';
import type { Policy } from '../model/policy.js';
import type { GenerateRequest, GenerateResult, PolicyClient } from '../rollout/policy.js';
import { Engine, type EngineOptions } from './engine.js';
import { timeBook } from '../util/timing.js';

export interface EngineClientOptions extends EngineOptions {
  /** Wrap the prompt as one user message in the checkpoint's chat template (default true when it has one). */
  chat?: boolean;
  /** Passed to the chat template (Qwen3: false closes an empty think block in the generation prompt). Default false. */
  enableThinking?: boolean;
}

export class EngineClient implements PolicyClient {
  readonly engine: Engine;
  readonly #policy: Policy;
  readonly #chat: boolean;
  readonly #enableThinking: boolean;
  readonly #ownsEngine: boolean;

  /** Uses `engine` when given (shared with other clients), else creates one from `options`. */
  constructor(policy: Policy, options: EngineClientOptions = {}, engine?: Engine) {
    if (!policy.tokenizer) throw new LamerError('E_ARG', 'EngineClient needs a checkpoint with tokenizer.json (prompts are text)');
    const { chat, enableThinking, ...engineOptions } = options;
    this.#policy = policy;
    this.#chat = chat ?? policy.chatTemplate !== null;
    if (this.#chat && !policy.chatTemplate) throw new LamerError('E_ARG', 'EngineClient: chat requested but the checkpoint has no chat template');
    this.#enableThinking = enableThinking ?? false;
    this.#ownsEngine = engine === undefined;
    this.engine = engine ?? new Engine(policy, engineOptions);
  }

  /** The prompt's token ids as the model sees them (after the chat template). */
  promptIds(prompt: string): Int32Array {
    return timeBook.time('tokenize', () => this.#promptIds(prompt));
  }

  #promptIds(prompt: string): Int32Array {
    const text = this.#chat
      ? this.#policy.renderChat([{ role: 'user', content: prompt }], { addGenerationPrompt: true, enableThinking: this.#enableThinking })
      : prompt;
    return Int32Array.from(this.#policy.encode(text));
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const promptIds = this.promptIds(request.prompt);
    const r = await this.engine.generate({
      promptIds,
      maxNewTokens: request.maxNewTokens,
      temperature: request.temperature,
      topP: request.topP,
      topK: request.topK,
      stop: request.stop,
      seed: request.seed,
      signal: request.signal,
    });
    // The text leaves out a stop token (<|im_end|> and the like); the ids and log-probs keep it, so training
    // teaches the model to stop.
    const textIds = r.stoppedBy && 'tokenId' in r.stoppedBy ? r.tokens.subarray(0, r.tokens.length - 1) : r.tokens;
    return {
      text: timeBook.time('tokenize', () => this.#policy.decode(textIds, { skipSpecialTokens: true })),
      promptIds,
      responseIds: r.tokens,
      logprobs: r.logprobs,
      finishReason: r.finishReason,
    };
  }

  /** Disposes the engine if this client created it. */
  dispose(): void {
    if (this.#ownsEngine) this.engine.dispose();
  }
}
