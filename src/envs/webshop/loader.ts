// Loader for the original WebShop data files, for users who have them: a product list in the style of
// items_shuffle_1000.json and, optionally, human instructions in the style of items_human_ins.json and product
// attributes in the style of items_ins_v2_1000.json. The result is a Catalog, the same shape the generator makes.

import { readFileSync } from 'node:fs';
import { LamerError } from '../../errors.js';
import { Rng } from '../../util/rng.js';
import { priceLimitFor, words, type Catalog, type Goal, type Product } from './catalog.js';

export interface WebShopFiles {
  /** Products: a JSON array of { asin, name, category, product_category, query, pricing, customization_options, ... }. */
  products: string;
  /** Human instructions: { [asin]: [{ instruction, instruction_attributes, instruction_options }] }. */
  instructions?: string;
  /** Attributes by product: { [asin]: { attributes: string[] } }; product records may also carry `attributes`. */
  attributes?: string;
  /** Keep only the first `limit` products (the files are pre-shuffled, as WebShop assumes). */
  limit?: number;
  /** Seed of the price limits written into the goals. Default 0. */
  seed?: number;
}

/** Words a title shares with many others and that say nothing about what the product is. */
const TITLE_STOP_WORDS = new Set([
  'and',
  'the',
  'for',
  'with',
  'pack',
  'set',
  'inch',
  'inches',
  'count',
  'ounce',
  'ounces',
  'new',
  'from',
  'that',
  'women',
  'men',
  'womens',
  'mens',
  'size',
  'color',
  'black',
  'white',
  'free',
  'oz',
  'pcs',
  'piece',
  'pieces',
]);

type Json = unknown;

function readJson(path: string, what: string): Json {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new LamerError('E_ENV', `webshop ${what} file ${path} could not be read: ${(e as Error).message}`, { cause: e });
  }
  try {
    return JSON.parse(text) as Json;
  } catch (e) {
    throw new LamerError('E_ENV', `webshop ${what} file ${path} is not valid JSON: ${(e as Error).message}`, { cause: e });
  }
}

function isRecord(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: Json): string {
  return typeof v === 'string' ? v : '';
}

/** WebShop pricing: "$12.99", "$10.99 to $19.99", or a list of numbers; missing pricing counts as $100 (as WebShop). */
export function parsePricing(pricing: Json): number[] {
  if (Array.isArray(pricing)) {
    const nums = pricing.map(Number).filter((n) => Number.isFinite(n));
    return nums.length > 0 ? nums.slice(0, 2) : [100];
  }
  if (typeof pricing === 'number' && Number.isFinite(pricing)) return [pricing];
  if (typeof pricing !== 'string' || pricing.trim() === '') return [100];
  const nums = pricing
    .split('$')
    .slice(1)
    .map((part) => Number(part.replace(/[^\d.]/g, '')))
    .filter((n) => Number.isFinite(n) && n > 0);
  return nums.length > 0 ? nums.slice(0, 2) : [100];
}

function parseOptions(raw: Json): Record<string, string[]> {
  const options: Record<string, string[]> = {};
  if (!isRecord(raw)) return options;
  for (const [name, contents] of Object.entries(raw)) {
    if (!Array.isArray(contents)) continue;
    const values = contents
      .map((c) => (isRecord(c) ? str(c.value) : str(c)))
      .map((v) => v.trim().replace(/\//g, ' | ').toLowerCase())
      .filter((v) => v.length > 0);
    if (values.length > 0) options[name.toLowerCase()] = [...new Set(values)];
  }
  return options;
}

function stringList(v: Json): string[] {
  if (Array.isArray(v))
    return v
      .map(str)
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
  if (typeof v === 'string' && v.trim() !== '') return [v.trim()];
  return [];
}

/** Words that name what a product is, taken from its title (the original used a noun parser). */
function titleTypeWords(name: string): string[] {
  return [...new Set(words(name).filter((w) => w.length >= 3 && /^[a-z]+$/.test(w) && !TITLE_STOP_WORDS.has(w)))];
}

/** Build a Catalog from already-parsed WebShop JSON values (the file loader's core; also handy in tests). */
export function catalogFromWebShopJson(
  productsJson: Json,
  instructionsJson?: Json,
  attributesJson?: Json,
  options: { limit?: number; seed?: number; source?: string } = {},
): Catalog {
  const source = options.source ?? 'products';
  if (!Array.isArray(productsJson)) {
    throw new LamerError('E_ENV', `webshop ${source}: expected a JSON array of products, found ${typeof productsJson}`);
  }
  const rows = options.limit !== undefined ? productsJson.slice(0, options.limit) : productsJson;
  const attributeTable = isRecord(attributesJson) ? attributesJson : {};
  const products: Product[] = [];
  const seen = new Set<string>();
  rows.forEach((row, i) => {
    if (!isRecord(row)) throw new LamerError('E_ENV', `webshop ${source}[${i}]: expected a product object`);
    const asin = str(row.asin).trim();
    // WebShop skips rows without a proper asin and repeated asins; so do we.
    if (asin === '' || asin === 'nan' || asin.length > 10 || seen.has(asin)) return;
    const name = str(row.name).trim();
    if (name === '') throw new LamerError('E_ENV', `webshop ${source}[${i}] (asin ${asin}): missing product name`);
    seen.add(asin);
    const pricing = parsePricing(row.pricing);
    const fromTable = attributeTable[asin];
    const attributes = stringList(row.attributes).length > 0 ? stringList(row.attributes) : isRecord(fromTable) ? stringList(fromTable.attributes) : [];
    products.push({
      asin,
      name,
      category: str(row.category).trim().toLowerCase() || 'unknown',
      productCategory: str(row.product_category),
      query: str(row.query).trim().toLowerCase(),
      attributes: attributes.map((a) => a.toLowerCase()),
      options: parseOptions(row.customization_options),
      // A range price is fixed at its low end, so the same file always gives the same environment.
      price: pricing[0],
      priceTag: pricing.length > 1 ? `$${pricing[0].toFixed(2)} to $${pricing[1].toFixed(2)}` : `$${pricing[0].toFixed(2)}`,
      description: str(row.full_description),
      features: stringList(row.small_description),
    });
  });
  if (products.length === 0) throw new LamerError('E_ENV', `webshop ${source}: no usable products (each needs asin and name)`);
  if (instructionsJson === undefined) return { products };
  if (!isRecord(instructionsJson)) {
    throw new LamerError('E_ENV', 'webshop instructions: expected an object mapping asin to a list of instructions');
  }
  const goals: Goal[] = [];
  for (const product of products) {
    const list = instructionsJson[product.asin];
    if (!Array.isArray(list)) continue;
    for (const ins of list) {
      if (!isRecord(ins)) continue;
      const attributes = stringList(ins.instruction_attributes).map((a) => a.toLowerCase());
      // As in WebShop, instructions without attributes are not used as goals.
      if (attributes.length === 0) continue;
      const rawOptions = ins.instruction_options;
      const goalOptions = (isRecord(rawOptions) ? Object.values(rawOptions).map(str) : stringList(rawOptions))
        .map((o) => o.trim().replace(/\//g, ' | ').toLowerCase())
        .filter((o) => o.length > 0);
      const rng = new Rng((options.seed ?? 0) * 1_000_003 + goals.length);
      const priceUpper = priceLimitFor(product.price, rng);
      const text = str(ins.instruction).trim().replace(/\.+$/, '');
      goals.push({
        asin: product.asin,
        instruction: `${text}, and price lower than ${priceUpper.toFixed(2)} dollars`,
        attributes,
        options: goalOptions,
        priceUpper,
        category: product.category,
        productCategory: product.productCategory,
        query: product.query,
        typeWords: titleTypeWords(product.name),
      });
    }
  }
  if (goals.length === 0) {
    throw new LamerError('E_ENV', 'webshop instructions: no instruction with attributes matches a loaded product asin');
  }
  return { products, goals };
}

/** Read the original WebShop files into a Catalog for `createWebShopEnv({ catalog })`. */
export function loadWebShopCatalog(files: WebShopFiles): Catalog {
  if (!isRecord(files as unknown) || typeof files.products !== 'string') {
    throw new LamerError('E_ENV', 'loadWebShopCatalog: expected { products: path, instructions?: path, attributes?: path }');
  }
  if (files.limit !== undefined && !(Number.isInteger(files.limit) && files.limit > 0)) {
    throw new LamerError('E_ENV', `loadWebShopCatalog limit: expected a positive integer, found ${String(files.limit)}`);
  }
  const products = readJson(files.products, 'products');
  const instructions = files.instructions !== undefined ? readJson(files.instructions, 'instructions') : undefined;
  const attributes = files.attributes !== undefined ? readJson(files.attributes, 'attributes') : undefined;
  return catalogFromWebShopJson(products, instructions, attributes, { limit: files.limit, seed: files.seed, source: files.products });
}
