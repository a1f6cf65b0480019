// Full-text product search with BM25-style ranking, through MiniSearch (the original WebShop used a Lucene index).
// One index per catalog; environments that share a catalog share the index (see env.ts).

import MiniSearch from 'minisearch';
import type { Product } from './catalog.js';

/** Words too common in requests to say anything about a product ("i'm looking for a ... and price lower than"). */
const STOP_WORDS = new Set([
  'a',
  'an',
  'and',
  'the',
  'i',
  'im',
  'm',
  'me',
  'my',
  'for',
  'of',
  'in',
  'on',
  'to',
  'with',
  'that',
  'is',
  'it',
  'need',
  'want',
  'looking',
  'find',
  'buy',
  'some',
  'please',
  'price',
  'lower',
  'than',
  'dollars',
  'under',
  'less',
  'be',
  'are',
  'this',
  'which',
  'have',
  'has',
  'get',
  'would',
  'like',
  'also',
  'color',
  'size',
]);

const MAX_QUERY_CHARS = 500;
const MAX_FUZZY_TERM = 20;

interface IndexedProduct {
  id: number;
  name: string;
  type: string;
  attributes: string;
  options: string;
  description: string;
}

function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  return STOP_WORDS.has(t) ? null : t;
}

export class ProductSearch {
  private readonly index: MiniSearch<IndexedProduct>;

  constructor(private readonly products: readonly Product[]) {
    this.index = new MiniSearch<IndexedProduct>({
      fields: ['name', 'type', 'attributes', 'options', 'description'],
      processTerm,
      searchOptions: {
        // Titles and product types say what a product is; weigh them above the descriptive text.
        boost: { name: 3, type: 2, attributes: 1.5 },
        combineWith: 'OR',
        // Forgive small typos in longer words (a model misspelling "moisturizer" should still find moisturizers).
        // Long garbage terms are skipped: fuzzy matching costs grow with term length and no product word is that long.
        fuzzy: (term) => (term.length >= 6 && term.length <= MAX_FUZZY_TERM ? 0.15 : false),
        processTerm,
      },
    });
    this.index.addAll(
      products.map((p, id) => ({
        id,
        name: p.name,
        type: p.query,
        attributes: p.attributes.join(' | '),
        options: Object.values(p.options).flat().join(' | '),
        description: `${p.description} ${p.features.join(' ')}`,
      })),
    );
  }

  /**
   * Indices into the catalog of the best `limit` matches, best first; ties keep catalog order (deterministic).
   * Queries are cut to their first MAX_QUERY_CHARS characters, like a search box: a model that writes a whole essay
   * into search[...] should not make a step cost seconds.
   */
  search(query: string, limit: number): number[] {
    const hits = this.index.search(query.slice(0, MAX_QUERY_CHARS));
    hits.sort((a, b) => b.score - a.score || (a.id as number) - (b.id as number));
    return hits.slice(0, limit).map((h) => h.id as number);
  }

  get size(): number {
    return this.products.length;
  }
}
