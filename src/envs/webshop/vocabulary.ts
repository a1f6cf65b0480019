// What the `compact-webshop` tokenizer adds to the base compact vocabulary, so that a tiny model shops by copying:
// every word of the generated catalog's titles, options and requests and of the site's pages one token (as compact
// pages show them: lower case), and every product id of the default generated catalog one token. Under the base
// tokenizer a results page spells its ten ids and titles byte by byte (about 1,100 tokens); choosing a product meant
// copying ten characters in order. Ids of other catalogs (another size or seed, the original files) still encode, as
// bytes.

import { provideCompactVocabulary, type CompactVocabulary } from '../../model/compact-tokenizer.js';
import { generateCatalogFiles } from './data/catalog.js';

/** The byte-level pre-tokenizer's split (GPT-2's pattern, which the compact tokenizer's ByteLevel step uses). */
const PRE_TOKENS = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** Words of the site's pages and of the compact prompt's fields, as compact pages show them. */
const PAGE_TEXT = [
  'shop T1 T2 T3 R1 R2 R3 | mem: T1 fail note: wrong: no purchase. | acts: search[x] ; click[x] | now: x | act:',
  'webshop / search / back to search / page 1 (total results: 50) / next > / < prev / price: $1.00 / rating: n.a.',
  'description / features / reviews / buy now / selected: x / available actions: search[x], click[x]',
  'thank you for shopping with us! / your score (min 0.0, max 1.0) / and price lower than 50.00 dollars',
];

/** The catalog whose words and ids the tokenizer holds: the environment's default generated catalog. */
export const VOCABULARY_CATALOG = { size: 1000, seed: 0 } as const;

let cached: CompactVocabulary | null = null;

const encoder = new TextEncoder();

/** Pre-tokens of `text` that are more than one byte (each a BPE piece), in order of first appearance. */
function piecesOf(text: string, into: Set<string>): void {
  for (const m of text.matchAll(PRE_TOKENS)) if (encoder.encode(m[0]).length > 1) into.add(m[0]);
}

/** The first pre-token of `text` when it is more than one character (the bare word an action starts with). */
function firstWord(text: string, into: string[]): void {
  const first = text.match(PRE_TOKENS)?.[0];
  if (first !== undefined && first.length > 1) into.push(first);
}

export function webShopCompactVocabulary(): CompactVocabulary {
  if (cached !== null) return cached;
  const files = generateCatalogFiles(VOCABULARY_CATALOG.size, VOCABULARY_CATALOG.seed);
  const pieces = new Set<string>();
  const ids: string[] = [];
  // The words an action starts with come right after `<action>` or `[`, without a space: the verbs, the option
  // values (`click[navy blue]`) and a request's first word (`search[i'm ...`). They are bare pieces, whose merges the
  // tokenizer ranks after every spaced piece's and so that none splits another (compact-tokenizer.ts, bareMerges).
  const valueFirsts: string[] = [];
  const requestFirsts: string[] = [];
  for (const line of PAGE_TEXT) piecesOf(line, pieces);
  for (const p of files.products) {
    ids.push(String(p.asin).toLowerCase());
    piecesOf(` ${String(p.name).toLowerCase()}`, pieces);
    const options = p.customization_options as Record<string, Array<{ value: string }>>;
    // Option values and requests also as an action holds them, after `[`.
    for (const [name, values] of Object.entries(options)) {
      piecesOf(` ${name.toLowerCase()}`, pieces);
      for (const v of values) {
        piecesOf(` ${v.value} [${v.value}]`, pieces);
        firstWord(v.value, valueFirsts);
      }
    }
  }
  for (const a of Object.values(files.attributes)) {
    piecesOf(` ${a.instruction} [${a.instruction}]`, pieces);
    firstWord(a.instruction, requestFirsts);
  }
  const bare = new Set<string>(['search', 'click', ...valueFirsts, ...requestFirsts, ...[...pieces].filter((p) => !p.startsWith(' '))]);
  cached = { pieces: [...pieces].filter((p) => !bare.has(p)), bare: [...bare], added: ids };
  return cached;
}

provideCompactVocabulary('compact-webshop', webShopCompactVocabulary);
