// Where a WebShop environment's data comes from: the original files (env.options.source 'original' with
// files.products / files.attributes / files.humanInstructions, optionally a noun table) or the generated catalog
// (source 'generated', the default), both read by the one load pipeline of data/pipeline.ts. The SHA-256 of every file read
// (for the generated catalog, of the JSON it writes) is part of the data, so a run records which data it used; a
// config that names the hashes is checked against them. Data is loaded once per process and shared by all envs.

import { statSync } from 'node:fs';
import { LamerError } from '../../errors.js';
import { jsonDepth, MAX_JSON_DEPTH, readRegularBytes } from '../../util/fs.js';
import { sha256 } from '../../util/hash.js';
import { generateCatalogFiles } from './data/catalog.js';
import { baseGoals, loadProducts, type GoalBase, type GoalSource, type Product } from './data/pipeline.js';
import { NounSource } from './reward/nouns.js';
import { Bm25Index, productDocument } from './search/bm25.js';

export interface WebShopFilePaths {
  /** items_shuffle_1000.json (or items_shuffle.json): the products. */
  products: string;
  /** items_ins_v2_1000.json: attributes and synthetic instructions (the original reads it in every mode). */
  attributes: string;
  /** items_human_ins.json: human instructions (needed for goals 'human'). */
  humanInstructions?: string;
  /** {asin: [nouns]} written by scripts/webshop/nouns.py with spaCy's en_core_web_sm (optional). */
  nouns?: string;
}

export type FileRole = keyof WebShopFilePaths;

export interface WebShopDataSpec {
  source: 'generated' | 'original';
  goals: GoalSource;
  files?: WebShopFilePaths;
  catalogSize: number;
  catalogSeed: number;
}

/** Products, goals (before price draws), search index and nouns of one data source. */
export interface WebShopData {
  spec: WebShopDataSpec;
  products: Product[];
  goalBase: GoalBase;
  search: Bm25Index;
  nouns: NounSource;
  /** SHA-256 (hex) of each file read, by role. */
  sha256: Partial<Record<FileRole, string>>;
}

const cache = new Map<string, WebShopData>();

/**
 * The most bytes one data file may have: the largest text V8 can hold as one string (which JSON.parse needs), so a larger
 * file could not be parsed anyway. WebShop's own files are far below it (items_shuffle_1000.json is about 5 MB).
 */
export const MAX_DATA_FILE_BYTES = 512 * 2 ** 20;

/**
 * A data file's JSON and hash, read through the bounded regular-file reader: a named pipe, a device (/dev/zero) or a
 * folder is refused before any read, a file past MAX_DATA_FILE_BYTES is refused unread, and JSON nested past
 * MAX_JSON_DEPTH is refused after parsing, each with E_CONFIG naming the option and the file.
 */
function readFile(path: string, role: FileRole): { json: unknown; hash: string } {
  let bytes: Buffer;
  try {
    bytes = readRegularBytes(path, 'E_CONFIG', MAX_DATA_FILE_BYTES);
  } catch (e) {
    throw new LamerError('E_CONFIG', `webshop env.options.files.${role}: ${(e as Error).message}; give the path of the original file`, { cause: e });
  }
  const text = bytes.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch (e) {
    throw new LamerError('E_CONFIG', `webshop env.options.files.${role}: ${path} is not valid JSON (${(e as Error).message.slice(0, 200)})`, { cause: e });
  }
  // Errors about a value quote it (JSON.stringify), which recurses once per level of nesting.
  if (jsonDepth(text) > MAX_JSON_DEPTH)
    throw new LamerError('E_CONFIG', `webshop env.options.files.${role}: ${path} nests arrays and objects more than ${MAX_JSON_DEPTH} deep`);
  return { json, hash: sha256(bytes) };
}

function readNounTable(json: unknown, path: string): Map<string, string[]> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new LamerError('E_CONFIG', `webshop env.options.files.nouns: ${path} must map asin to a list of nouns`);
  }
  const table = new Map<string, string[]>();
  for (const [asin, nouns] of Object.entries(json)) {
    if (!Array.isArray(nouns) || !nouns.every((n) => typeof n === 'string')) {
      throw new LamerError('E_CONFIG', `webshop env.options.files.nouns: ${path}[${asin}] must be a list of strings`);
    }
    table.set(asin, nouns);
  }
  return table;
}

function cacheKey(spec: WebShopDataSpec): string {
  if (spec.source === 'generated') return JSON.stringify(['generated', spec.goals, spec.catalogSize, spec.catalogSeed]);
  // A file changed on disk is read again.
  const stamp = (path: string | undefined) => {
    if (path === undefined) return null;
    try {
      const st = statSync(path);
      return [path, st.size, st.mtimeMs];
    } catch {
      return [path, 'missing'];
    }
  };
  const f = spec.files!;
  return JSON.stringify(['original', spec.goals, stamp(f.products), stamp(f.attributes), stamp(f.humanInstructions), stamp(f.nouns)]);
}

/** The data of a spec, loaded once per process. */
export function webShopData(spec: WebShopDataSpec): WebShopData {
  const key = cacheKey(spec);
  let data = cache.get(key);
  if (data === undefined) {
    data = load(spec);
    cache.set(key, data);
  }
  return data;
}

function load(spec: WebShopDataSpec): WebShopData {
  let productsJson: unknown;
  let attributesJson: unknown;
  let humanJson: unknown;
  let nounTable: Map<string, string[]> | undefined;
  const sha: Partial<Record<FileRole, string>> = {};
  let names = { products: 'generated products', attributes: 'generated attributes', humanInstructions: 'generated human instructions' };
  if (spec.source === 'generated') {
    const files = generateCatalogFiles(spec.catalogSize, spec.catalogSeed);
    // The hash of the text the generated files hold when written (writeGeneratedCatalog), so the two agree.
    const texts = {
      products: JSON.stringify(files.products),
      attributes: JSON.stringify(files.attributes),
      humanInstructions: JSON.stringify(files.humanInstructions),
    };
    productsJson = files.products;
    attributesJson = files.attributes;
    humanJson = files.humanInstructions;
    sha.products = sha256(texts.products);
    sha.attributes = sha256(texts.attributes);
    sha.humanInstructions = sha256(texts.humanInstructions);
  } else {
    const f = spec.files!;
    names = { products: f.products, attributes: f.attributes, humanInstructions: f.humanInstructions ?? '(none)' };
    const products = readFile(f.products, 'products');
    const attributes = readFile(f.attributes, 'attributes');
    productsJson = products.json;
    attributesJson = attributes.json;
    sha.products = products.hash;
    sha.attributes = attributes.hash;
    if (f.humanInstructions !== undefined) {
      const human = readFile(f.humanInstructions, 'humanInstructions');
      humanJson = human.json;
      sha.humanInstructions = human.hash;
    } else if (spec.goals === 'human') {
      throw new LamerError('E_CONFIG', "webshop env.options.files.humanInstructions: goals 'human' need items_human_ins.json");
    }
    if (f.nouns !== undefined) {
      const nouns = readFile(f.nouns, 'nouns');
      nounTable = readNounTable(nouns.json, f.nouns);
      sha.nouns = nouns.hash;
    }
  }
  const products = loadProducts(productsJson, attributesJson, humanJson, spec.goals, names);
  return {
    spec,
    products,
    goalBase: baseGoals(products, spec.goals),
    search: new Bm25Index(products.map((p) => ({ id: p.asin, contents: productDocument(p) }))),
    nouns: new NounSource(nounTable),
    sha256: sha,
  };
}
