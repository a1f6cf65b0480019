// The text analysis of the original WebShop search index (Anserini's default English analyzer, which pyserini's
// Lucene indexes use): Lucene's StandardTokenizer (Unicode word boundaries, UAX #29), the English possessive filter,
// lower-casing, Lucene's 33 English stop words and the Porter stemmer. The tokenizer follows the word-boundary rules
// for letters, digits, Katakana, Hebrew letters and connector punctuation; ideographs, Hiragana and emoji are one
// token per character, and runs of South-East Asian scripts one token per run, as Lucene emits them.

import { porterStem } from './porter.js';

/** Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET. */
export const LUCENE_ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(' '),
);

/** Lucene's StandardTokenizer splits longer tokens into pieces of this many UTF-16 units. */
const MAX_TOKEN_LENGTH = 255;

type WordClass =
  | 'regional'
  | 'letter'
  | 'hebrew'
  | 'numeric'
  | 'katakana'
  | 'extendNumLet'
  | 'midLetter'
  | 'midNum'
  | 'midNumLet'
  | 'singleQuote'
  | 'doubleQuote'
  | 'extend'
  | 'single'
  | 'run'
  | 'other';

const MID_LETTER = new Set([0x3a, 0xb7, 0x387, 0x55f, 0x5f4, 0x2027, 0xfe13, 0xfe55, 0xff1a]);
const MID_NUM = new Set([0x2c, 0x3b, 0x37e, 0x589, 0x60c, 0x60d, 0x66c, 0x7f8, 0x2044, 0xfe10, 0xfe14, 0xfe50, 0xfe54, 0xff0c, 0xff1b]);
const MID_NUM_LET = new Set([0x2e, 0x2018, 0x2019, 0x2024, 0xfe52, 0xff07, 0xff0e]);

const OLDER_CLASSES = new Map<number, WordClass>([
  [0x2d7, 'letter'],
  [0x5f3, 'letter'],
  [0x66b, 'letter'],
  [0x200b, 'other'],
  [0x202f, 'extendNumLet'],
  [0x266f, 'single'],
  [0x309b, 'katakana'],
  [0x309c, 'katakana'],
  [0x30a0, 'katakana'],
  [0x1f3fb, 'single'],
  [0x1f3fc, 'single'],
  [0x1f3fd, 'single'],
  [0x1f3fe, 'single'],
  [0x1f3ff, 'single'],
]);

const RE = {
  hanOrHiragana: /[\p{Script=Han}\p{Script=Hiragana}]/u,
  katakana: /[\p{Script=Katakana}\u30fc\uff70]/u,
  // Lucene's Complex_Context class: the letters and marks of these scripts (their digits are digits).
  southEastAsian:
    /(?=[\p{Script=Thai}\p{Script=Lao}\p{Script=Myanmar}\p{Script=Khmer}\p{Script=New_Tai_Lue}\p{Script=Tai_Tham}\p{Script=Tai_Viet}])[\p{L}\p{M}]/u,
  hebrewLetter: /(?=\p{Script=Hebrew})\p{L}/u,
  letter: /[\p{Alphabetic}]/u,
  numeric: /\p{Nd}/u,
  extendNumLet: /\p{Pc}/u,
  extend: /[\p{M}\p{Cf}\u200d]/u,
  pictographic: /\p{Extended_Pictographic}/u,
  // Symbols Lucene 8.7 emits as emoji tokens that today's Extended_Pictographic no longer lists (its emoji data is
  // older): measured by running Lucene's tokenizer over U+2000-U+2BFF and U+1F000-U+1FAFF (scripts/webshop/LuceneBm25.java analyze).
  olderPictographic:
    /[\u{2388}\u{2605}\u{2607}-\u{260d}\u{260f}-\u{2610}\u{2612}\u{2616}-\u{2617}\u{2619}-\u{261c}\u{261e}-\u{261f}\u{2621}\u{2624}-\u{2625}\u{2627}-\u{2629}\u{262b}-\u{262d}\u{2630}-\u{2637}\u{263b}-\u{263f}\u{2641}\u{2643}-\u{2647}\u{2654}-\u{265e}\u{2661}-\u{2662}\u{2664}\u{2667}\u{2669}-\u{266e}\u{2670}-\u{267a}\u{267c}-\u{267d}\u{2680}-\u{2685}\u{2690}-\u{2691}\u{2698}\u{269a}\u{269d}-\u{269f}\u{26a2}-\u{26a6}\u{26a8}-\u{26a9}\u{26ac}-\u{26af}\u{26b2}-\u{26bc}\u{26bf}-\u{26c3}\u{26c6}-\u{26c7}\u{26c9}-\u{26cd}\u{26d0}\u{26d2}\u{26d5}-\u{26e8}\u{26eb}-\u{26ef}\u{26f6}\u{26fb}-\u{26fc}\u{26fe}-\u{2701}\u{2703}-\u{2704}\u{270e}\u{2710}-\u{2711}\u{2765}-\u{2767}\u{1f000}-\u{1f003}\u{1f005}-\u{1f02b}\u{1f030}-\u{1f093}\u{1f0a0}-\u{1f0ae}\u{1f0b1}-\u{1f0bf}\u{1f0c1}-\u{1f0ce}\u{1f0d1}-\u{1f0f5}\u{1f10d}-\u{1f10f}\u{1f12f}\u{1f16c}-\u{1f16f}\u{1f1ad}\u{1f260}-\u{1f265}\u{1f322}-\u{1f323}\u{1f394}-\u{1f395}\u{1f398}\u{1f39c}-\u{1f39d}\u{1f3f1}-\u{1f3f2}\u{1f3f6}\u{1f4fe}\u{1f546}-\u{1f548}\u{1f54f}\u{1f568}-\u{1f56e}\u{1f571}-\u{1f572}\u{1f57b}-\u{1f586}\u{1f588}-\u{1f589}\u{1f58e}-\u{1f58f}\u{1f591}-\u{1f594}\u{1f597}-\u{1f5a3}\u{1f5a6}-\u{1f5a7}\u{1f5a9}-\u{1f5b0}\u{1f5b3}-\u{1f5bb}\u{1f5bd}-\u{1f5c1}\u{1f5c5}-\u{1f5d0}\u{1f5d4}-\u{1f5db}\u{1f5df}-\u{1f5e0}\u{1f5e2}\u{1f5e4}-\u{1f5e7}\u{1f5e9}-\u{1f5ee}\u{1f5f0}-\u{1f5f2}\u{1f5f4}-\u{1f5f9}\u{1f6c6}-\u{1f6ca}\u{1f6d3}-\u{1f6d4}\u{1f6e6}-\u{1f6e8}\u{1f6ea}\u{1f6f1}-\u{1f6f2}\u{1f7d5}-\u{1f7d8}\u{1f8b0}-\u{1f8b1}\u{1fa00}-\u{1fa53}\u{1fa60}-\u{1fa6d}]/u,
  regionalIndicator: /[\u{1f1e6}-\u{1f1ff}]/u,
};

function classify(ch: string): WordClass {
  const c = ch.codePointAt(0)!;
  // ASCII first: almost every character of a product page is ASCII.
  if (c < 0x80) {
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) return 'letter';
    if (c >= 0x30 && c <= 0x39) return 'numeric';
    if (c === 0x27) return 'singleQuote';
    if (c === 0x22) return 'doubleQuote';
    if (c === 0x5f) return 'extendNumLet';
    if (MID_LETTER.has(c)) return 'midLetter';
    if (MID_NUM.has(c)) return 'midNum';
    if (MID_NUM_LET.has(c)) return 'midNumLet';
    return 'other';
  }
  if (MID_LETTER.has(c)) return 'midLetter';
  if (MID_NUM.has(c)) return 'midNum';
  if (MID_NUM_LET.has(c)) return 'midNumLet';
  // Classes of Lucene 8.7's (older) Unicode tables where today's differ, found by the same measurement.
  const older = OLDER_CLASSES.get(c);
  if (older !== undefined) return older;
  if (RE.extend.test(ch)) return 'extend';
  if (RE.hanOrHiragana.test(ch)) return 'single';
  if (RE.katakana.test(ch)) return 'katakana';
  if (RE.southEastAsian.test(ch)) return 'run';
  if (RE.hebrewLetter.test(ch)) return 'hebrew';
  if (RE.numeric.test(ch)) return 'numeric';
  if (RE.letter.test(ch)) return 'letter';
  if (RE.extendNumLet.test(ch)) return 'extendNumLet';
  if (RE.regionalIndicator.test(ch)) return 'regional';
  if (RE.pictographic.test(ch) || RE.olderPictographic.test(ch)) return 'single';
  return 'other';
}

const isAHLetter = (k: WordClass) => k === 'letter' || k === 'hebrew';
const isWordPart = (k: WordClass) => isAHLetter(k) || k === 'numeric' || k === 'katakana' || k === 'extendNumLet';

/** Whether a word break is forbidden between classes a and b (no middle character). */
function joins(a: WordClass, b: WordClass): boolean {
  if (isAHLetter(a) && isAHLetter(b)) return true; // WB5
  if (a === 'numeric' && b === 'numeric') return true; // WB8
  if (isAHLetter(a) && b === 'numeric') return true; // WB9
  if (a === 'numeric' && isAHLetter(b)) return true; // WB10
  if (a === 'katakana' && b === 'katakana') return true; // WB13
  if (isWordPart(a) && b === 'extendNumLet') return true; // WB13a
  if (a === 'extendNumLet' && (isAHLetter(b) || b === 'numeric' || b === 'katakana')) return true; // WB13b
  return false;
}

/** Whether `mid` between classes a and b is kept inside a word (WB6/7, WB7b/c, WB11/12). */
function joinsAcross(a: WordClass, mid: WordClass, b: WordClass): boolean {
  if (isAHLetter(a) && isAHLetter(b) && (mid === 'midLetter' || mid === 'midNumLet' || mid === 'singleQuote')) return true;
  if (a === 'hebrew' && b === 'hebrew' && mid === 'doubleQuote') return true;
  if (a === 'numeric' && b === 'numeric' && (mid === 'midNum' || mid === 'midNumLet' || mid === 'singleQuote')) return true;
  return false;
}

/** The tokens Lucene's StandardTokenizer makes of a text. */
export function standardTokenize(text: string): string[] {
  const chars = [...text];
  // Extend and format characters belong to the character before them (WB4); a class per position, with the text.
  const units: Array<{ cls: WordClass; text: string }> = [];
  for (const ch of chars) {
    const cls = classify(ch);
    if (cls === 'extend' && units.length > 0 && units[units.length - 1].cls !== 'other') units[units.length - 1].text += ch;
    else units.push({ cls: cls === 'extend' ? 'other' : cls, text: ch });
  }
  const tokens: string[] = [];
  const emit = (token: string) => {
    for (let i = 0; i < token.length; i += MAX_TOKEN_LENGTH) tokens.push(token.slice(i, i + MAX_TOKEN_LENGTH));
  };
  let i = 0;
  while (i < units.length) {
    const u = units[i];
    if (u.cls === 'single') {
      emit(u.text);
      i++;
      continue;
    }
    if (u.cls === 'regional') {
      // Regional indicators pair into flags; a lone one is no token.
      if (i + 1 < units.length && units[i + 1].cls === 'regional') {
        emit(u.text + units[i + 1].text);
        i += 2;
      } else i++;
      continue;
    }
    if (u.cls === 'run') {
      let token = '';
      while (i < units.length && units[i].cls === 'run') token += units[i++].text;
      emit(token);
      continue;
    }
    if (!isWordPart(u.cls)) {
      i++;
      continue;
    }
    let token = u.text;
    let last: WordClass = u.cls;
    let hasContent = u.cls !== 'extendNumLet';
    i++;
    while (i < units.length) {
      const next = units[i];
      if (joins(last, next.cls)) {
        token += next.text;
        if (next.cls !== 'extendNumLet') hasContent = true;
        last = next.cls;
        i++;
        continue;
      }
      if (i + 1 < units.length && joinsAcross(last, next.cls, units[i + 1].cls)) {
        token += next.text + units[i + 1].text;
        last = units[i + 1].cls;
        hasContent = true;
        i += 2;
        continue;
      }
      // WB7a: a Hebrew letter keeps a following apostrophe.
      if (last === 'hebrew' && next.cls === 'singleQuote') {
        token += next.text;
        i++;
      }
      break;
    }
    if (hasContent) emit(token);
  }
  return tokens;
}

/** EnglishPossessiveFilter: a trailing 's (with ', U+2019 or U+FF07, s or S) is removed. */
export function removePossessive(token: string): string {
  if (token.length < 2) return token;
  const last = token[token.length - 1];
  const quote = token[token.length - 2];
  if ((last === 's' || last === 'S') && (quote === "'" || quote === '\u2019' || quote === '\uff07')) return token.slice(0, -2);
  return token;
}

/** Java's Character.toLowerCase per code point (one code point to one). */
export function lowerCodePoints(token: string): string {
  let out = '';
  for (const ch of token) {
    const lower = ch.toLowerCase();
    out += lower.length === ch.length ? lower : [...lower][0];
  }
  return out;
}

/** The indexed terms of a text: tokenize, drop possessives, lower-case, remove stop words, stem. */
export function analyze(text: string): string[] {
  const terms: string[] = [];
  for (const token of standardTokenize(text)) {
    const lower = lowerCodePoints(removePossessive(token));
    if (lower.length === 0 || LUCENE_ENGLISH_STOP_WORDS.has(lower)) continue;
    terms.push(porterStem(lower));
  }
  return terms;
}
