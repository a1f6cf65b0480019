// The nouns of product titles, which goal.py's type score compares (spaCy en_core_web_sm's NOUN / PROPN tokens,
// lower-cased). Two sources: a noun table ({asin: [nouns]}) written where spaCy and its model exist
// (scripts/webshop/nouns.py), which is exact for the spaCy version that wrote it; and, for titles without a table
// entry, an approximation: spaCy-like tokens that are neither function words nor numbers nor punctuation. The
// approximation's error against spaCy is stated in docs/webshop-data.md (the original test suite's title scores).

/** Words of closed classes (determiners, pronouns, prepositions, conjunctions, auxiliaries, particles). */
const FUNCTION_WORDS = new Set(
  (
    'a an the this that these those some any each every no all both either neither ' +
    'i me my mine you your yours he him his she her hers it its we us our ours they them their theirs ' +
    'about above across after against along among around as at before behind below beneath beside between beyond by ' +
    'down during except for from in inside into like near of off on onto out outside over past per since than through ' +
    'throughout till to toward towards under underneath until up upon via with within without ' +
    'and or but nor so yet plus & + ' +
    'is are was were be been being am do does did have has had will would can could shall should may might must ' +
    "not n't to 's '"
  ).split(/\s+/),
);

/** Tokens roughly as spaCy's English tokenizer splits a title (whitespace, outer punctuation, inner - / and , between letters). */
export function titleTokens(title: string): string[] {
  const tokens: string[] = [];
  for (const piece of title.split(/\s+/)) {
    if (piece.length === 0) continue;
    let word = piece;
    const prefixes: string[] = [];
    const suffixes: string[] = [];
    while (word.length > 1 && /^[([{"'`“‘«$£€#~*]/.test(word)) {
      prefixes.push(word[0]);
      word = word.slice(1);
    }
    for (;;) {
      const m = /(?:'s|'S|’s|[)\]}"'”’»,;:!?%*]|\.(?!\w\.))$/.exec(word);
      if (m === null || m[0].length >= word.length) break;
      // A trailing dot stays on abbreviations such as "D.O.N." and on single letters ("J.").
      if (m[0] === '.' && /^(?:[a-z]\.)+[a-z]\.?$|^[a-z]$/i.test(word.slice(0, -1) + '.')) break;
      suffixes.unshift(m[0]);
      word = word.slice(0, -m[0].length);
    }
    tokens.push(...prefixes);
    tokens.push(...word.split(/(?<=[\p{L}])([-/,])(?=[\p{L}])|(?<=[\p{L}\d])(\/)(?=[\p{L}])/u).filter((t) => t !== undefined && t.length > 0));
    tokens.push(...suffixes);
  }
  return tokens;
}

/** The approximation: lower-cased title tokens that have a letter and are not function words. */
export function approximateNouns(title: string): string[] {
  return titleTokens(title)
    .map((t) => t.toLowerCase())
    .filter((t) => /\p{L}/u.test(t) && !FUNCTION_WORDS.has(t));
}

/** Where a product's nouns come from: the table by asin, else the approximation of its title. */
export class NounSource {
  readonly #table: ReadonlyMap<string, readonly string[]> | undefined;
  readonly #cache = new Map<string, readonly string[]>();

  constructor(table?: ReadonlyMap<string, readonly string[]>) {
    this.#table = table;
  }

  get hasTable(): boolean {
    return this.#table !== undefined;
  }

  nouns(asin: string, title: string): readonly string[] {
    const fromTable = this.#table?.get(asin);
    if (fromTable !== undefined) return fromTable;
    let cached = this.#cache.get(title);
    if (cached === undefined) {
      cached = approximateNouns(title);
      this.#cache.set(title, cached);
    }
    return cached;
  }
}
