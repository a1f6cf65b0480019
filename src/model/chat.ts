// Chat templates: the checkpoint's own Jinja template rendered with @huggingface/jinja, with the variables
// transformers' apply_chat_template passes, so the prompt text (and its ids) match what the model was trained on.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { LamerError } from '../errors.js';
import { readJsonFile, readRegularFile } from '../util/fs.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | (string & {});
  content: string;
}

export interface ChatRenderOptions {
  /** Append the assistant turn header so the model writes the reply (default true). */
  addGenerationPrompt?: boolean;
  /**
   * Qwen3: false makes the generation prompt end with an empty think block; true or unset leaves thinking on.
   * Unset passes no variable at all, as transformers does when the argument is not given.
   */
  enableThinking?: boolean;
}

type Json = Record<string, unknown>;

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
    if (existsSync(jinjaPath)) return new ChatTemplate(readRegularFile(jinjaPath), config);
    const source = ChatTemplate.pick(config.chat_template, name, configPath);
    return source === null ? null : new ChatTemplate(source, config);
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
    try {
      return this.#template.render(vars);
    } catch (e) {
      throw new LamerError('E_ARG', `chat template failed to render: ${(e as Error).message}`, { cause: e });
    }
  }
}
