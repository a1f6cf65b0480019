// The WebShop purchase score (SPEC §8), with the structure of the original WebShop reward:
//   score = r_type * (attributes matched + options matched + price within limit) / (#attributes + #options + 1)
// r_type is 1 when the purchased product is the wanted kind of product and drops to 0.5 / 0.1 / 0 as the evidence
// for that weakens. The original compared nouns found by a parser and used fuzzy string ratios; this project compares
// whole words, because generated products use the exact vocabulary of the goals and loaded data is lower-cased and
// normalised the same way on both sides.

import type { Goal, Product } from './catalog.js';
import { words } from './catalog.js';

export interface ScoreParts {
  score: number;
  typeScore: number;
  titleScore: number;
  queryMatch: boolean;
  categoryMatch: boolean;
  attributesMatched: number;
  optionsMatched: number;
  priceOk: boolean;
}

/** Words joined by single spaces and padded, so phrase containment can be tested on word boundaries. */
function phraseText(text: string): string {
  return ` ${words(text).join(' ')} `;
}

/** Per-product text prepared once: products are immutable and scored many times (by the expert in particular). */
interface PreparedProduct {
  segments: Set<string>;
  titleWords: Set<string>;
  listedAttributes: Set<string>;
  text: string;
}
const prepared = new WeakMap<Product, PreparedProduct>();

function prepare(product: Product): PreparedProduct {
  let p = prepared.get(product);
  if (p === undefined) {
    p = {
      segments: breadcrumbSegments(product.productCategory),
      titleWords: new Set(words(product.name)),
      listedAttributes: new Set(product.attributes.map(normalizeOption)),
      text: phraseText([product.name, product.features.join(' '), product.description].join(' ')),
    };
    prepared.set(product, p);
  }
  return p;
}

function breadcrumbSegments(path: string): Set<string> {
  return new Set(
    path
      .split('›')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
}

/** The goal side, prepared once per goal for the same reason. */
interface PreparedGoal {
  segments: Set<string>;
  typeWords: string[];
  attributes: Array<{ key: string; phrase: string }>;
  options: string[];
}
const preparedGoals = new WeakMap<Goal, PreparedGoal>();

function prepareGoal(goal: Goal): PreparedGoal {
  let g = preparedGoals.get(goal);
  if (g === undefined) {
    g = {
      segments: breadcrumbSegments(goal.productCategory),
      typeWords: [...new Set(goal.typeWords)],
      attributes: goal.attributes.map((a) => ({ key: normalizeOption(a), phrase: phraseText(a) })),
      options: goal.options.map(normalizeOption),
    };
    preparedGoals.set(goal, g);
  }
  return g;
}

/** Option values compare after lower-casing and collapsing punctuation ("Navy/Blue" equals "navy blue"). */
export function normalizeOption(value: string): string {
  return words(value).join(' ');
}

/**
 * How well the purchased product is the wanted kind of product. The title score is the share of the goal's type words
 * found in the purchased title; a matching search query or at least two shared breadcrumb segments also count.
 */
export function typeReward(product: Product, goal: Goal): Pick<ScoreParts, 'typeScore' | 'titleScore' | 'queryMatch' | 'categoryMatch'> {
  const queryMatch = product.query === goal.query;
  const p = prepare(product);
  const g = prepareGoal(goal);
  let shared = 0;
  for (const s of p.segments) if (g.segments.has(s)) shared++;
  const categoryMatch = shared >= 2;
  const titleWords = p.titleWords;
  const wanted = g.typeWords;
  // No type words at all: neutral evidence, as in WebShop (enough to keep r_type above zero, not to confirm it).
  const titleScore = wanted.length === 0 ? 0.2 : wanted.filter((w) => titleWords.has(w)).length / wanted.length;
  let typeScore = 1;
  if (!(queryMatch || categoryMatch || titleScore > 0.2)) typeScore = 0.5;
  if (titleScore < 0.1) typeScore = 0.1;
  if (titleScore === 0) typeScore = 0;
  return { typeScore, titleScore, queryMatch, categoryMatch };
}

/** A goal attribute is matched by the product's attribute list, or by its title, features or description. */
export function attributeMatches(product: Product, goal: Goal): number {
  const { listedAttributes: listed, text } = prepare(product);
  let matched = 0;
  for (const { key, phrase } of prepareGoal(goal).attributes) {
    if (listed.has(key) || (phrase.trim().length > 0 && text.includes(phrase))) matched++;
  }
  return matched;
}

/** A goal option is matched when one of the chosen option values equals it. */
export function optionMatches(selected: Record<string, string>, goal: Goal): number {
  const chosen = new Set(Object.values(selected).map(normalizeOption));
  return prepareGoal(goal).options.filter((o) => chosen.has(o)).length;
}

/** The WebShop score of buying `product` with the option values `selected` (option name to value). */
export function purchaseScore(product: Product, selected: Record<string, string>, goal: Goal): ScoreParts {
  const type = typeReward(product, goal);
  const attributesMatched = attributeMatches(product, goal);
  const optionsMatched = optionMatches(selected, goal);
  const priceOk = product.price <= goal.priceUpper;
  const total = goal.attributes.length + goal.options.length + 1;
  const score = (type.typeScore * (attributesMatched + optionsMatched + (priceOk ? 1 : 0))) / total;
  return { score, ...type, attributesMatched, optionsMatched, priceOk };
}

/**
 * The option selection that serves the goal best on this product: for each requested value, the option that offers
 * it. Used by the expert and by tests to know which products can still earn a perfect score.
 */
export function bestSelection(product: Product, goal: Goal): Record<string, string> {
  const selected: Record<string, string> = {};
  for (const wanted of goal.options) {
    const key = normalizeOption(wanted);
    for (const [name, values] of Object.entries(product.options)) {
      if (name in selected) continue;
      const hit = values.find((v) => normalizeOption(v) === key);
      if (hit !== undefined) {
        selected[name] = hit;
        break;
      }
    }
  }
  return selected;
}

/** True when buying this product with the right options scores 1.0. */
export function canScorePerfectly(product: Product, goal: Goal): boolean {
  return purchaseScore(product, bestSelection(product, goal), goal).score >= 1 - 1e-9;
}
