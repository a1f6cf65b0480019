// The project's compact tokenizer for small CPU models: byte-level BPE (the scheme Qwen uses) with the 256 byte
// symbols, merges for a few hundred words common in the environments' prompts, the chat special tokens, and the
// answer tags as single tokens. Byte-level means any text encodes without an unknown token; the small vocabulary
// keeps the embedding and output layers of a tiny model cheap. Both @huggingface/tokenizers and transformers'
// PreTrainedTokenizerFast load the tokenizer.json it writes. Environments whose symbols a small model must copy add
// their own pieces under their own tokenizer names (`compact-sokoban`).

import { LamerError } from '../errors.js';

/** Special tokens of the chat format (Qwen's names, so prompts look the same for both tokenizers). */
export const CHAT_SPECIAL_TOKENS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'] as const;
/** Tokens kept whole in text and in decoding (special: false). */
export const TAG_TOKENS = ['<think>', '</think>', '<action>', '</action>', '<remark>', '</remark>'] as const;
/**
 * Grid cells `(r, c)` for rows and columns 1..9, each one token (MineSweeper's actions, memory and reflections name
 * cells this way). A cell that is one token is copied from one place in the prompt to another by a single attention
 * lookup; as five tokens (`(`, `4`, `,`, ` 2`, `)`) a small model has to learn to copy a pair of digits in step.
 */
export const CELL_TOKENS: readonly string[] = Array.from({ length: 81 }, (_, i) => `(${1 + Math.floor(i / 9)}, ${1 + (i % 9)})`);

/** A Qwen-style chat template: `<|im_start|>role\ncontent<|im_end|>\n`; enable_thinking=false adds an empty think block. */
export const COMPACT_CHAT_TEMPLATE =
  "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}" +
  "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}";

// Words that recur in the environments' rules, observations and answers; each becomes one token with its leading
// space (byte-level BPE splits text into ' word' pieces).
const WORDS = (
  'the you your is are was to of and or in on at with for from it this that not no one each all next ' +
  'action remark reflection trial task completed episode turn step reward goal rules state observation ' +
  'plan reason answer inside give then cell cells mine board row col open opened safe number around ' +
  'hit left right up down move push box target wall player game search click buy item product price ' +
  'page back go take put heat cool clean examine look room'
).split(/\s+/);
// Capitalised words that start lines; kept without a leading space.
const LINE_WORDS = ['You', 'Your', 'The', 'Goal', 'Rules', 'Currently', 'Row'];

/** GPT-2's reversible map from bytes to printable characters, used by byte-level BPE. */
export function bytesToUnicode(): string[] {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const map: string[] = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    map[b] = printable.includes(b) ? String.fromCharCode(b) : String.fromCharCode(256 + extra++);
  }
  return map;
}

/**
 * What an environment's compact vocabulary adds to the base one: whole words and pieces (BPE merges, so they stay
 * ordinary text) and extra added tokens. Each is a new tokenizer name (`compact-<env>`); the base `compact` tokenizer
 * is built without any of them, byte for byte as before (the default MineSweeper job's headline was measured with it).
 */
export interface CompactVocabulary {
  /** Pieces merged into one token, exactly as the pre-tokenizer cuts them (` #`, `up`, ` (`...). */
  pieces: readonly string[];
  /** Added (non-special) tokens, matched anywhere in the text before pre-tokenization. */
  added?: readonly string[];
  /**
   * Pieces without a leading space that must each stay one token beside many others (`click[navy`): their merges
   * come after all the others, ordered so that none splits another (see bareMerges).
   */
  bare?: readonly string[];
}

/**
 * Sokoban: every grid symbol with its separating space (` #`, ` _`, ` O`, ` X`, ` √`, ` P`, ` S`; the first cell of a
 * row has none), the row separator ` /`, the four moves with and without a leading space (an action starts right
 * after `<action>`), and the words of the compact prompt's fields, so that a board of w x h cells is w x h tokens
 * and a move is one.
 */
const SOKOBAN_VOCABULARY: CompactVocabulary = {
  // The spaced form of each piece comes before the bare one: BPE applies merges by rank, and `√` is three bytes whose
  // bare merges, ranked first, would leave the space of ` √` a token of its own.
  pieces: [
    ...['#', '_', 'O', 'X', '√', 'P', 'S'].flatMap((s) => [` ${s}`, s]),
    ' /',
    ' |',
    ' ;',
    ' T',
    ' R',
    ...['up', 'down', 'left', 'right'].flatMap((m) => [` ${m}`, m]),
    ...['sok', 'acts', 'now', 'act', 'mem', 'note', 'fail', 'init', 'end', 'stuck', 'blocked', 'plan', 'out', 'turns', 'placed', 'moves'].flatMap((w) => [
      ` ${w}`,
      w,
    ]),
  ],
};

/**
 * Every object and receptacle type of lamer's generated ALFWorld households (test/model/tokenizer.test.ts checks the
 * list against the generator's).
 */
export const ALFWORLD_TYPES: readonly string[] = (
  'alarmclock apple armchair bathtubbasin bed book bowl box bread butterknife cabinet candle cd cellphone cloth ' +
  'coffeetable countertop creditcard cup desk desklamp diningtable dishsponge drawer dresser egg fork fridge garbagecan ' +
  'kettle keychain knife ladle laptop lettuce microwave mug newspaper pan pen pencil peppershaker pillow plate pot ' +
  'potato remotecontrol safe saltshaker shelf sidetable sinkbasin soapbar soapbottle sofa spatula spoon spraybottle ' +
  'statue stoveburner tissuebox toilet toiletpaper tomato towelholder tvstand vase watch winebottle'
).split(' ');
/** Instance numbers 1..6 cover the generator's standard households but for 1 name in 5,000 rooms (small ones: 1..4). */
export const ALFWORLD_MAX_NUMBER = 6;

/**
 * ALFWorld: each name with its number and leading space (` cabinet 3`) one added token, so that choosing a listed
 * command is copying names, not spelling them (added tokens match leftmost-longest before pre-tokenization, so ` desk 1`
 * never matches inside ` desklamp 1`); each type word alone (the goal names types), the commands' verbs and the
 * words of the observations and of the compact prompt's fields one token each.
 */
const ALFWORLD_VOCABULARY: CompactVocabulary = {
  pieces: [
    ...ALFWORLD_TYPES.map((t) => ` ${t}`),
    ...(
      'alf can acts now act mem note fail init end remark searched none arrive see nothing closed pick using move ' +
      'use inventory some hot two them under clean heat cool find put examine take from with go to open close look ' +
      'turn middle quickly around Looking happens Nothing carrying In On'
    )
      .split(' ')
      .flatMap((w) => [` ${w}`, w]),
    ' /',
    ' |',
    ' ;',
    ' T',
    ' R',
  ],
  added: ALFWORLD_TYPES.flatMap((t) => Array.from({ length: ALFWORLD_MAX_NUMBER }, (_, i) => ` ${t} ${i + 1}`)),
};

/** The tokenizer names whose vocabulary an environment works out from its generated data, and provides. */
const PROVIDED = 'provided by its environment';
const provided = new Map<string, () => CompactVocabulary>();

/** Compact tokenizer names and what each adds to the base vocabulary. */
export const COMPACT_VOCABULARIES = {
  compact: null,
  'compact-sokoban': SOKOBAN_VOCABULARY,
  'compact-alfworld': ALFWORLD_VOCABULARY,
  // WebShop's comes from its default generated catalog (src/envs/webshop/vocabulary.ts), built when the tokenizer is.
  'compact-webshop': PROVIDED,
} as const satisfies Record<string, CompactVocabulary | typeof PROVIDED | null>;

/**
 * Called by an environment's module for a name listed above as provided: the environment layer sits above the model
 * layer, so the vocabulary is handed down rather than imported.
 */
export function provideCompactVocabulary(name: 'compact-webshop', vocabulary: () => CompactVocabulary): void {
  provided.set(name, vocabulary);
}

export type CompactTokenizerName = keyof typeof COMPACT_VOCABULARIES;

export function isCompactTokenizerName(name: string): name is CompactTokenizerName {
  return Object.hasOwn(COMPACT_VOCABULARIES, name);
}

/**
 * The merges of pieces without a leading space, ranked so that each piece encodes as one token. BPE merges the
 * lowest-ranked adjacent pair first. A piece's chain starts with the pair of its first two bytes; every later merge
 * joins a longer prefix (`bl` + `a`). Ranking every longer-prefix merge before every byte-pair merge means that once a
 * piece's first pair is merged, its own chain always wins over byte pairs further right; and the byte pairs are sorted
 * so that each piece's first pair comes before any other piece's first pair that occurs later inside it (`bl` before
 * `la` for `black` beside `lavender`). Where those orders contradict each other (a cycle) the earlier piece wins.
 */
function bareMerges(pieces: readonly string[][], chain: (word: string, into: [string, string][]) => void): [string, string][] {
  const made: [string, string][] = [];
  for (const syms of pieces) chain(syms.join(''), made);
  const deep = made.filter(([left]) => left.length > 1);
  const pairs = made.filter(([left]) => left.length === 1);
  const key = (a: string, b: string): string => `${a}\u0000${b}`;
  const index = new Map(pairs.map((m, i) => [key(m[0], m[1]), i]));
  // after[i]: the byte pairs that must rank after pair i.
  const after = pairs.map(() => new Set<number>());
  const before = pairs.map(() => 0);
  for (const syms of pieces) {
    const first = index.get(key(syms[0], syms[1] ?? ''));
    if (first === undefined) continue;
    for (let j = 1; j + 1 < syms.length; j++) {
      const other = index.get(key(syms[j], syms[j + 1]));
      if (other !== undefined && other !== first && !after[first].has(other)) {
        after[first].add(other);
        before[other]++;
      }
    }
  }
  const ordered: [string, string][] = [];
  const done = pairs.map(() => false);
  while (ordered.length < pairs.length) {
    // The first pair nothing unplaced must precede; on a cycle, the first unplaced pair.
    let pick = pairs.findIndex((_, i) => !done[i] && before[i] === 0);
    if (pick < 0) pick = done.indexOf(false);
    done[pick] = true;
    ordered.push(pairs[pick]);
    for (const o of after[pick]) before[o]--;
  }
  return [...deep, ...ordered];
}

export interface CompactTokenizerFiles {
  'tokenizer.json': string;
  'tokenizer_config.json': string;
  /** Token ids of the chat specials and tags. */
  ids: Record<string, number>;
  vocabSize: number;
}

function addedToken(id: number, content: string, special: boolean): Record<string, unknown> {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special };
}

export function buildCompactTokenizer(name: CompactTokenizerName = 'compact'): CompactTokenizerFiles {
  if (!isCompactTokenizerName(name)) {
    throw new LamerError('E_CONFIG', `unknown compact tokenizer '${String(name)}'; expected one of ${Object.keys(COMPACT_VOCABULARIES).join(', ')}`);
  }
  const entry: CompactVocabulary | typeof PROVIDED | null = COMPACT_VOCABULARIES[name];
  let extra: CompactVocabulary | null;
  if (entry === PROVIDED) {
    const make = provided.get(name);
    if (make === undefined) {
      throw new LamerError(
        'E_CONFIG',
        `the ${name} tokenizer's vocabulary comes from its environment's module, which is not loaded: import lamer's environments (src/envs) first`,
      );
    }
    extra = make();
  } else extra = entry;
  return compactTokenizerWith(extra);
}

/**
 * The base compact vocabulary with `extra`'s pieces and added tokens (none: the `compact` tokenizer itself). The named
 * tokenizers above are built this way; a vocabulary not among them (e.g. to count what another one would make of a
 * job's prompts, bench/train.bench.ts) is not a tokenizer name a config can use.
 */
export function compactTokenizerWith(extra: CompactVocabulary | null): CompactTokenizerFiles {
  const byteChars = bytesToUnicode();
  const vocab = new Map<string, number>();
  for (let b = 0; b < 256; b++) vocab.set(byteChars[b], b);
  const merges: [string, string][] = [];
  const encoder = new TextEncoder();
  const symbolsOf = (word: string): string[] => Array.from(encoder.encode(word), (b) => byteChars[b]);
  // Chain merges build each word left to right: ("Ġ","t") -> "Ġt", ("Ġt","h") -> "Ġth", ("Ġth","e") -> "Ġthe".
  const chain = (word: string, into: [string, string][]): void => {
    const syms = symbolsOf(word);
    let acc = syms[0];
    for (let i = 1; i < syms.length; i++) {
      const merged = acc + syms[i];
      if (!vocab.has(merged)) {
        vocab.set(merged, vocab.size);
        into.push([acc, syms[i]]);
      }
      acc = merged;
    }
  };
  for (const word of [...WORDS.map((w) => ` ${w}`), ...LINE_WORDS, ...(extra?.pieces ?? [])]) chain(word, merges);
  if (extra?.bare !== undefined) merges.push(...bareMerges(extra.bare.map(symbolsOf), chain));
  const ids: Record<string, number> = {};
  const added: Record<string, unknown>[] = [];
  let next = vocab.size;
  for (const t of CHAT_SPECIAL_TOKENS) {
    ids[t] = next;
    added.push(addedToken(next++, t, true));
  }
  for (const t of [...TAG_TOKENS, ...CELL_TOKENS, ...(extra?.added ?? [])]) {
    ids[t] = next;
    added.push(addedToken(next++, t, false));
  }
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: { ...byteLevel, use_regex: false },
    decoder: { ...byteLevel, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries(vocab),
      merges,
    },
  };
  const addedDecoder: Record<string, unknown> = {};
  for (const a of added) {
    const { id, ...rest } = a as { id: number };
    addedDecoder[String(id)] = rest;
  }
  const config = {
    tokenizer_class: 'PreTrainedTokenizerFast',
    add_bos_token: false,
    add_prefix_space: false,
    bos_token: null,
    eos_token: '<|im_end|>',
    pad_token: '<|endoftext|>',
    unk_token: null,
    clean_up_tokenization_spaces: false,
    model_max_length: 32768,
    split_special_tokens: false,
    added_tokens_decoder: addedDecoder,
    chat_template: COMPACT_CHAT_TEMPLATE,
  };
  return {
    'tokenizer.json': `${JSON.stringify(tokenizer, null, 1)}\n`,
    'tokenizer_config.json': `${JSON.stringify(config, null, 2)}\n`,
    ids,
    vocabSize: next,
  };
}
