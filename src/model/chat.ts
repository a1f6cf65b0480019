// Chat templates: the checkpoint's own Jinja template rendered with @huggingface/jinja, with the variables
// transformers' apply_chat_template passes, so the prompt text (and its ids) match what the model was trained on.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Template } from '@huggingface/jinja';
import { LamerError } from '../errors.js';
import { readJsonFile, readRegularFile } from '../util/fs.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool' | (string & {});
  content: string;
  /** An assistant turn's tool calls, as OpenAI's API and transformers' templates spell them. */
  tool_calls?: Array<{ id?: string; type?: 'function'; function: { name: string; arguments: string | Record<string, unknown> } }>;
  /** A tool turn's call id and tool name. */
  tool_call_id?: string;
  name?: string;
}

export interface ChatRenderOptions {
  /** Append the assistant turn header so the model writes the reply (default true). */
  addGenerationPrompt?: boolean;
  /**
   * Qwen3: false makes the generation prompt end with an empty think block; true or unset leaves thinking on.
   * Unset passes no variable at all, as transformers does when the argument is not given.
   */
  enableThinking?: boolean;
  /** Tool definitions ({type: 'function', function: {name, description, parameters}}) for templates that list them. */
  tools?: readonly unknown[];
}

type Json = Record<string, unknown>;

const require = createRequire(import.meta.url);
/** How long a checkpoint's chat template may take to render the probe conversation (see ChatTemplate.#probe). */
const PROBE_MS = 2000;
const PROBE_MAX_CHARS = 1 << 20;
/** How long the probe's worker may take to start (a loaded machine), before the template's own time counts. */
const PROBE_START_MS = 20_000;
const PROBE_WORKER = `
const { workerData } = require('node:worker_threads');
const { Template } = require(workerData.jinja);
const { state, source, specials, maxChars } = workerData;
Atomics.store(state, 1, 1);
Atomics.notify(state, 1);
let result = 2;
try {
  const messages = [
    { role: 'system', content: 'system' }, { role: 'user', content: 'question' },
    { role: 'assistant', content: 'answer' }, { role: 'user', content: 'question' },
  ];
  const text = new Template(source).render({ messages, add_generation_prompt: true, ...specials });
  result = text.length > maxChars ? 3 : 1;
} catch {}
Atomics.store(state, 0, result);
Atomics.notify(state, 0);
`;

function tokenText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as Json).content === 'string') return (v as Json).content as string;
  return undefined;
}

export class ChatTemplate {
  readonly source: string;
  readonly #template: Template;
  readonly #specials: Record<string, string | undefined>;

  /** `source` is the Jinja text; `tokenizerConfig` supplies bos/eos/pad/unk token strings the template may use. */
  constructor(source: string, tokenizerConfig: Json = {}) {
    this.source = source;
    try {
      this.#template = new Template(source);
    } catch (e) {
      throw new LamerError('E_CHECKPOINT', `chat template does not parse: ${(e as Error).message}`, { cause: e });
    }
    this.#specials = {
      bos_token: tokenText(tokenizerConfig.bos_token),
      eos_token: tokenText(tokenizerConfig.eos_token),
      pad_token: tokenText(tokenizerConfig.pad_token),
      unk_token: tokenText(tokenizerConfig.unk_token),
    };
  }

  /**
   * The template of a checkpoint folder: chat_template.jinja when present (transformers 5 writes it there),
   * else tokenizer_config.json's chat_template (a string, or a list of {name, template} where `name` picks one,
   * default "default"). Null when the checkpoint has none.
   */
  static load(dir: string, name = 'default'): ChatTemplate | null {
    const configPath = join(dir, 'tokenizer_config.json');
    const parsed = existsSync(configPath) ? readJsonFile(configPath) : {};
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new LamerError('E_CHECKPOINT', `${configPath}: expected a JSON object`);
    const config = parsed as Json;
    const jinjaPath = join(dir, 'chat_template.jinja');
    const source = existsSync(jinjaPath) ? readRegularFile(jinjaPath) : ChatTemplate.pick(config.chat_template, name, configPath);
    if (source === null) return null;
    const template = new ChatTemplate(source, config);
    template.#probe(existsSync(jinjaPath) ? jinjaPath : configPath);
    return template;
  }

  /**
   * A checkpoint's template is a program: one that loops without bound (or builds a huge string) would hang or exhaust
   * every later render. Before it is used, it renders a short conversation in a worker thread that is stopped after
   * PROBE_MS; a template that has not finished by then, or whose text exceeds PROBE_MAX_CHARS, is refused
   * (E_CHECKPOINT). A template that raises on the probe's conversation is not refused here: render() reports it.
   */
  #probe(file: string): void {
    const state = new Int32Array(new SharedArrayBuffer(8));
    const worker = new Worker(PROBE_WORKER, {
      eval: true,
      workerData: { jinja: require.resolve('@huggingface/jinja'), source: this.source, specials: this.#specials, state, maxChars: PROBE_MAX_CHARS },
    });
    // The worker sets state[1] once it has loaded the renderer (the time limit counts from then), and state[0] to 1
    // (rendered), 2 (raised) or 3 (too long), waking this thread each time.
    Atomics.wait(state, 1, 0, PROBE_START_MS);
    const outcome = Atomics.wait(state, 0, 0, PROBE_MS);
    void worker.terminate();
    if (outcome === 'timed-out') {
      throw new LamerError(
        'E_CHECKPOINT',
        `${file}: the chat template did not finish rendering a 4-message conversation within ${PROBE_MS} ms (a loop without bound?); fix or remove the template`,
      );
    }
    if (state[0] === 3) {
      throw new LamerError(
        'E_CHECKPOINT',
        `${file}: the chat template renders a 4-message conversation to more than ${PROBE_MAX_CHARS} characters; fix or remove the template`,
      );
    }
  }

  /** The template text from a tokenizer_config.json `chat_template` value. */
  static pick(value: unknown, name: string, file = 'tokenizer_config.json'): string | null {
    if (value === undefined || value === null) return null;
    if (typeof value === 'string') return value;
    if (Array.isArray(value)) {
      const names: string[] = [];
      for (const item of value) {
        const entry = item as Json;
        if (typeof entry?.name === 'string') names.push(entry.name);
        if (entry?.name === name && typeof entry.template === 'string') return entry.template;
      }
      throw new LamerError('E_CHECKPOINT', `${file}: chat_template has no template named "${name}" (found: ${names.join(', ') || 'none'})`);
    }
    throw new LamerError('E_CHECKPOINT', `${file}: field 'chat_template': expected a string or a list of {name, template}`);
  }

  render(messages: ChatMessage[], options: ChatRenderOptions = {}): string {
    const vars: Record<string, unknown> = {
      messages,
      add_generation_prompt: options.addGenerationPrompt ?? true,
      ...this.#specials,
    };
    if (options.enableThinking !== undefined) vars.enable_thinking = options.enableThinking;
    if (options.tools !== undefined && options.tools.length > 0) vars.tools = options.tools;
    try {
      return this.#template.render(vars);
    } catch (e) {
      throw new LamerError('E_ARG', `chat template failed to render: ${(e as Error).message}`, { cause: e });
    }
  }
}
