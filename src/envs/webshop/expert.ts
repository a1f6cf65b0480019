// A scripted WebShop shopper for demonstrations and tests. It knows the request (as any reader of the instruction
// does) and may look at the data behind the pages to tell which products can satisfy it, standing in for a careful
// shopper who reads every item page. It searches with the request's words, opens a product that can score 1, clicks
// the requested option values and buys. When the results hold no such product it searches once more with the title of
// the product the request was written from.

import type { Expert, PromptStyle, TrajectoryStep } from '../types.js';
import type { Goal, Product } from './data/pipeline.js';
import { requestWords, searchWords, type WebShopEnv } from './env.js';
import { tokenSetRatio } from './reward/fuzz.js';
import { BACK_TO_SEARCH, BUY_NOW, NEXT_PAGE, PREV_PAGE, PRODUCT_WINDOW } from './site/pages.js';
import { getReward, goalOptionValues, normalizeColor } from './reward/score.js';

/** The words the expert types into the search box: the request without its price clause. */
export const searchQueryFor = requestWords;

/** Compact answers fit a tiny model's response budget (and the demonstrations' 96-character cut). */
const COMPACT_QUERY_CHARS = 60;

/** The compact search: the request's words before its option list, at most COMPACT_QUERY_CHARS. */
export function compactQuery(goal: Goal): string {
  return searchWords(goal).slice(0, COMPACT_QUERY_CHARS).trim();
}

/**
 * The option values to click on `product` for the goal, each with the option group clicking it selects (a value that
 * appears in several groups selects the last one, as the original's clickables do).
 */
export function optionClicks(product: Product, goal: Goal, fuzz: 'rapidfuzz' | 'difflib' = 'rapidfuzz'): Array<[string, string]> {
  const lastGroup = new Map<string, string>();
  for (const [name, values] of product.options) for (const v of values) lastGroup.set(v, name);
  const clicks: Array<[string, string]> = [];
  for (const wanted of goalOptionValues(goal)) {
    const target = normalizeColor(wanted);
    // Prefer the exact value of the same option; else any value the reward counts as a match.
    const exact = typeof wanted !== 'string' && lastGroup.get(wanted[1]) === wanted[0] ? wanted[1] : undefined;
    const value = exact ?? [...lastGroup.keys()].find((v) => tokenSetRatio(normalizeColor(v), target, fuzz) > 85);
    if (value !== undefined) clicks.push([lastGroup.get(value)!, value]);
  }
  return clicks;
}

export interface WebShopExpertOptions {
  /** `compact`: bare actions, a short search and a short reflection, for tiny models; else reasons and plans. */
  style?: PromptStyle;
}

export class WebShopExpert implements Expert {
  /** Per goal: which products can score 1 (judged lazily), and whether the request's own words were searched. */
  #judged: { goal: Goal; perfect: Map<number, boolean>; triedRequest: boolean } | null = null;
  readonly #compact: boolean;

  constructor(
    private readonly env: WebShopEnv,
    options: WebShopExpertOptions = {},
  ) {
    this.#compact = options.style === 'compact';
  }

  #say(reason: string, action: string): string {
    return this.#compact ? `<action>${action}</action>` : `${reason}\n<action>${action}</action>`;
  }

  #state(): { goal: Goal; perfect: Map<number, boolean>; triedRequest: boolean } {
    const goal = this.env.goal;
    if (this.#judged?.goal !== goal) this.#judged = { goal, perfect: new Map(), triedRequest: false };
    if (this.env.turnsTaken === 0) this.#judged.triedRequest = false;
    return this.#judged;
  }

  /** Whether buying product `i` with the right clicks scores 1. */
  perfect(i: number): boolean {
    const state = this.#state();
    let ok = state.perfect.get(i);
    if (ok === undefined) {
      const product = this.env.products[i];
      const options = new Map<string, string>();
      for (const [name, value] of optionClicks(product, state.goal, this.env.settings.fuzz)) options.set(name, value);
      const settings = { nouns: this.env.data.nouns, fuzz: this.env.settings.fuzz };
      ok = getReward(product, state.goal, this.env.priceOf(i), options, settings).score === 1;
      state.perfect.set(i, ok);
    }
    return ok;
  }

  act(): string {
    const state = this.#state();
    const goal = state.goal;
    const view = this.env.view();
    switch (view.page) {
      case 'search': {
        // The request's words when they find a usable product early enough; otherwise the title of the product the
        // request was written from (a shopper who saw nothing fitting searches more precisely).
        const request = this.#compact ? compactQuery(goal) : searchQueryFor(goal);
        const first = this.env.searchResults(request).findIndex((i) => this.perfect(i));
        const pages = first < 0 ? Infinity : Math.floor(first / PRODUCT_WINDOW);
        const turnsLeft = this.env.maxTurns - this.env.turnsTaken;
        // search, page turns, open, options, buy: all must fit in the turns left.
        const useRequest = !state.triedRequest && 1 + pages + 1 + goalOptionValues(goal).length + 1 <= turnsLeft;
        state.triedRequest = true;
        const target = this.env.products.find((p) => p.asin === goal.asin);
        const query = useRequest || target === undefined ? request : target.name;
        return this.#say('I am on the search page, so I search for the requested product.', `search[${query}]`);
      }
      case 'results': {
        const listed = view.hits.slice((view.pageNo - 1) * PRODUCT_WINDOW, view.pageNo * PRODUCT_WINDOW);
        const here = listed.find((i) => this.perfect(i));
        if (here !== undefined) {
          const asin = this.env.products[here].asin.toLowerCase();
          return this.#say(`Product ${asin} matches the request and its price is within the limit, so I open it.`, `click[${asin}]`);
        }
        const later = view.hits.findIndex((i) => this.perfect(i));
        const laterPage = later < 0 ? -1 : Math.floor(later / PRODUCT_WINDOW) + 1;
        if (laterPage > view.pageNo) return this.#say('A matching product is further down the results.', `click[${NEXT_PAGE}]`);
        if (laterPage > 0 && laterPage < view.pageNo) return this.#say('A matching product was on an earlier page.', `click[${PREV_PAGE}]`);
        return this.#say('None of these results matches the request, so I search again with a more precise query.', `click[${BACK_TO_SEARCH}]`);
      }
      case 'item': {
        const index = view.product!;
        if (!this.perfect(index)) return this.#say('This product does not match the request, so I go back to the results.', `click[${PREV_PAGE}]`);
        for (const [name, value] of optionClicks(this.env.products[index], goal, this.env.settings.fuzz)) {
          if (view.options.get(name) !== value) return this.#say(`The request asks for ${name} ${value}, so I select it.`, `click[${value}]`);
        }
        return this.#say('The product matches and every requested option is selected, so I buy it.', `click[${BUY_NOW}]`);
      }
      default:
        return this.#say('This page only describes the item; I go back to the item page.', `click[${PREV_PAGE}]`);
    }
  }

  reflect(steps: TrajectoryStep[]): string {
    const goal = this.env.goal;
    const target = this.env.products.find((p) => p.asin === goal.asin);
    const bought = steps.some((s) => /^click\[\s*buy now\s*\]$/i.test(s.action.trim()));
    const searched = steps.some((s) => /^search\[/i.test(s.action.trim()));
    let wrong: string;
    if (!searched) wrong = 'I never searched for the product, so I could not find it.';
    else if (bought) wrong = 'I bought a product that did not match the whole request (type, attributes, options or price).';
    else wrong = `I ran out of actions before clicking Buy Now (${steps.length} actions used).`;
    const clicks = target === undefined ? [] : optionClicks(target, goal, this.env.settings.fuzz).map(([, v]) => v);
    if (this.#compact) {
      // The facts the next attempt needs: which product, which options.
      return `<remark>buy ${target?.asin.toLowerCase() ?? goal.asin.toLowerCase()}${clicks.length > 0 ? ` ${clicks.join(', ')}` : ''}</remark>`;
    }
    const options = clicks.length > 0 ? `, select ${clicks.join(' and ')}` : '';
    const limit = goal.priceUpper < 1000000 ? ` and costs less than ${goal.priceUpper.toFixed(2)} dollars` : '';
    const plan =
      `search[${searchQueryFor(goal)}], open ${target ? `${target.asin.toLowerCase()} (${target.name})` : 'a product of the requested type'}` +
      ` that is ${goal.attributes.join(', ')}${limit}${options}, then click Buy Now.`;
    return `Looking back at trial: ${wrong}\n<remark>What went wrong: ${wrong} Plan for the next trial: ${plan}</remark>`;
  }
}
