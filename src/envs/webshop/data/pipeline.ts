// The original WebShop data and its load pipeline (web_agent_site/engine/engine.py::load_products and
// goal.py::get_synthetic_goals / get_human_goals), on the three files' JSON: the products (items_shuffle*.json), the
// attributes and synthetic instructions (items_ins_v2*.json) and the human instructions (items_human_ins.json). The
// generated catalog (catalog.ts) writes the same JSON, so both take this one path.
//
// The random draws are the original's, in its order, on a ported CPython `random` (src/util/mt19937.ts): for a worker
// seed, random.seed(seed); one random.uniform(lo, hi) per range-priced product, in catalog order; one
// random.sample(price_range, 2) per goal-bearing product (synthetic) or instruction (human), in catalog order; then
// random.seed(seed) and random.shuffle(goals).

import { LamerError } from '../../../errors.js';
import { PyRandom } from '../../../util/mt19937.js';
import { pyFloatRepr } from '../../common/python.js';

/** Which goals are built: the synthetic ones of items_ins (the paper's) or the human instructions. */
export type GoalSource = 'synthetic' | 'human';

/** One human instruction of items_human_ins.json. */
export interface HumanInstruction {
  instruction: string;
  instructionAttributes: string[];
  instructionOptions: string[];
}

/** A product as load_products leaves it: the fields the pages, the search and the reward read. */
export interface Product {
  asin: string;
  /** `name` (shown as the title). */
  name: string;
  category: string;
  /** `query`, lower-cased and stripped. */
  query: string;
  /** Breadcrumb path joined with ' › '. */
  productCategory: string;
  /** `full_description`. */
  description: string;
  /** `small_description` (a list, or one string wrapped in a list). */
  bulletPoints: string[];
  /** The parsed prices: one, two (a range), or [100] when the file has none. */
  pricing: number[];
  /** The price as pages show it: `$12.5`, `$10.0 to $14.99`, `$100.0` (Python float repr). */
  priceTag: string;
  /** Option name (lower-cased) to its values (stripped, `/` as ` | `, lower-cased), in file order, repeats kept. */
  options: Map<string, string[]>;
  /** items_ins attributes, or ['DUMMY_ATTR'] when the product has none there. */
  attributes: string[];
  /** Synthetic instruction and its attributes (items_ins), when goals are synthetic. */
  instructionText: string | null;
  instructionAttributes: string[] | null;
  /** Human instructions (items_human_ins), when goals are human. */
  humanInstructions: HumanInstruction[] | null;
}

/** A goal as goal.py builds it. */
export interface Goal {
  asin: string;
  category: string;
  query: string;
  /** The target product's title: the type score compares its nouns with the bought product's. */
  name: string;
  productCategory: string;
  instruction: string;
  attributes: string[];
  /** Purchases at or below this price get the price point; 1000000 when no limit was drawn. */
  priceUpper: number;
  /** Synthetic goals: option name to value (compared as `(name, value)` pairs); human goals: option texts. */
  goalOptions: Map<string, string> | string[];
  /** The original's sampling weight (used by its random restart draw): attribute rarity, or 1 for human goals. */
  weight: number;
}

/** The names of the three files, for errors. */
export interface FileNames {
  products: string;
  attributes: string;
  humanInstructions: string;
}

type Json = unknown;

function isRecord(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bad(file: string, where: string, what: string): LamerError {
  return new LamerError('E_CONFIG', `webshop data ${file}${where}: ${what}; the file must be in the original WebShop format (docs/webshop-data.md)`);
}

/** engine.py's price parsing: the numbers after each `$`, digits and dots only; none at all is $100.0. */
export function parsePricing(pricing: Json, where: () => string): { pricing: number[]; priceTag: string } {
  if (pricing === undefined || pricing === null || pricing === '' || pricing === false) return { pricing: [100], priceTag: '$100.0' };
  if (typeof pricing !== 'string') throw new LamerError('E_CONFIG', `${where()}: pricing must be a string like "$12.99", found ${JSON.stringify(pricing)}`);
  const values = pricing
    .split('$')
    .slice(1)
    .map((part) => {
      const digits = part.replace(/[^\d.]/g, '');
      if (!/^(\d+\.?\d*|\.\d+)$/.test(digits)) {
        throw new LamerError(
          'E_CONFIG',
          `${where()}: pricing ${JSON.stringify(pricing)} has a $ not followed by a number (the original cannot parse it either)`,
        );
      }
      return Number(digits);
    });
  if (values.length === 0)
    throw new LamerError('E_CONFIG', `${where()}: pricing ${JSON.stringify(pricing)} has no $ amount (the original cannot parse it either)`);
  if (values.length === 1) return { pricing: values, priceTag: `$${pyFloatRepr(values[0])}` };
  return { pricing: values.slice(0, 2), priceTag: `$${pyFloatRepr(values[0])} to $${pyFloatRepr(values[1])}` };
}

/**
 * The most characters one text of the data (a name, a description, a bullet point, an option value, an instruction) may
 * have. Search indexes every product's text at once and holds about a hundred bytes per character while it does, so one
 * 100-MB description would take gigabytes; WebShop's own texts are a few thousand characters at most.
 */
export const MAX_TEXT_CHARS = 100_000;

/**
 * The most synthetic goals the data may give (the sum over products of their option-value combinations): goals are
 * built and shuffled whole, as goal.py does, so a product with 7 options of 10 values would otherwise build 10^7 goals.
 * The generated catalog's 1,000 products give 6,461; 100,000 goals take about 110 MB and a second to build.
 */
export const MAX_SYNTHETIC_GOALS = 500_000;

function boundedText(s: string, where: () => string): string {
  if (s.length > MAX_TEXT_CHARS) {
    throw new LamerError('E_CONFIG', `${where()}: a text of ${s.length} characters, more than the ${MAX_TEXT_CHARS} a data text may have`);
  }
  return s;
}

function stringList(v: Json, where: () => string): string[] {
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) {
    throw new LamerError('E_CONFIG', `${where()}: expected a list of strings, found ${JSON.stringify(v)?.slice(0, 80)}`);
  }
  (v as string[]).forEach((s, i) => boundedText(s, () => `${where()}[${i}]`));
  return v as string[];
}

function requiredString(row: Record<string, Json>, key: string, where: () => string): string {
  const v = row[key];
  if (typeof v !== 'string') throw new LamerError('E_CONFIG', `${where()}: field ${key} must be a string, found ${JSON.stringify(v)?.slice(0, 80)}`);
  return boundedText(v, () => `${where()}.${key}`);
}

function parseOptions(raw: Json, where: () => string): Map<string, string[]> {
  const options = new Map<string, string[]>();
  if (raw === '' || raw === null || raw === undefined || (isRecord(raw) && Object.keys(raw).length === 0)) return options;
  if (!isRecord(raw)) throw new LamerError('E_CONFIG', `${where()}: customization_options must be "" or an object, found ${JSON.stringify(raw)?.slice(0, 80)}`);
  for (const [name, contents] of Object.entries(raw)) {
    if (contents === null) continue;
    if (!Array.isArray(contents)) throw new LamerError('E_CONFIG', `${where()}: customization_options.${name} must be null or a list`);
    options.set(
      name.toLowerCase(),
      contents.map((c, i) => {
        if (!isRecord(c) || typeof c.value !== 'string') {
          throw new LamerError('E_CONFIG', `${where()}: customization_options.${name}[${i}] must be {"value": string, "image": ...}`);
        }
        return boundedText(c.value, () => `${where()}: customization_options.${name}[${i}].value`)
          .trim()
          .replace(/\//g, ' | ')
          .toLowerCase();
      }),
    );
  }
  return options;
}

function parseHuman(list: Json, where: () => string): HumanInstruction[] {
  if (!Array.isArray(list)) throw new LamerError('E_CONFIG', `${where()}: expected a list of instructions`);
  return list.map((ins, i) => {
    const at = () => `${where()}[${i}]`;
    if (!isRecord(ins)) throw new LamerError('E_CONFIG', `${at()}: expected an object`);
    return {
      instruction: requiredString(ins, 'instruction', at),
      instructionAttributes: stringList(ins.instruction_attributes, () => `${at()}.instruction_attributes`),
      instructionOptions: stringList(ins.instruction_options, () => `${at()}.instruction_options`),
    };
  });
}

/**
 * load_products: rows with asin 'nan' or longer than 10 characters and repeated asins are dropped; attributes come
 * from the attributes table (else ['DUMMY_ATTR']); synthetic goals read each product's instruction there, human goals
 * its human instructions.
 */
export function loadProducts(productsJson: Json, attributesJson: Json, humanJson: Json, goals: GoalSource, files: FileNames): Product[] {
  if (!Array.isArray(productsJson)) throw bad(files.products, '', `expected a JSON array of products, found ${typeof productsJson}`);
  if (!isRecord(attributesJson)) throw bad(files.attributes, '', 'expected an object keyed by asin');
  if (goals === 'human' && !isRecord(humanJson)) throw bad(files.humanInstructions, '', 'expected an object keyed by asin');
  const seen = new Set<string>();
  const products: Product[] = [];
  productsJson.forEach((row, i) => {
    const where = () => `webshop data ${files.products}[${i}]`;
    if (!isRecord(row)) throw new LamerError('E_CONFIG', `${where()}: expected a product object`);
    const asin = requiredString(row, 'asin', where);
    if (asin === 'nan' || asin.length > 10 || seen.has(asin)) return;
    seen.add(asin);
    const at = () => `${where()} (asin ${asin})`;
    const small = row.small_description;
    const bulletPoints = Array.isArray(small) ? stringList(small, () => `${at()}.small_description`) : [requiredString(row, 'small_description', at)];
    const { pricing, priceTag } = parsePricing(row.pricing, at);
    const table = attributesJson[asin];
    if (table !== undefined && !isRecord(table)) throw new LamerError('E_CONFIG', `webshop data ${files.attributes}[${asin}]: expected an object`);
    const attributes =
      table !== undefined && table.attributes !== undefined
        ? stringList(table.attributes, () => `webshop data ${files.attributes}[${asin}].attributes`)
        : ['DUMMY_ATTR'];
    let instructionText: string | null = null;
    let instructionAttributes: string[] | null = null;
    let humanInstructions: HumanInstruction[] | null = null;
    if (goals === 'synthetic') {
      // The original reads items_ins[asin] for every product: one missing from the table stops it (a KeyError).
      if (table === undefined) {
        throw new LamerError(
          'E_CONFIG',
          `webshop data ${files.attributes}: no entry for asin ${asin} of ${files.products}; synthetic goals need one per product`,
        );
      }
      const ins = table.instruction;
      if (ins !== undefined && ins !== null && typeof ins !== 'string')
        throw new LamerError('E_CONFIG', `webshop data ${files.attributes}[${asin}].instruction: expected a string`);
      instructionText = typeof ins === 'string' ? boundedText(ins, () => `webshop data ${files.attributes}[${asin}].instruction`) : null;
      const insAttrs = table.instruction_attributes;
      instructionAttributes =
        insAttrs === undefined || insAttrs === null ? null : stringList(insAttrs, () => `webshop data ${files.attributes}[${asin}].instruction_attributes`);
    } else {
      const human = (humanJson as Record<string, Json>)[asin];
      if (human !== undefined) humanInstructions = parseHuman(human, () => `webshop data ${files.humanInstructions}[${asin}]`);
    }
    products.push({
      asin,
      name: requiredString(row, 'name', at),
      category: requiredString(row, 'category', at),
      query: requiredString(row, 'query', at).toLowerCase().trim(),
      productCategory: requiredString(row, 'product_category', at),
      description: requiredString(row, 'full_description', at),
      bulletPoints,
      pricing,
      priceTag,
      options: parseOptions(row.customization_options, at),
      attributes,
      instructionText,
      instructionAttributes,
      humanInstructions,
    });
  });
  if (products.length === 0) throw bad(files.products, '', 'no usable product (each needs an asin of at most 10 characters)');
  return products;
}

/** generate_product_prices: a single price as is, a range drawn with random.uniform(lo, hi), in catalog order. */
export function productPrices(products: readonly Product[], py: PyRandom): Float64Array {
  return Float64Array.from(products, (p) => (p.pricing.length === 1 ? p.pricing[0] : py.uniform(p.pricing[0], p.pricing[1])));
}

/** PRICE_RANGE of goal.py: 10, 20, ..., 990. */
const PRICE_RANGE = Array.from({ length: 99 }, (_, i) => 10 * (i + 1));

/** The price limit of a goal: the larger of two draws from the next four multiples of 10, or none (1000000). */
export function drawPriceUpper(price: number, py: PyRandom): number {
  const range = PRICE_RANGE.filter((p) => p > price).slice(0, 4);
  return range.length < 2 ? NO_PRICE_LIMIT : Math.max(...py.sample(range, 2));
}

/** goal.py's price_upper when fewer than two limits lie above the price (no price clause in the text). */
export const NO_PRICE_LIMIT = 1000000;

export function priceText(priceUpper: number): string {
  return priceUpper === NO_PRICE_LIMIT ? '' : `, and price lower than ${priceUpper.toFixed(2)} dollars`;
}

/** Python's str.strip('.'). */
function stripDots(s: string): string {
  return s.replace(/^\.+|\.+$/g, '');
}

/** Every combination of the option values, the last option varying fastest (itertools.product). */
function combinations(lists: readonly string[][]): string[][] {
  let out: string[][] = [[]];
  for (const list of lists) out = out.flatMap((prefix) => list.map((v) => [...prefix, v]));
  return out;
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A goal before its price draw: what every worker seed shares. `unit` numbers the price draws: one per product with a
 * synthetic instruction (its option combinations share the draw), one per human instruction with attributes.
 */
export interface BaseGoal {
  product: number;
  unit: number;
  /** The instruction without the price clause. */
  stem: string;
  attributes: string[];
  goalOptions: Map<string, string> | string[];
  weight: number;
}

/** The goals' shared part and their price-draw units (product index per unit), in the original's order. */
export interface GoalBase {
  source: GoalSource;
  goals: BaseGoal[];
  unitProducts: number[];
}

/**
 * Refuses, before any is built, data whose synthetic goals would number more than MAX_SYNTHETIC_GOALS, naming the
 * product with the most option combinations. The count stops growing once past the bound, so no product's combinations
 * overflow it.
 */
function checkSyntheticGoalCount(products: readonly Product[]): void {
  let total = 0;
  let worst = { asin: '', combinations: 0, options: 0 };
  for (const product of products) {
    if (product.instructionText === null) continue;
    let combinations = 1;
    for (const values of product.options.values()) combinations = Math.min(combinations * values.length, MAX_SYNTHETIC_GOALS + 1);
    if (combinations > worst.combinations) worst = { asin: product.asin, combinations, options: product.options.size };
    total = Math.min(total + combinations, MAX_SYNTHETIC_GOALS + 1);
  }
  if (total > MAX_SYNTHETIC_GOALS) {
    const many = (n: number) => (n > MAX_SYNTHETIC_GOALS ? `more than ${MAX_SYNTHETIC_GOALS}` : String(n));
    throw new LamerError(
      'E_CONFIG',
      `webshop data: the synthetic goals (one per product and combination of its option values) number ${many(total)}, more than ` +
        `the ${MAX_SYNTHETIC_GOALS} that are built; product ${worst.asin} alone has ${worst.options} options giving ${many(worst.combinations)} combinations`,
    );
  }
}

/** get_synthetic_goals / get_human_goals without the price draws. */
export function baseGoals(products: readonly Product[], source: GoalSource): GoalBase {
  const goals: BaseGoal[] = [];
  const unitProducts: number[] = [];
  if (source === 'synthetic') {
    checkSyntheticGoalCount(products);
    const attributeCounts = new Map<string, number>();
    products.forEach((product, i) => {
      if (product.instructionText === null) return;
      const attributes = product.instructionAttributes ?? [];
      if (attributes.length === 0) {
        throw new LamerError(
          'E_CONFIG',
          `webshop data: product ${product.asin} has an instruction but no instruction_attributes (the original asserts there are some)`,
        );
      }
      const unit = unitProducts.push(i) - 1;
      const names = [...product.options.keys()].sort(byCodePoint);
      for (const combination of combinations(names.map((n) => product.options.get(n)!))) {
        const goalOptions = new Map(names.map((n, k) => [n, combination[k]] as const));
        const optionText = goalOptions.size > 0 ? ` with ${[...goalOptions].map(([k, v]) => `${k}: ${v}`).join(', and ')}` : '';
        goals.push({ product: i, unit, stem: `${product.instructionText}${optionText}`, attributes, goalOptions, weight: 0 });
        for (const a of attributes) attributeCounts.set(a, (attributeCounts.get(a) ?? 0) + 1);
      }
    });
    for (const goal of goals) goal.weight = goal.attributes.reduce((s, a) => s + 1 / attributeCounts.get(a)!, 0) / goal.attributes.length;
  } else {
    products.forEach((product, i) => {
      for (const ins of product.humanInstructions ?? []) {
        if (ins.instructionAttributes.length === 0) continue;
        const unit = unitProducts.push(i) - 1;
        goals.push({
          product: i,
          unit,
          stem: stripDots(ins.instruction),
          attributes: ins.instructionAttributes,
          goalOptions: ins.instructionOptions,
          weight: 1,
        });
      }
    });
  }
  if (goals.length === 0) {
    throw new LamerError(
      'E_CONFIG',
      `webshop data: no ${source} goal could be built (no product has ${source === 'synthetic' ? 'an instruction' : 'a human instruction with attributes'})`,
    );
  }
  return { source, goals, unitProducts };
}

/**
 * The goals of one worker seed, as the original's SimServer builds them after random.seed(seed): the hidden prices
 * (one uniform draw per range-priced product), one price limit per unit, then random.seed(seed) and
 * random.shuffle(goals). `order[k]` is the base goal at position k of the shuffled list.
 */
export interface GoalSet {
  seed: number;
  base: GoalBase;
  prices: Float64Array;
  /** price_upper per base goal. */
  priceUpper: Float64Array;
  order: Int32Array;
}

/** Draws a worker seed's goal set on `py` (left just past the shuffle, where the original's later draws continue). */
export function drawGoalSet(products: readonly Product[], base: GoalBase, seed: number, py: PyRandom = new PyRandom(seed)): GoalSet {
  py.seed(seed);
  const prices = productPrices(products, py);
  const unitUpper = base.unitProducts.map((p) => drawPriceUpper(prices[p], py));
  const priceUpper = Float64Array.from(base.goals, (g) => unitUpper[g.unit]);
  py.seed(seed);
  const order = Int32Array.from(py.shuffle(Array.from(base.goals, (_, i) => i)));
  return { seed, base, prices, priceUpper, order };
}

/** The goal at position `k` of a worker seed's shuffled list. */
export function goalAt(set: GoalSet, products: readonly Product[], k: number): Goal {
  const index = set.order[k];
  const g = set.base.goals[index];
  const product = products[g.product];
  const upper = set.priceUpper[index];
  return {
    asin: product.asin,
    category: product.category,
    query: product.query,
    name: product.name,
    productCategory: product.productCategory,
    instruction: g.stem + priceText(upper),
    attributes: g.attributes,
    priceUpper: upper,
    goalOptions: g.goalOptions,
    weight: g.weight,
  };
}
