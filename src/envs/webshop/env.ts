// The WebShop environment (SPEC §8): a request for a product, a search page, paged results, item pages with options,
// and a purchase scored with the WebShop reward. Pages are rendered as text with [SEP] between fields, as in
// WebShop's text mode; the observation adds the list of available actions, the anchor is the page alone.

import { LamerError } from '../../errors.js';
import { Rng } from '../../util/rng.js';
import { extractRemark } from '../common/tags.js';
import { checkSeed, intOption, rejectUnknownOptions } from '../common/options.js';
import type { Environment, Observation, PlayPromptInput, ReflectPromptInput, Reflection, StepResult } from '../types.js';
import { generateCatalog, writeGoal, type Catalog, type Goal, type Product } from './catalog.js';
import { parseWebShopResponse, type WebShopAction } from './parse.js';
import { webShopPlayPrompt, webShopReflectPrompt } from './prompts.js';
import { purchaseScore } from './reward.js';
import { ProductSearch } from './search.js';

export interface WebShopOptions {
  /** A catalog to shop in (e.g. from loadWebShopCatalog); default: a generated one. */
  catalog?: Catalog;
  /** Products in the generated catalog (ignored with `catalog`). Default 1000, like WebShop's small subset. */
  catalogSize?: number;
  /** Seed of the generated catalog (ignored with `catalog`); tasks are seeded separately by reset(seed). */
  catalogSeed?: number;
  /** Max turns per episode (SPEC §6: 12). */
  maxTurns?: number;
  /** Products per results page (WebShop: 10). */
  resultsPerPage?: number;
  /** Results a search returns in all (WebShop: 50). */
  searchLimit?: number;
}

const OPTION_KEYS = ['catalog', 'catalogSize', 'catalogSeed', 'maxTurns', 'resultsPerPage', 'searchLimit'] as const;

export const BACK_TO_SEARCH = 'back to search';
export const NEXT_PAGE = 'next >';
export const PREV_PAGE = '< prev';
export const BUY_NOW = 'buy now';
const SECTIONS = ['description', 'features'] as const;
type Section = (typeof SECTIONS)[number];

/** Where the shopper is. Results, item and detail pages remember the search that led there, for navigation. */
type Page =
  | { kind: 'search' }
  | { kind: 'results'; query: string; hits: number[]; pageNo: number }
  | { kind: 'item'; query: string; hits: number[]; pageNo: number; product: number; selected: Record<string, string> }
  | {
      kind: 'detail';
      query: string;
      hits: number[];
      pageNo: number;
      product: number;
      selected: Record<string, string>;
      section: Section;
    };

export type WebShopPageKind = Page['kind'];

/** Catalogs and their indexes are immutable, so every env built on the same catalog shares one index. */
const searchByCatalog = new WeakMap<Catalog, ProductSearch>();
const generatedCatalogs = new Map<string, Catalog>();

function sharedGeneratedCatalog(size: number, seed: number): Catalog {
  const key = `${size}:${seed}`;
  let catalog = generatedCatalogs.get(key);
  if (catalog === undefined) {
    catalog = generateCatalog(size, seed);
    generatedCatalogs.set(key, catalog);
  }
  return catalog;
}

function sharedSearch(catalog: Catalog): ProductSearch {
  let search = searchByCatalog.get(catalog);
  if (search === undefined) {
    search = new ProductSearch(catalog.products);
    searchByCatalog.set(catalog, search);
  }
  return search;
}

export class WebShopEnv implements Environment {
  readonly name = 'webshop';
  readonly maxTurns: number;
  readonly catalog: Catalog;
  readonly resultsPerPage: number;
  readonly searchLimit: number;
  private readonly search: ProductSearch;
  private readonly asinIndex = new Map<string, number>();
  private task: Goal | null = null;
  private page: Page = { kind: 'search' };
  private turn = 0;
  private finished = false;

  constructor(options: WebShopOptions = {}) {
    rejectUnknownOptions('webshop', options as Record<string, unknown>, OPTION_KEYS);
    const opts = options as Record<string, unknown>;
    this.maxTurns = intOption('webshop', opts, 'maxTurns', 12, 1, 1000);
    this.resultsPerPage = intOption('webshop', opts, 'resultsPerPage', 10, 1, 100);
    this.searchLimit = intOption('webshop', opts, 'searchLimit', 50, 1, 10_000);
    if (options.catalog !== undefined) {
      if (!Array.isArray(options.catalog?.products) || options.catalog.products.length === 0) {
        throw new LamerError('E_ENV', 'webshop option catalog: expected { products: Product[] } with at least one product');
      }
      this.catalog = options.catalog;
    } else {
      const size = intOption('webshop', opts, 'catalogSize', 1000, 1, 1_000_000);
      const seed = intOption('webshop', opts, 'catalogSeed', 0, 0, 2 ** 32 - 1);
      this.catalog = sharedGeneratedCatalog(size, seed);
    }
    if (this.catalog.goals !== undefined && this.catalog.goals.length === 0) {
      throw new LamerError('E_ENV', 'webshop option catalog: goals is empty; omit it to generate goals from products');
    }
    this.catalog.products.forEach((p, i) => this.asinIndex.set(p.asin.toLowerCase(), i));
    this.search = sharedSearch(this.catalog);
  }

  /** The current request (throws before reset()). */
  get goal(): Goal {
    return this.requireTask();
  }

  get products(): readonly Product[] {
    return this.catalog.products;
  }

  get turnsTaken(): number {
    return this.turn;
  }

  /** What the shopper sees, for the expert and tests: page kind, listed products, open product and selections. */
  view(): {
    kind: WebShopPageKind;
    query?: string;
    hits: readonly number[];
    pageNo: number;
    listed: number[];
    product?: number;
    selected: Readonly<Record<string, string>>;
  } {
    const p = this.page;
    if (p.kind === 'search') return { kind: p.kind, hits: [], pageNo: 0, listed: [], selected: {} };
    const listed = p.kind === 'results' ? this.pageSlice(p.hits, p.pageNo) : [];
    return {
      kind: p.kind,
      query: p.query,
      hits: p.hits,
      pageNo: p.pageNo,
      listed,
      product: p.kind === 'results' ? undefined : p.product,
      selected: p.kind === 'results' ? {} : { ...p.selected },
    };
  }

  /** Catalog indices a search for `query` lists, best first; changes nothing (the expert plans with it). */
  searchResults(query: string): number[] {
    return this.search.search(query, this.searchLimit);
  }

  reset(seed: number): Observation {
    checkSeed('webshop', seed);
    const rng = new Rng(seed);
    const goals = this.catalog.goals;
    if (goals !== undefined) {
      this.task = goals[rng.int(goals.length)];
    } else {
      const product = this.catalog.products[rng.int(this.catalog.products.length)];
      this.task = writeGoal(product, rng);
    }
    return this.restart();
  }

  restart(): Observation {
    this.requireTask();
    this.page = { kind: 'search' };
    this.turn = 0;
    this.finished = false;
    return this.observe();
  }

  step(response: string): StepResult {
    const goal = this.requireTask();
    if (this.finished) {
      throw new LamerError('E_ENV', 'webshop.step() after the episode ended: call restart() or reset(seed) first');
    }
    this.turn++;
    const { action } = parseWebShopResponse(typeof response === 'string' ? response : '');
    const outcome = action === null ? null : this.apply(action, goal);
    const timeUp = this.turn >= this.maxTurns;
    // An episode that runs out of turns bought nothing: its WebShop score is 0.
    const endInfo = () => (timeUp ? { ...this.info(), score: 0 } : this.info());
    // A purchase ends the episode by the rules; running out of turns without one is the limit alone.
    const truncated = () => (timeUp ? { truncated: true } : {});
    if (outcome === null) {
      this.finished = timeUp;
      return { observation: this.observe(), reward: 0, done: timeUp, won: false, valid: false, ...truncated(), info: endInfo() };
    }
    if (outcome.purchase !== undefined) {
      this.finished = true;
      const won = outcome.purchase.score >= 1 - 1e-9;
      const info = { ...this.info(), score: outcome.purchase.score, purchased: outcome.purchase.asin, selected: outcome.purchase.selected };
      const text = `Thank you for shopping with us! [SEP] Your score (min 0.0, max 1.0) [SEP] ${outcome.purchase.score.toFixed(2)}`;
      return { observation: { text, anchor: text }, reward: won ? 10 : 0, done: true, won, valid: true, info };
    }
    this.finished = timeUp;
    return { observation: this.observe(), reward: 0, done: timeUp, won: false, valid: true, ...truncated(), info: endInfo() };
  }

  admissibleActions(): string[] {
    this.requireTask();
    if (this.finished) return [];
    const p = this.page;
    if (p.kind === 'search') return ['search[<query>]'];
    return this.clickables(p).map((c) => `click[${c}]`);
  }

  taskType(): string | undefined {
    return this.task?.category;
  }

  playPrompt(input: PlayPromptInput): string {
    return webShopPlayPrompt(input, { instruction: this.requireTask().instruction, maxTurns: this.maxTurns });
  }

  reflectPrompt(input: ReflectPromptInput): string {
    return webShopReflectPrompt(input, { instruction: this.requireTask().instruction, maxTurns: this.maxTurns });
  }

  parseReflection(response: string): Reflection {
    return extractRemark(response);
  }

  // ---- internals ----

  private requireTask(): Goal {
    if (this.task === null) throw new LamerError('E_ENV', 'webshop: call reset(seed) before using the environment');
    return this.task;
  }

  private info(): Record<string, unknown> {
    return { page: this.page.kind, turn: this.turn };
  }

  private pageCount(hits: readonly number[]): number {
    return Math.max(1, Math.ceil(hits.length / this.resultsPerPage));
  }

  private pageSlice(hits: readonly number[], pageNo: number): number[] {
    return hits.slice((pageNo - 1) * this.resultsPerPage, pageNo * this.resultsPerPage);
  }

  /** Buttons on the current page, lower case, in page order. */
  private clickables(p: Exclude<Page, { kind: 'search' }>): string[] {
    if (p.kind === 'results') {
      const buttons = [BACK_TO_SEARCH];
      if (p.pageNo > 1) buttons.push(PREV_PAGE);
      if (p.pageNo < this.pageCount(p.hits)) buttons.push(NEXT_PAGE);
      for (const i of this.pageSlice(p.hits, p.pageNo)) buttons.push(this.products[i].asin.toLowerCase());
      return buttons;
    }
    if (p.kind === 'item') {
      const product = this.products[p.product];
      const buttons = [BACK_TO_SEARCH, PREV_PAGE];
      for (const values of Object.values(product.options)) buttons.push(...values.map((v) => v.toLowerCase()));
      buttons.push(...SECTIONS, BUY_NOW);
      return buttons;
    }
    return [BACK_TO_SEARCH, PREV_PAGE];
  }

  /** Apply a parsed action; null when it does not apply on this page (an invalid, no-op step). */
  private apply(action: WebShopAction, goal: Goal): { purchase?: { score: number; asin: string; selected: Record<string, string> } } | null {
    const p = this.page;
    if (action.kind === 'search') {
      if (p.kind !== 'search') return null;
      this.page = { kind: 'results', query: action.query, hits: this.search.search(action.query, this.searchLimit), pageNo: 1 };
      return {};
    }
    if (p.kind === 'search') return null;
    const target = action.target.toLowerCase();
    if (target === BACK_TO_SEARCH) {
      this.page = { kind: 'search' };
      return {};
    }
    if (p.kind === 'results') {
      if (target === NEXT_PAGE && p.pageNo < this.pageCount(p.hits)) {
        this.page = { ...p, pageNo: p.pageNo + 1 };
        return {};
      }
      if (target === PREV_PAGE && p.pageNo > 1) {
        this.page = { ...p, pageNo: p.pageNo - 1 };
        return {};
      }
      // A product is clicked by its id (as WebShop agents do) or by its full title.
      const listed = this.pageSlice(p.hits, p.pageNo);
      const hit = listed.find((i) => {
        const product = this.products[i];
        return product.asin.toLowerCase() === target || product.name.toLowerCase() === target;
      });
      if (hit === undefined) return null;
      this.page = { kind: 'item', query: p.query, hits: p.hits, pageNo: p.pageNo, product: hit, selected: {} };
      return {};
    }
    if (p.kind === 'item') {
      if (target === PREV_PAGE) {
        this.page = { kind: 'results', query: p.query, hits: p.hits, pageNo: p.pageNo };
        return {};
      }
      if ((SECTIONS as readonly string[]).includes(target)) {
        this.page = { ...p, kind: 'detail', section: target as Section };
        return {};
      }
      const product = this.products[p.product];
      if (target === BUY_NOW) {
        const parts = purchaseScore(product, p.selected, goal);
        return { purchase: { score: parts.score, asin: product.asin, selected: { ...p.selected } } };
      }
      for (const [name, values] of Object.entries(product.options)) {
        const value = values.find((v) => v.toLowerCase() === target);
        if (value !== undefined) {
          this.page = { ...p, selected: { ...p.selected, [name]: value } };
          return {};
        }
      }
      return null;
    }
    // Detail page (description or features): only navigation.
    if (target === PREV_PAGE) {
      this.page = { kind: 'item', query: p.query, hits: p.hits, pageNo: p.pageNo, product: p.product, selected: p.selected };
      return {};
    }
    return null;
  }

  private renderPage(): string {
    const p = this.page;
    const goal = this.requireTask();
    if (p.kind === 'search') return `WebShop [SEP] Instruction: [SEP] ${goal.instruction} [SEP] Search`;
    if (p.kind === 'results') {
      const fields = ['Back to Search', `Page ${p.pageNo} (Total results: ${p.hits.length})`];
      if (p.pageNo > 1) fields.push('< Prev');
      if (p.pageNo < this.pageCount(p.hits)) fields.push('Next >');
      for (const i of this.pageSlice(p.hits, p.pageNo)) {
        const product = this.products[i];
        fields.push(product.asin, product.name, product.priceTag);
      }
      if (p.hits.length === 0) fields.push('No products matched your search.');
      return fields.join(' [SEP] ');
    }
    const product = this.products[p.product];
    const fields = ['Back to Search', '< Prev'];
    if (p.kind === 'detail') {
      fields.push(product.name);
      if (p.section === 'description') fields.push('Description', product.description);
      else fields.push('Features', ...product.features);
      return fields.join(' [SEP] ');
    }
    for (const [name, values] of Object.entries(product.options)) fields.push(name, ...values);
    fields.push(product.name, `Price: ${product.priceTag}`, 'Description', 'Features', 'Buy Now');
    const chosen = Object.entries(p.selected);
    // The selections are part of the state (they change the score), so the page text shows them.
    if (chosen.length > 0) fields.push(`Selected: ${chosen.map(([n, v]) => `${n}: ${v}`).join(', ')}`);
    return fields.join(' [SEP] ');
  }

  private observe(): Observation {
    const anchor = this.renderPage();
    const available = this.page.kind === 'search' ? ['search[<query>]'] : this.clickables(this.page).map((c) => `click[${c}]`);
    return { text: `${anchor}\nAvailable actions: ${available.join(', ')}`, anchor };
  }
}
