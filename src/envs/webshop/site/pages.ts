// The original WebShop's pages in text mode and its navigation (web_agent_site/templates/*.html rendered, then
// convert_html_to_text(simple=True): the visible text nodes, stripped, joined with ' [SEP] '; get_available_actions:
// buttons and product links by their lower-cased text, then option radios by value; SimServer.receive: what a click
// does on which page). Seven pages: search, results, item, description, features, reviews, done.

import type { Product } from '../data/pipeline.js';
import { flaskToJson, pyFloatRepr, pyStrip } from '../../common/python.js';

export const BACK_TO_SEARCH = 'back to search';
export const NEXT_PAGE = 'next >';
export const PREV_PAGE = '< prev';
export const BUY_NOW = 'buy now';
export const SUB_PAGES = ['description', 'features', 'reviews'] as const;
export type SubPage = (typeof SUB_PAGES)[number];

/** Products per results page (engine.py's PRODUCT_WINDOW). */
export const PRODUCT_WINDOW = 10;

export type PageKind = 'search' | 'results' | 'item' | SubPage | 'done';

/** A session's state, as SimServer keeps it: the page shown, the last search, the open product and its options. */
export interface Session {
  page: PageKind;
  /** The last search's keywords (the query split on single spaces), or null before any. */
  keywords: string[] | null;
  /** Results page number of the last search (from 1; no upper bound). */
  pageNo: number;
  /** The last search's top results: product indices, best first (at most 50). */
  hits: number[];
  /** The open product (index), or null. */
  product: number | null;
  /** Selected options: option name to value, in the order first selected. */
  options: Map<string, string>;
  /** On the done page: the score shown. */
  score?: number;
}

export function startSession(): Session {
  return { page: 'search', keywords: null, pageNo: 1, hits: [], product: null, options: new Map() };
}

/** One clickable of a page: a button or product link by its lower-cased text, an option radio by its value. */
export interface Clickable {
  key: string;
  kind: 'button' | 'product' | 'option';
  /** Option radios: the option group the value selects (a value repeated across groups selects the last group). */
  optionName?: string;
  /** Product links: the product index. */
  product?: number;
}

export interface PageContext {
  products: readonly Product[];
  instruction: string;
}

/**
 * The field a rendered text node gives: none for an empty node, none for a whitespace-only node with a line break
 * (BeautifulSoup turns it into '\n', which convert_html_to_text skips), an empty field for other whitespace-only nodes,
 * else the stripped text.
 */
function textNode(text: string): string[] {
  if (text.length === 0) return [];
  if (pyStrip(text).length === 0) return text.includes('\n') ? [] : [''];
  return [pyStrip(text)];
}

function pageProducts(session: Session): number[] {
  return session.hits.slice((session.pageNo - 1) * PRODUCT_WINDOW, session.pageNo * PRODUCT_WINDOW);
}

/** The fields of the page in text mode (join with ' [SEP] ' for the observation). */
export function pageFields(session: Session, ctx: PageContext): string[] {
  const instruction = textNode(ctx.instruction);
  const header = ['Instruction:', ...instruction, 'Back to Search'];
  switch (session.page) {
    case 'search':
      return ['WebShop', 'Instruction:', ...instruction, 'Search'];
    case 'results': {
      const fields = [...header, `Page ${session.pageNo} (Total results: ${session.hits.length})`];
      if (session.pageNo > 1) fields.push('< Prev');
      fields.push('Next >');
      for (const i of pageProducts(session)) {
        const p = ctx.products[i];
        fields.push(...textNode(p.asin), ...textNode(p.name), ...textNode(p.priceTag));
      }
      return fields;
    }
    case 'item': {
      const p = ctx.products[session.product!];
      const fields = [...header, '< Prev'];
      for (const [name, values] of p.options) {
        fields.push(...textNode(name));
        for (const v of values) fields.push(...textNode(v));
      }
      fields.push(...textNode(p.name), `Price: ${pyStrip(p.priceTag)}`, 'Rating: N.A.', 'Description', 'Features', 'Reviews', 'Buy Now');
      return fields;
    }
    case 'description':
      return [...header, '< Prev', ...textNode(ctx.products[session.product!].description)];
    case 'features':
      return [...header, '< Prev', ...ctx.products[session.product!].bulletPoints.flatMap((b) => textNode(` ${b}`))];
    case 'reviews':
      return [...header, '< Prev'];
    case 'done': {
      const p = ctx.products[session.product!];
      return [
        'Thank you for shopping with us!',
        'Your code:',
        'None',
        '(Paste it in your MTurk interface.)',
        'Purchased',
        'asin',
        ...textNode(p.asin),
        'options',
        flaskToJson(session.options),
        'attrs',
        'None',
        'category',
        'None',
        'query',
        'None',
        'product category',
        'None',
        'Target',
        'asin',
        'options',
        'attrs',
        'price upper',
        'instuction text',
        'category',
        'product category',
        'query',
        'Goal',
        'None',
        'Reward',
        'Your score (min 0.0, max 1.0)',
        pyFloatRepr(session.score ?? 0),
        'Reward Details',
        'None',
      ];
    }
  }
}

/** The page text the original shows (text observation mode). */
export function pageText(session: Session, ctx: PageContext): string {
  return pageFields(session, ctx).join(' [SEP] ');
}

/** get_available_actions: whether the page has a search bar, and its clickables in the order the original lists them. */
export function pageClickables(session: Session, ctx: PageContext): { hasSearchBar: boolean; clickables: Clickable[] } {
  const byKey = new Map<string, Clickable>();
  // A later element with the same key replaces the earlier one's target but keeps its place (a dict assignment).
  const add = (c: Clickable) => byKey.set(c.key, c);
  const button = (text: string) => add({ key: text.toLowerCase(), kind: 'button' });
  switch (session.page) {
    case 'search':
      button('Search');
      return { hasSearchBar: true, clickables: [...byKey.values()] };
    case 'results':
      button('Back to Search');
      if (session.pageNo > 1) button('< Prev');
      button('Next >');
      for (const i of pageProducts(session)) add({ key: ctx.products[i].asin.toLowerCase(), kind: 'product', product: i });
      break;
    case 'item': {
      for (const text of ['Back to Search', '< Prev', 'Description', 'Features', 'Reviews', 'Buy Now']) button(text);
      for (const [name, values] of ctx.products[session.product!].options) for (const v of values) add({ key: v, kind: 'option', optionName: name });
      break;
    }
    case 'description':
    case 'features':
    case 'reviews':
      button('Back to Search');
      button('< Prev');
      break;
    case 'done':
      break;
  }
  return { hasSearchBar: false, clickables: [...byKey.values()] };
}

/** What an action does, as SimServer.receive decides it. */
export type Transition = { kind: 'none' } | { kind: 'search'; keywords: string[] } | { kind: 'page'; session: Session } | { kind: 'buy' };

/**
 * The next session after clicking `name` (a key of the page's clickables, not 'search'). `search` runs a query for the
 * results pages (next/prev re-run the last search at another page).
 */
export function click(session: Session, clickable: Clickable, search: (keywords: string[]) => number[]): Transition {
  const name = clickable.key;
  if (name === BUY_NOW) return { kind: 'buy' };
  if (name === BACK_TO_SEARCH) return { kind: 'page', session: startSession() };
  const reSearch = (pageNo: number): Transition => {
    const keywords = session.keywords ?? [];
    return { kind: 'page', session: { page: 'results', keywords, pageNo, hits: search(keywords), product: null, options: new Map() } };
  };
  if (name === NEXT_PAGE && session.page === 'results') return reSearch(session.pageNo + 1);
  if (name === PREV_PAGE && session.page === 'results') return reSearch(session.pageNo - 1);
  if (name === PREV_PAGE && (SUB_PAGES as readonly string[]).includes(session.page)) return { kind: 'page', session: { ...session, page: 'item' } };
  if (name === PREV_PAGE && session.page === 'item') return reSearch(session.pageNo);
  if ((SUB_PAGES as readonly string[]).includes(name)) return { kind: 'page', session: { ...session, page: name as SubPage } };
  if (clickable.kind === 'product') return { kind: 'page', session: { ...session, page: 'item', product: clickable.product! } };
  if (clickable.kind === 'option') {
    const options = new Map(session.options);
    options.set(clickable.optionName!, name);
    return { kind: 'page', session: { ...session, page: 'item', options } };
  }
  return { kind: 'page', session: { ...session, page: 'item' } };
}

/** The session after `search[...]`: results page 1 of the keywords, options and product cleared. */
export function searchSession(keywords: string[], hits: number[]): Session {
  return { page: 'results', keywords, pageNo: 1, hits, product: null, options: new Map() };
}
