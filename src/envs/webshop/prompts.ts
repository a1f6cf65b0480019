// WebShop prompt texts (SPEC §2, §8). The framing (memory, trial line, windowed trajectory) is common to all
// environments; this file holds what is WebShop's own: the role, the request, the rules and the answer format.

import { composePlayPrompt, composeReflectPrompt, type CompactObservation } from '../common/framing.js';
import type { PlayPromptInput, ReflectPromptInput } from '../types.js';

export interface WebShopPromptSettings {
  instruction: string;
  maxTurns: number;
}

export function webShopRules(s: WebShopPromptSettings): string {
  return [
    'You are an expert autonomous agent shopping in WebShop, an online store.',
    `Your task is to buy a product that matches this request: ${s.instruction}.`,
    'Pages: the search page (a search box), the results page (a numbered page of products, each shown as its id,',
    'title and price), the item page (the product title, price, option buttons such as size or color, Description,',
    'Features and Buy Now), and the Description and Features pages of an item.',
    'Actions: search[your query] types a query into the search box (only on the search page);',
    'click[button] clicks a button shown on the page: a product id on the results page, an option value on the item',
    'page (it selects that option), Next > and < Prev to move between pages, Back to Search, or Buy Now.',
    'Rules: the product must have the requested attributes, you must select every requested option before you click',
    'Buy Now, and its price must be within the limit. Clicking Buy Now ends the episode; the purchase is scored by',
    `how well it matches the request and only a perfect match counts as success. You have at most ${s.maxTurns} actions.`,
  ].join('\n');
}

export function webShopAnswerFormat(): string {
  return (
    'First reason step by step about the current page and what the request needs. Then give exactly one action,' +
    ' chosen from the available actions, inside <action> and </action>, for example:' +
    ' <action>search[slim fit t-shirt navy blue]</action> or <action>click[buy now]</action>'
  );
}

const REFLECT_HINT =
  'Name what did not match (product type, an attribute, an option, the price) or where steps were wasted, and write' +
  ' the search query, the product to open and the options to select next time.';

/** Compact pages: [SEP] fields joined by ` / `, available actions kept (the model must choose among them). */
export const compactWebShopPage: CompactObservation = (text) =>
  text
    .split(/\n|\s*\[SEP\]\s*/)
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .join(' / ');

export function webShopPlayPrompt(input: PlayPromptInput, s: WebShopPromptSettings): string {
  const framed = composePlayPrompt({
    input,
    rules: webShopRules(s),
    answerFormat: webShopAnswerFormat(),
    compactTag: `shop ${s.instruction}`,
    compactObservation: compactWebShopPage,
  });
  return framed;
}

export function webShopReflectPrompt(input: ReflectPromptInput, s: WebShopPromptSettings): string {
  return composeReflectPrompt({
    input,
    rules: webShopRules(s),
    reflectHint: REFLECT_HINT,
    compactTag: `shop ${s.instruction}`,
    compactObservation: compactWebShopPage,
  });
}
