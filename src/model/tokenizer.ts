// The checkpoint's tokenizer (tokenizer.json + tokenizer_config.json) through @huggingface/tokenizers, which
// implements the same pipeline as the Rust `tokenizers` library transformers uses.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { LamerError } from '../errors.js';
import { readJsonFile } from '../util/fs.js';

type Json = Record<string, unknown>;

function readJson(path: string): Json {
  const v = readJsonFile(path);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new LamerError('E_CHECKPOINT', `${path}: expected a JSON object`);
  return v as Json;
}

/** Every `Regex` pattern in tokenizer.json (pre-tokenizer, normalizer and decoder splits and replaces). */
function regexPatterns(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) regexPatterns(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'Regex' && typeof v === 'string') out.push(v);
      else if (k !== 'vocab' && k !== 'merges' && k !== 'added_tokens') regexPatterns(v, out);
    }
  }
  return out;
}

/**
 * Whether `pattern` has a group that is quantified (`*`, `+`, `{n,}`) and itself contains a quantifier, the shape of
 * exponential backtracking. Escapes and character classes are skipped, so `[+*]` or `\+` count for nothing.
 */
export function nestedQuantifier(pattern: string): boolean {
  const open: boolean[] = []; // per open group: whether a quantifier occurred inside it
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '[') {
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
      continue;
    }
    if (c === '(') open.push(false);
    else if (c === ')') {
      const inner = open.pop() ?? false;
      const next = pattern[i + 1];
      const repeated = next === '*' || next === '+' || (next === '{' && /^\{\d*,\d*\}/.test(pattern.slice(i + 1)) && !/^\{\d+\}/.test(pattern.slice(i + 1)));
      if (inner && repeated) return true;
      if (open.length > 0 && (inner || repeated)) open[open.length - 1] = true;
    } else if ((c === '*' || c === '+' || c === '{') && open.length > 0) {
      open[open.length - 1] = true;
    }
  }
  return false;
}

/** A special-token field of tokenizer_config.json: a string or an AddedToken object {content}. */
function tokenText(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as Json).content === 'string') return (v as Json).content as string;
  return null;
}

/** Tokenizer models of tokenizer.json's `model.type`; the library reads any other as BPE, which would be wrong. */
const MODEL_TYPES = ['BPE', 'WordPiece', 'Unigram', 'WordLevel'];

/** A known model type, and every id in the vocabulary and the added tokens a non-negative integer. */
function checkTokenIds(json: Json): void {
  const model = json.model as Json | undefined;
  const type = model?.type;
  if (type !== undefined && !MODEL_TYPES.includes(type as string)) {
    throw new LamerError('E_CHECKPOINT', `tokenizer.json: model.type ${JSON.stringify(type).slice(0, 40)} is not one of ${MODEL_TYPES.join(', ')}`);
  }
  const bad = (id: unknown): boolean => typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0;
  const vocab = model?.vocab;
  if (vocab && typeof vocab === 'object' && !Array.isArray(vocab)) {
    for (const [token, id] of Object.entries(vocab as Json)) {
      if (bad(id))
        throw new LamerError(
          'E_CHECKPOINT',
          `tokenizer.json: model.vocab gives token ${JSON.stringify(token).slice(0, 40)} the id ${JSON.stringify(id).slice(0, 40)}; ids are integers >= 0`,
        );
    }
  }
  const added = json.added_tokens;
  if (Array.isArray(added)) {
    for (const t of added as Json[]) {
      if (bad(t?.id))
        throw new LamerError('E_CHECKPOINT', `tokenizer.json: an added token has the id ${JSON.stringify(t?.id).slice(0, 40)}; ids are integers >= 0`);
    }
  }
}

export class TextTokenizer {
  readonly #tokenizer: Tokenizer;
  /** tokenizer.json as parsed. */
  readonly json: Json;
  /** tokenizer_config.json as parsed ({} when the file is absent). */
  readonly config: Json;

  constructor(json: Json, config: Json) {
    this.json = json;
    this.config = config;
    // A checkpoint's regular expressions run on every prompt with no time limit the tokenizer library can impose:
    // one whose quantified group holds a quantifier ((a+)+) can take exponential time on a crafted input.
    for (const pattern of regexPatterns(json)) {
      if (nestedQuantifier(pattern)) {
        throw new LamerError(
          'E_CHECKPOINT',
          `tokenizer.json: the pattern ${JSON.stringify(pattern.slice(0, 80))} repeats a group that itself repeats (catastrophic backtracking); tokenizers do not use such patterns`,
        );
      }
    }
    checkTokenIds(json);
    try {
      this.#tokenizer = new Tokenizer(json, config);
    } catch (e) {
      throw new LamerError('E_CHECKPOINT', `tokenizer.json could not be built: ${(e as Error).message}`, { cause: e });
    }
  }

  /** The tokenizer of a checkpoint folder, or null when it has no tokenizer.json. */
  static load(dir: string): TextTokenizer | null {
    const path = join(dir, 'tokenizer.json');
    if (!existsSync(path)) return null;
    const configPath = join(dir, 'tokenizer_config.json');
    return new TextTokenizer(readJson(path), existsSync(configPath) ? readJson(configPath) : {});
  }

  /**
   * Token ids of `text`. Special tokens written in the text (e.g. `<|im_start|>`) become their ids. By default no
   * BOS/EOS is added, as transformers does for text that came out of a chat template.
   */
  encode(text: string, options: { addSpecialTokens?: boolean } = {}): number[] {
    return this.#tokenizer.encode(text, { add_special_tokens: options.addSpecialTokens ?? false }).ids;
  }

  decode(ids: ArrayLike<number>, options: { skipSpecialTokens?: boolean } = {}): string {
    // The tokenizer library refuses an empty list; a response that is only a stop token decodes to ''.
    if (ids.length === 0) return '';
    return this.#tokenizer.decode(Array.from(ids), { skip_special_tokens: options.skipSpecialTokens ?? false });
  }

  tokenToId(token: string): number | undefined {
    return this.#tokenizer.token_to_id(token);
  }

  idToToken(id: number): string | undefined {
    return this.#tokenizer.id_to_token(id);
  }

  /** Number of ids the tokenizer can produce (base vocabulary plus added tokens). */
  get size(): number {
    let max = -1;
    for (const id of this.#tokenizer.get_vocab(true).values()) max = Math.max(max, id);
    return max + 1;
  }

  /** A special token named in tokenizer_config.json ("eos_token", "pad_token", ...), as text. */
  specialToken(field: 'bos_token' | 'eos_token' | 'pad_token' | 'unk_token'): string | null {
    return tokenText(this.config[field]);
  }
}
