// A scripted WebShop shopper that acts only on what the pages show and on what its own reflections state: it searches
// with the request's words before its options (what the search page offers), opens the first listed product it has
// not already bought in an earlier episode of the trial and whose listed price is within the request's limit (turning
// the page when none is), clicks the option values the request names, and buys. After a failed episode it writes down
// which products it bought (the page never says whether a product matches the request's attributes: that is found out
// by buying), and the next episode skips them. The scripted expert (expert.ts) instead reads the data behind the pages
// to open a product that scores 1, and its compact reflection names that product: neither is something a model can
// learn from its prompt.

import type { PromptStyle, TrajectoryStep } from '../types.js';
import { searchWords, type WebShopEnv } from './env.js';
import { optionClicks } from './expert.js';
import { goalOptionValues } from './reward/score.js';
import { BACK_TO_SEARCH, BUY_NOW, NEXT_PAGE, PREV_PAGE, PRODUCT_WINDOW } from './site/pages.js';

/** The lowest price a listed price tag shows (`$25.41 to $30.41` -> 25.41); Infinity when it shows none. */
export function listedPrice(tag: string): number {
  const m = tag.match(/\$\s*([\d,]+(?:\.\d+)?)/);
  return m === null ? Infinity : Number(m[1].replace(/,/g, ''));
}

/** What a `click[...]` action clicks, in lower case; null for any other action. */
export function clicked(action: string): string | null {
  const m = action.trim().match(/^click\[\s*(.+?)\s*\]$/i);
  return m === null ? null : m[1].toLowerCase();
}

/** Whether a clicked button is a product (its ASIN). */
export const isProduct = (what: string): boolean => /^b[0-9a-z]{9}$/.test(what);

/** The products a failed episode bought (lowercase ASINs, in order), from its clicks: `click[asin]` then `click[buy now]`. */
export function boughtInEpisode(steps: readonly TrajectoryStep[]): string[] {
  const bought: string[] = [];
  let open: string | null = null;
  for (const s of steps) {
    if (s.refused === true) continue;
    const what = clicked(s.action);
    if (what === null) continue;
    if (isProduct(what)) open = what;
    else if (what === BUY_NOW && open !== null && !bought.includes(open)) bought.push(open);
  }
  return bought;
}

export interface BrowserOptions {
  /** `compact`: the action alone inside the tags, and a terse reflection; default `full`. */
  style?: PromptStyle;
}

export class WebShopBrowser {
  readonly style: PromptStyle;
  /** Products bought in earlier, failed episodes of this trial (what the reflections state). */
  readonly tried: string[] = [];

  constructor(
    readonly env: WebShopEnv,
    options: BrowserOptions = {},
  ) {
    this.style = options.style ?? 'full';
  }

  nextAction(): string {
    const env = this.env;
    const goal = env.goal;
    const view = env.view();
    switch (view.page) {
      case 'search':
        return `search[${searchWords(goal)}]`;
      case 'results': {
        const listed = view.hits.slice((view.pageNo - 1) * PRODUCT_WINDOW, view.pageNo * PRODUCT_WINDOW);
        const pick = listed.find((i) => {
          const p = env.products[i];
          return !this.tried.includes(p.asin.toLowerCase()) && listedPrice(p.priceTag) <= goal.priceUpper;
        });
        if (pick !== undefined) return `click[${env.products[pick].asin.toLowerCase()}]`;
        return view.pageNo * PRODUCT_WINDOW < view.hits.length ? `click[${NEXT_PAGE}]` : `click[${BACK_TO_SEARCH}]`;
      }
      case 'item': {
        const index = view.product!;
        for (const [name, value] of optionClicks(env.products[index], goal, env.settings.fuzz)) {
          if (view.options.get(name) !== value) return `click[${value}]`;
        }
        return `click[${BUY_NOW}]`;
      }
      default:
        return `click[${PREV_PAGE}]`;
    }
  }

  /**
   * Clicks the current page refuses that a model plausibly makes (for demonstrations that show recovering from one):
   * a product this page does not list (one a reflection named, one opened earlier in the episode, the first of the
   * next results page), a requested option value the open product does not offer, or the last click again where the
   * page refuses it. Searches are never refused.
   */
  refusedClicks(steps: readonly TrajectoryStep[]): string[] {
    const env = this.env;
    const view = env.view();
    const admissible = new Set(env.admissibleActions());
    const opened = steps.map((s) => clicked(s.action)).filter((what): what is string => what !== null && isProduct(what));
    const unlisted = view.page === 'results' ? view.hits.slice(view.pageNo * PRODUCT_WINDOW, view.pageNo * PRODUCT_WINDOW + 1) : [];
    const out = [...this.tried, ...opened, ...unlisted.map((i) => env.products[i].asin.toLowerCase())].map((asin) => `click[${asin}]`);
    if (view.page === 'item') for (const v of goalOptionValues(env.goal)) out.push(`click[${typeof v === 'string' ? v : v[1]}]`);
    const last = steps.at(-1)?.action;
    if (last?.startsWith('click[')) out.push(last);
    return [...new Set(out)].filter((a) => !admissible.has(a));
  }

  /**
   * Whether the open page is a product that lacks an option value the request names (its click is not among the
   * page's actions): the browser then clicks only the requested values that are offered, and buys, where a model that
   * copies the request's values clicks one the page refuses.
   */
  lacksRequestedValue(): boolean {
    const env = this.env;
    if (env.view().page !== 'item') return false;
    const admissible = new Set(env.admissibleActions());
    return goalOptionValues(env.goal).some((v) => !admissible.has(`click[${typeof v === 'string' ? v : v[1]}]`));
  }

  act(): string {
    const action = this.nextAction();
    if (this.style === 'compact') return `<action>${action}</action>`;
    return `I open the first listed product I have not bought before, select the requested options and buy it.\n<action>${action}</action>`;
  }

  /** Remember what a failed episode showed (exactly what its reflection states). */
  endEpisode(steps: readonly TrajectoryStep[]): void {
    for (const asin of boughtInEpisode(steps)) if (!this.tried.includes(asin)) this.tried.push(asin);
  }

  reflect(steps: readonly TrajectoryStep[]): string {
    const bought = boughtInEpisode(steps);
    if (this.style === 'compact') return `<remark>${bought.length > 0 ? `wrong: ${bought.join(', ')}.` : 'no purchase.'}</remark>`;
    const text =
      bought.length > 0
        ? `I bought ${bought.join(', ')}, which did not match the whole request; next time I open another product.`
        : `I bought nothing in ${steps.length} action(s).`;
    return `I review the trial.\n<remark>${text}</remark>`;
  }
}
