// The random pairs on which WebShop's token_set_ratio (src/envs/webshop/reward/fuzz.ts) is compared with thefuzz
// itself: strings and (name, value) tuples of words with upper and lower case, digits, punctuation, underscores,
// code points 128-255 (which thefuzz's force_ascii drops) and beyond (Greek, CJK, emoji, combining marks, dotted
// capital I), empty and blank strings. Deterministic in (count, seed), so the test and the script build the same pairs.
import { Rng } from '../../src/util/rng.js';

export type FuzzValue = string | string[];

const WORDS = [
  'essential',
  'oil',
  'oils',
  'tea',
  'tree',
  'powder',
  'snow',
  'x-large',
  'XL',
  'navy',
  'blue',
  'pack',
  'of',
  '12',
  '6.76',
  'fl',
  'oz',
  'slim_fit',
  'Crème',
  'Brûlée',
  'café',
  'naïve',
  'Größe',
  'straße',
  'İstanbul',
  'ﬁne',
  'Ωmega',
  'αβγ',
  '中文',
  '東京',
  '😀',
  '★',
  '™',
  '½',
  'e\u0301',
  'N°5',
  "L'eau",
  'long-lasting',
  'Navy/Blue',
  '(pack',
  'of',
  '1)',
  '100%',
  'cotton',
  '$',
  '&',
  '|',
  'dairy',
  'free',
  'gluten-free',
  'ÅÄÖ',
  'aao',
  'Ünïcödé',
  'wash',
  'machine',
  'heel',
];
const BLANKS = ['', ' ', '   ', '\t', ' _ ', '-'];

function phrase(rng: Rng): string {
  if (rng.int(20) === 0) return BLANKS[rng.int(BLANKS.length)];
  const n = 1 + rng.int(6);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    let w = WORDS[rng.int(WORDS.length)];
    const shape = rng.int(8);
    if (shape === 0) w = w.toUpperCase();
    else if (shape === 1) w = `${w}${String.fromCodePoint(0x80 + rng.int(0x80))}`;
    parts.push(w);
  }
  return parts.join(rng.int(6) === 0 ? '  ' : ' ');
}

function value(rng: Rng): FuzzValue {
  const k = rng.int(10);
  if (k === 0) return [phrase(rng)];
  if (k <= 2) return [phrase(rng), phrase(rng)];
  return phrase(rng);
}

/** `count` pairs from `seed`. */
export function fuzzPairs(count: number, seed: number): Array<[FuzzValue, FuzzValue]> {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => [value(rng), value(rng)]);
}
