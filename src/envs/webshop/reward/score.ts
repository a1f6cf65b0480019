// The WebShop reward, a port of web_agent_site/engine/goal.py (get_reward and its parts) and normalize.py's
// normalize_color:
//   score = r_type * (attributes matched + options matched + [price <= price_upper]) / (#attributes + #options + 1)
// Attributes match by token_set_ratio > 85 against the product's attribute list, else as substrings of the title,
// the bullet points or the description; options match by token_set_ratio > 85 after colour normalisation; r_type is
// 1, 0.5, 0.1 or 0 from the query, the breadcrumb and the share of the goal title's nouns in the bought title.

import type { Goal, Product } from '../data/pipeline.js';
import { tokenSetRatio, type FuzzBackend } from './fuzz.js';
import type { NounSource } from './nouns.js';

/** normalize.py's COLOR_SET, in its order (the first colour found wins). */
export const COLOR_SET: readonly string[] = (
  'alabaster apricot aqua ash asphalt azure banana beige black blue blush bordeaux bronze brown burgundy camel camo ' +
  'caramel champagne charcoal cheetah chestnut chocolate christmas coffee cognac copper coral cranberry cream crystal ' +
  'dark denim eggplant elephant espresso fuchsia gold granite grape graphite grass gray green grey heather indigo ' +
  'ivory ivy khaki lavender lemon leopard light lilac lime magenta maroon mauve merlot midnight mint mocha multicolor ' +
  'mushroom mustard natural navy nude olive orange peach pewter pink plum purple rainbow red rose royal rust sand ' +
  'sapphire seashell silver skull slate steel stone stonewash sunflower tan taupe teal tiger turquoise violet walnut ' +
  'wheat white wine yellow'
).split(' ');

/** An option as goal.py compares it: a value, or a synthetic goal's `(name, value)` pair. */
export type OptionValue = string | readonly [string, string];

/**
 * normalize_color: for a string, the first COLOR_SET word it contains; for a pair, the first COLOR_SET word equal to
 * one of its elements; otherwise the input unchanged.
 */
export function normalizeColor(value: OptionValue): OptionValue {
  for (const color of COLOR_SET) {
    if (typeof value === 'string' ? value.includes(color) : value.includes(color)) return color;
  }
  return value;
}

export interface TypeReward {
  rType: number;
  queryMatch: boolean;
  categoryMatch: boolean;
  titleScore: number;
}

export interface RewardParts extends TypeReward {
  score: number;
  rAttribute: number;
  attributesMatched: number;
  /** null when the goal names no option. */
  rOption: number | null;
  optionsMatched: number;
  rPrice: boolean;
}

export interface RewardSettings {
  nouns: NounSource;
  fuzz: FuzzBackend;
}

function breadcrumb(path: string): Set<string> {
  return new Set(path.split('›').map((s) => s.trim()));
}

/** get_type_reward. */
export function typeReward(product: Pick<Product, 'asin' | 'name' | 'query' | 'productCategory'>, goal: Goal, nouns: NounSource): TypeReward {
  const queryMatch = product.query === goal.query;
  const bought = breadcrumb(product.productCategory);
  let shared = 0;
  for (const s of breadcrumb(goal.productCategory)) if (bought.has(s)) shared++;
  const categoryMatch = shared >= 2;
  const boughtNouns = new Set(nouns.nouns(product.asin, product.name));
  const wanted = nouns.nouns(goal.asin, goal.name);
  const wantedSet = new Set(wanted);
  let common = 0;
  for (const n of wantedSet) if (boughtNouns.has(n)) common++;
  const titleScore = wanted.length === 0 ? 0.2 : common / wanted.length;
  let rType = 1;
  if (!(queryMatch || categoryMatch || titleScore > 0.2)) rType = 0.5;
  if (titleScore < 0.1) rType = 0.1;
  if (titleScore === 0) rType = 0;
  return { rType, queryMatch, categoryMatch, titleScore };
}

/** get_attribute_reward: [r_attr, matches]. */
export function attributeReward(
  product: Pick<Product, 'attributes' | 'name' | 'bulletPoints' | 'description'>,
  goal: Pick<Goal, 'attributes'>,
  fuzz: FuzzBackend = 'rapidfuzz',
): [number, number] {
  const title = product.name.toLowerCase();
  const bullets = product.bulletPoints.join(' ').toLowerCase();
  const description = product.description.toLowerCase();
  let matches = 0;
  for (const wanted of goal.attributes) {
    if (product.attributes.some((a) => tokenSetRatio(a, wanted, fuzz) > 85)) matches++;
    else if (title.includes(wanted) || bullets.includes(wanted) || description.includes(wanted)) matches++;
  }
  return [matches / goal.attributes.length, matches];
}

/** get_option_reward: [r_option or null without goal options, matches]. */
export function optionReward(purchased: readonly OptionValue[], goalOptions: readonly OptionValue[], fuzz: FuzzBackend = 'rapidfuzz'): [number | null, number] {
  const bought = purchased.map(normalizeColor);
  let matches = 0;
  for (const wanted of goalOptions.map(normalizeColor)) {
    if (bought.some((b) => tokenSetRatio(b, wanted, fuzz) > 85)) matches++;
  }
  return [goalOptions.length > 0 ? matches / goalOptions.length : null, matches];
}

/** A goal's options as get_reward hands them on: `(name, value)` pairs for synthetic goals, texts for human ones. */
export function goalOptionValues(goal: Goal): OptionValue[] {
  return goal.goalOptions instanceof Map ? [...goal.goalOptions].map(([k, v]) => [k, v] as const) : [...goal.goalOptions];
}

function goalOptionCount(goal: Goal): number {
  return goal.goalOptions instanceof Map ? goal.goalOptions.size : goal.goalOptions.length;
}

/**
 * get_reward for buying `product` at its hidden `price` with the selected options (option name to value, in the order
 * they were first selected).
 */
export function getReward(product: Product, goal: Goal, price: number, options: ReadonlyMap<string, string>, settings: RewardSettings): RewardParts {
  const type = typeReward(product, goal, settings.nouns);
  const rPrice = price <= goal.priceUpper;
  const [rAttribute, attributesMatched] = attributeReward(product, goal, settings.fuzz);
  const [rOption, optionsMatched] = optionReward([...options.values()], goalOptionValues(goal), settings.fuzz);
  let score = (attributesMatched + optionsMatched + (rPrice ? 1 : 0)) / (goal.attributes.length + goalOptionCount(goal) + 1);
  score *= type.rType;
  return { score, ...type, rAttribute, attributesMatched, rOption, optionsMatched, rPrice };
}
