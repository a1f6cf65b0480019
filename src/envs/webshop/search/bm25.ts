// The product search of the original WebShop: a Lucene BM25 index (k1 = 0.9, b = 0.4, pyserini's defaults) over one
// document per product, `lower(Title + ' ' + Description + ' ' + BulletPoints[0] + ' ' + option text)`, queried with
// a bag of words whose repeated terms are boosted by their count, top 50, ties broken by the product id. Scores follow
// Lucene's arithmetic: document lengths stored as one-byte norms (SmallFloat.intToByte4), float32 weights and
// per-term scores `w - w / (1 + tf / norm)`, summed in double. The analyzer is in analyzer.ts; the agreement with
// Lucene itself is measured by bench/webshop-search-agreement.ts (docs/webshop-data.md).

import { analyze } from './analyzer.js';
import type { Product } from '../data/pipeline.js';

export interface Bm25Params {
  k1: number;
  b: number;
}

/** pyserini's LuceneSearcher defaults, which the original WebShop used. */
export const PYSERINI_BM25: Bm25Params = Object.freeze({ k1: 0.9, b: 0.4 });

/** Results a search returns in all (engine.py's SEARCH_RETURN_N). */
export const SEARCH_RETURN_N = 50;

const f32 = Math.fround;

/** Lucene's SmallFloat.longToInt4: 4 significant bits and an exponent. */
function longToInt4(i: number): number {
  const numBits = i === 0 ? 0 : Math.floor(Math.log2(i)) + 1;
  if (numBits < 4) return i;
  const shift = numBits - 4;
  let encoded = Math.floor(i / 2 ** shift) & 0x07;
  encoded |= (shift + 1) << 3;
  return encoded;
}

function int4ToLong(i: number): number {
  const bits = i & 0x07;
  const shift = (i >>> 3) - 1;
  return shift === -1 ? bits : (bits | 0x08) * 2 ** shift;
}

const NUM_FREE_VALUES = 255 - longToInt4(2 ** 31 - 1);

/** SmallFloat.intToByte4: the one-byte norm of a document length (as an unsigned byte). */
export function lengthToNorm(length: number): number {
  return length < NUM_FREE_VALUES ? length : NUM_FREE_VALUES + longToInt4(length - NUM_FREE_VALUES);
}

/** SmallFloat.byte4ToInt: the document length a norm stands for. */
export function normToLength(norm: number): number {
  return norm < NUM_FREE_VALUES ? norm : NUM_FREE_VALUES + int4ToLong(norm - NUM_FREE_VALUES);
}

/** The text the original indexes for a product (search_engine/convert_product_file_format.py). */
export function productDocument(product: Product): string {
  const optionText = [...product.options].map(([name, values]) => `${name}: ${values.join(', ')}`).join(', and ');
  return [product.name, product.description, product.bulletPoints[0] ?? '', optionText].join(' ').toLowerCase();
}

interface Postings {
  docs: number[];
  freqs: number[];
}

/** UTF-8 byte order, as Lucene's BytesRef compares the ids it breaks ties with. */
function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export class Bm25Index {
  readonly #postings = new Map<string, Postings>();
  readonly #norms: Uint8Array;
  readonly #ids: readonly string[];
  readonly #docCount: number;
  /** 1 / (k1 * ((1 - b) + b * length / avgdl)) per norm byte, in float32. */
  readonly #normInverse = new Float32Array(256);

  constructor(documents: readonly { id: string; contents: string }[], params: Bm25Params = PYSERINI_BM25) {
    this.#ids = documents.map((d) => d.id);
    this.#norms = new Uint8Array(documents.length);
    let totalTerms = 0;
    let docCount = 0;
    documents.forEach((doc, d) => {
      const terms = analyze(doc.contents);
      if (terms.length > 0) docCount++;
      totalTerms += terms.length;
      this.#norms[d] = lengthToNorm(terms.length);
      const counts = new Map<string, number>();
      for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const [t, n] of counts) {
        let p = this.#postings.get(t);
        if (p === undefined) {
          p = { docs: [], freqs: [] };
          this.#postings.set(t, p);
        }
        p.docs.push(d);
        p.freqs.push(n);
      }
    });
    this.#docCount = docCount;
    const avgdl = f32(docCount === 0 ? 1 : totalTerms / docCount);
    const k1 = f32(params.k1);
    const b = f32(params.b);
    for (let i = 0; i < 256; i++) {
      const lengthPart = f32(f32(b * normToLength(i)) / avgdl);
      this.#normInverse[i] = f32(1 / f32(k1 * f32(f32(1 - b) + lengthPart)));
    }
  }

  get size(): number {
    return this.#ids.length;
  }

  /** Document indices of the best `k` matches for `query`, best first (score, then id). */
  search(query: string, k: number = SEARCH_RETURN_N): number[] {
    return this.scored(query, k).map((h) => h.doc);
  }

  /** The same with Lucene's float scores. */
  scored(query: string, k: number = SEARCH_RETURN_N): Array<{ doc: number; score: number }> {
    const boosts = new Map<string, number>();
    for (const t of analyze(query)) boosts.set(t, (boosts.get(t) ?? 0) + 1);
    const scores = new Map<number, number>();
    for (const [term, boost] of boosts) {
      const p = this.#postings.get(term);
      if (p === undefined) continue;
      const df = p.docs.length;
      const idf = f32(Math.log(1 + (this.#docCount - df + 0.5) / (df + 0.5)));
      const weight = f32(boost * idf);
      for (let i = 0; i < df; i++) {
        const d = p.docs[i];
        const s = f32(weight - f32(weight / f32(1 + f32(p.freqs[i] * this.#normInverse[this.#norms[d]]))));
        scores.set(d, (scores.get(d) ?? 0) + s);
      }
    }
    const hits = [...scores].map(([doc, sum]) => ({ doc, score: f32(sum) }));
    hits.sort((x, y) => y.score - x.score || compareUtf8(this.#ids[x.doc], this.#ids[y.doc]));
    return hits.slice(0, k);
  }
}
