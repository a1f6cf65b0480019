// TheFuzz's token_set_ratio, which WebShop's reward (goal.py) uses to match attributes and options, with thefuzz's
// processing of its inputs. Two back ends: `rapidfuzz` (thefuzz >= 0.20, an Indel ratio; the default, since LaMer does
// not pin thefuzz) and `difflib` (thefuzz 0.19, pinned by WebShop's requirements, on difflib.SequenceMatcher). The
// test file compares both with the Python libraries' outputs.

import { pyStr, pyStrip } from '../../common/python.js';

export type FuzzBackend = 'rapidfuzz' | 'difflib';

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const WORD_CHAR = /[\p{L}\p{N}_]/u;

/**
 * thefuzz's full_process with force_ascii: drop code points 128-255, turn every other character that is not a letter
 * or digit into a space (rapidfuzz's default_process; thefuzz 0.19's `\W` keeps `_`), lower-case
 * and strip.
 */
export function fuzzProcess(value: string | readonly string[], backend: FuzzBackend = 'rapidfuzz'): string {
  let out = '';
  for (const ch of pyStr(value)) {
    const c = ch.codePointAt(0)!;
    if (c >= 128 && c <= 255) continue;
    const keep = backend === 'rapidfuzz' ? LETTER_OR_DIGIT.test(ch) : WORD_CHAR.test(ch);
    // rapidfuzz lower-cases one code point to one code point (U+0130 becomes a plain i).
    out += keep ? (backend === 'rapidfuzz' ? [...ch.toLowerCase()][0] : ch.toLowerCase()) : ' ';
  }
  return pyStrip(out);
}

/** Indel distance (insertions and deletions only): len(a) + len(b) - 2 * LCS(a, b), over code points. */
export function indelDistance(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  if (x.length === 0 || y.length === 0) return x.length + y.length;
  let prev = new Uint32Array(y.length + 1);
  let cur = new Uint32Array(y.length + 1);
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      cur[j] = x[i - 1] === y[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    }
    [prev, cur] = [cur, prev];
  }
  return x.length + y.length - 2 * prev[y.length];
}

/** difflib.SequenceMatcher(None, a, b).ratio(), autojunk included (it only acts when b has 200 or more elements). */
export function sequenceMatcherRatio(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  const total = x.length + y.length;
  if (total === 0) return 1;
  const b2j = new Map<string, number[]>();
  y.forEach((ch, j) => {
    const list = b2j.get(ch);
    if (list) list.push(j);
    else b2j.set(ch, [j]);
  });
  if (y.length >= 200) {
    const ntest = Math.floor(y.length / 100) + 1;
    for (const [ch, list] of [...b2j]) if (list.length > ntest) b2j.delete(ch);
  }
  // find_longest_match without junk: the longest block, earliest in a, then earliest in b.
  const longest = (alo: number, ahi: number, blo: number, bhi: number): [number, number, number] => {
    let besti = alo;
    let bestj = blo;
    let bestsize = 0;
    let j2len = new Map<number, number>();
    for (let i = alo; i < ahi; i++) {
      const next = new Map<number, number>();
      for (const j of b2j.get(x[i]) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) ?? 0) + 1;
        next.set(j, k);
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
      j2len = next;
    }
    // Extend over equal elements on both sides: this reaches elements the popularity heuristic dropped from b2j.
    while (besti > alo && bestj > blo && x[besti - 1] === y[bestj - 1]) {
      besti--;
      bestj--;
      bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && x[besti + bestsize] === y[bestj + bestsize]) {
      bestsize++;
    }
    return [besti, bestj, bestsize];
  };
  let matches = 0;
  const queue: Array<[number, number, number, number]> = [[0, x.length, 0, y.length]];
  while (queue.length > 0) {
    const [alo, ahi, blo, bhi] = queue.pop()!;
    const [i, j, k] = longest(alo, ahi, blo, bhi);
    if (k === 0) continue;
    matches += k;
    if (alo < i && blo < j) queue.push([alo, i, blo, j]);
    if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
  }
  return (2 * matches) / total;
}

/** Python's round() to an integer: halves go to the even neighbour. */
export function pyRound(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

function sortedTokens(tokens: Iterable<string>): string {
  // Python sorts str by code point; JS's default sort compares UTF-16 units, which differs only past U+FFFF.
  return [...tokens].sort((p, q) => (p < q ? -1 : p > q ? 1 : 0)).join(' ');
}

/** thefuzz's fuzz.token_set_ratio(s1, s2) (force_ascii and full_process on), an integer in [0, 100]. */
export function tokenSetRatio(s1: string | readonly string[], s2: string | readonly string[], backend: FuzzBackend = 'rapidfuzz'): number {
  const p1 = fuzzProcess(s1, backend);
  const p2 = fuzzProcess(s2, backend);
  if (p1.length === 0 || p2.length === 0) return 0;
  const t1 = new Set(p1.split(/\s+/u).filter(Boolean));
  const t2 = new Set(p2.split(/\s+/u).filter(Boolean));
  const sect = sortedTokens([...t1].filter((t) => t2.has(t)));
  const diff12 = sortedTokens([...t1].filter((t) => !t2.has(t)));
  const diff21 = sortedTokens([...t2].filter((t) => !t1.has(t)));
  if (backend === 'rapidfuzz') {
    if (sect.length > 0 && (diff12.length === 0 || diff21.length === 0)) return 100;
    const sectLen = [...sect].length;
    const abLen = [...diff12].length;
    const baLen = [...diff21].length;
    const sectAb = sectLen + (sectLen > 0 ? 1 : 0) + abLen;
    const sectBa = sectLen + (sectLen > 0 ? 1 : 0) + baLen;
    let best = 100 - (100 * indelDistance(diff12, diff21)) / (sectAb + sectBa);
    if (sectLen > 0) {
      best = Math.max(best, 100 - (100 * (1 + abLen)) / (sectLen + sectAb), 100 - (100 * (1 + baLen)) / (sectLen + sectBa));
    }
    return pyRound(best);
  }
  const combined12 = `${sect} ${diff12}`.trim();
  const combined21 = `${sect} ${diff21}`.trim();
  const ratio = (a: string, b: string) => (a === b ? 100 : a.length === 0 || b.length === 0 ? 0 : pyRound(100 * sequenceMatcherRatio(a, b)));
  return Math.max(ratio(sect, combined12), ratio(sect, combined21), ratio(combined12, combined21));
}
