// A scripted WebShop shopper for demonstrations and tests. It knows the request (as any reader of the instruction
// does) and may look at the catalog data behind the pages to tell which products can satisfy it, standing in for a
// careful shopper who reads every item page. It searches with the request's words, opens a product that can score 1,
// selects the requested options and buys. When the results do not contain such a product it searches once more with
// the title of the product the request was written from.

import type { Expert, TrajectoryStep } from '../types.js';
import { BACK_TO_SEARCH, BUY_NOW, NEXT_PAGE, PREV_PAGE, type WebShopEnv } from './env.js';
import type { Goal } from './catalog.js';
import { bestSelection, canScorePerfectly } from './reward.js';

/** The request without its price clause: the words worth typing into a search box. */
export function searchQueryFor(goal: Goal): string {
  return goal.instruction.replace(/,?\s*and price lower than[\s\S]*$/i, '').trim();
}

function say(reason: string, action: string): string {
  return `${reason}\n<action>${action}</action>`;
}

export class WebShopExpert implements Expert {
  /** Per task: which catalog products can score 1, judged lazily (only listed products are ever asked about). */
  private judged: { goal: Goal; perfect: Map<number, boolean> } | null = null;

  constructor(private readonly env: WebShopEnv) {}

  private perfectProducts(): { has(index: number): boolean } {
    const goal = this.env.goal;
    if (this.judged?.goal !== goal) this.judged = { goal, perfect: new Map() };
    const memo = this.judged.perfect;
    const products = this.env.products;
    return {
      has(index: number): boolean {
        let ok = memo.get(index);
        if (ok === undefined) {
          ok = canScorePerfectly(products[index], goal);
          memo.set(index, ok);
        }
        return ok;
      },
    };
  }

  act(): string {
    const goal = this.env.goal;
    const view = this.env.view();
    const perfect = this.perfectProducts();
    const target = this.env.products.find((p) => p.asin === goal.asin);
    const fallbackQuery = target?.name ?? searchQueryFor(goal);
    switch (view.kind) {
      case 'search': {
        // Search with the request's words when that finds a usable product early enough; otherwise with the title of
        // the product the request was written from (a shopper who saw nothing fitting would search more precisely).
        const requestQuery = searchQueryFor(goal);
        const hits = this.env.searchResults(requestQuery);
        const first = hits.findIndex((i) => perfect.has(i));
        const pagesToReach = first < 0 ? Infinity : Math.floor(first / this.env.resultsPerPage);
        const turnsLeft = this.env.maxTurns - this.env.turnsTaken;
        // search, page turns, open, select options, buy: all must fit in the turns left.
        const useRequest = 1 + pagesToReach + 1 + goal.options.length + 1 <= turnsLeft;
        const query = useRequest ? requestQuery : fallbackQuery;
        return say('I am on the search page, so I search for the requested product.', `search[${query}]`);
      }
      case 'results': {
        const onPage = view.listed.find((i) => perfect.has(i));
        if (onPage !== undefined) {
          const asin = this.env.products[onPage].asin.toLowerCase();
          return say(`Product ${asin} matches the request and its price is within the limit, so I open it.`, `click[${asin}]`);
        }
        const later = view.hits.findIndex((i) => perfect.has(i));
        const laterPage = later < 0 ? -1 : Math.floor(later / this.env.resultsPerPage) + 1;
        if (laterPage > view.pageNo) return say('A matching product is further down the results.', `click[${NEXT_PAGE}]`);
        if (laterPage > 0 && laterPage < view.pageNo) return say('A matching product was on an earlier page.', `click[${PREV_PAGE}]`);
        return say('None of these results matches the request, so I search again with a more precise query.', `click[${BACK_TO_SEARCH}]`);
      }
      case 'item': {
        const product = this.env.products[view.product!];
        if (!perfect.has(view.product!)) {
          return say('This product does not match the request, so I go back to the results.', `click[${PREV_PAGE}]`);
        }
        const wanted = bestSelection(product, goal);
        for (const [name, value] of Object.entries(wanted)) {
          if (view.selected[name] !== value) {
            return say(`The request asks for ${name} ${value}, so I select it.`, `click[${value.toLowerCase()}]`);
          }
        }
        return say('The product matches and every requested option is selected, so I buy it.', `click[${BUY_NOW}]`);
      }
      default:
        return say('This page only describes the item; I go back to the item page.', `click[${PREV_PAGE}]`);
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
    const options = goal.options.length > 0 ? `, select ${goal.options.join(' and ')}` : '';
    const plan =
      `search[${searchQueryFor(goal)}], open ${target ? `${target.asin.toLowerCase()} (${target.name})` : 'a product of the requested type'}` +
      ` that is ${goal.attributes.join(', ')} and costs less than ${goal.priceUpper.toFixed(2)} dollars${options}, then click Buy Now.`;
    return `Looking back at trial: ${wrong}\n<remark>What went wrong: ${wrong} Plan for the next trial: ${plan}</remark>`;
  }
}
