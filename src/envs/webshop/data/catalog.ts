// The catalog this project generates, written in the original WebShop files' format (items_shuffle.json,
// items_ins_v2.json, items_human_ins.json) and read by the same loader as the original data (pipeline.ts), so generated and
// original data take one path. Products come from a small table of categories, product types, attributes and options,
// so the environment runs anywhere without data files; each product has one synthetic instruction (its attributes and
// type), from which the loader builds one goal per combination of option values, as the original does.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from '../../../util/rng.js';

interface ProductTypeSpec {
  /** Singular product type as written in titles and requests ("office chair"). */
  type: string;
  /** Middle breadcrumb segment. */
  department: string;
  options: Record<string, readonly string[]>;
  priceRange: [number, number];
}

interface CategorySpec {
  category: string;
  /** First breadcrumb segment. */
  root: string;
  attributes: readonly string[];
  types: readonly ProductTypeSpec[];
}

const FASHION_SIZES = ['x-small', 'small', 'medium', 'large', 'x-large', 'xx-large'] as const;
const SHOE_SIZES = ['6', '7', '7.5', '8', '8.5', '9', '10', '11', '12'] as const;
const CLOTH_COLORS = ['black', 'white', 'navy blue', 'heather grey', 'olive green', 'burgundy', 'khaki', 'royal blue'] as const;
const BOTTLE_SIZES = ['1 fl oz', '1.7 fl oz', '3.4 fl oz', '6.8 fl oz', '16.9 fl oz'] as const;
const SCENTS = ['lavender', 'unscented', 'citrus', 'vanilla', 'coconut', 'rose', 'eucalyptus mint', 'cedarwood'] as const;
const DEVICE_COLORS = ['black', 'white', 'silver', 'midnight blue', 'rose gold', 'space grey'] as const;
const WOOD_COLORS = ['walnut', 'oak', 'white', 'black', 'grey', 'espresso', 'natural', 'cherry'] as const;
const PACK_SIZES = ['pack of 1', 'pack of 2', 'pack of 3', 'pack of 6', 'pack of 12'] as const;
const FLAVORS = ['original', 'dark chocolate', 'sea salt', 'honey', 'peanut butter', 'strawberry', 'matcha', 'cinnamon'] as const;

const CATEGORIES: readonly CategorySpec[] = [
  {
    category: 'beauty',
    root: 'Beauty & Personal Care',
    attributes: [
      'paraben free',
      'cruelty free',
      'long lasting',
      'natural ingredients',
      'sensitive skin',
      'travel size',
      'fragrance free',
      'dry skin',
      'easy to use',
      'sulfate free',
      'vegan formula',
    ],
    types: [
      { type: 'shampoo', department: 'Hair Care', options: { size: BOTTLE_SIZES, scent: SCENTS }, priceRange: [6, 38] },
      { type: 'face moisturizer', department: 'Skin Care', options: { size: BOTTLE_SIZES }, priceRange: [9, 65] },
      { type: 'lipstick', department: 'Makeup', options: { color: ['ruby red', 'nude pink', 'coral', 'berry', 'mauve', 'plum'] }, priceRange: [5, 30] },
      { type: 'body wash', department: 'Bath & Body', options: { size: BOTTLE_SIZES, scent: SCENTS }, priceRange: [5, 25] },
      { type: 'eau de parfum', department: 'Fragrance', options: { size: BOTTLE_SIZES }, priceRange: [20, 120] },
      { type: 'hair dryer', department: 'Hair Care', options: { color: DEVICE_COLORS }, priceRange: [18, 90] },
      { type: 'nail polish', department: 'Makeup', options: { color: ['ruby red', 'nude pink', 'coral', 'berry', 'mauve', 'sky blue'] }, priceRange: [4, 18] },
    ],
  },
  {
    category: 'electronics',
    root: 'Electronics',
    attributes: [
      'fast charging',
      'noise cancelling',
      'water resistant',
      'wireless charging',
      'high definition',
      'easy install',
      'long battery life',
      'bluetooth',
      'usb c',
      'plug and play',
      'heavy duty',
    ],
    types: [
      { type: 'wireless earbuds', department: 'Headphones', options: { color: DEVICE_COLORS }, priceRange: [19, 150] },
      {
        type: 'phone case',
        department: 'Cell Phone Accessories',
        options: { color: DEVICE_COLORS, size: ['iphone 13', 'iphone 14', 'iphone 15', 'galaxy s23', 'pixel 8'] },
        priceRange: [8, 35],
      },
      { type: 'charging cable', department: 'Cables', options: { size: ['3 ft', '6 ft', '10 ft'], color: DEVICE_COLORS }, priceRange: [6, 25] },
      { type: 'portable speaker', department: 'Audio', options: { color: DEVICE_COLORS }, priceRange: [25, 180] },
      { type: 'computer monitor', department: 'Computers', options: { size: ['22 inch', '24 inch', '27 inch', '32 inch'] }, priceRange: [90, 400] },
      { type: 'memory card', department: 'Storage', options: { size: ['32gb', '64gb', '128gb', '256gb', '512gb'] }, priceRange: [7, 60] },
      {
        type: 'security camera',
        department: 'Home Security',
        options: { color: ['black', 'white'], size: ['1 pack', '2 pack', '4 pack'] },
        priceRange: [25, 200],
      },
    ],
  },
  {
    category: 'fashion',
    root: 'Clothing, Shoes & Jewelry',
    attributes: [
      'machine wash',
      'slim fit',
      'long sleeve',
      'quick drying',
      'button closure',
      'relaxed fit',
      'moisture wicking',
      'short sleeve',
      'elastic waistband',
      'rubber sole',
      'hand wash',
    ],
    types: [
      { type: 't-shirt', department: 'Tops & Tees', options: { size: FASHION_SIZES, color: CLOTH_COLORS }, priceRange: [8, 35] },
      { type: 'hoodie', department: 'Fashion Hoodies & Sweatshirts', options: { size: FASHION_SIZES, color: CLOTH_COLORS }, priceRange: [18, 70] },
      {
        type: 'jeans',
        department: 'Pants',
        options: { size: ['28w x 30l', '30w x 30l', '32w x 32l', '34w x 32l', '36w x 34l'], color: ['light indigo', 'dark indigo', 'black', 'stone'] },
        priceRange: [20, 80],
      },
      { type: 'running shoes', department: 'Shoes', options: { size: SHOE_SIZES, color: CLOTH_COLORS }, priceRange: [30, 140] },
      { type: 'yoga pants', department: 'Active', options: { size: FASHION_SIZES, color: CLOTH_COLORS }, priceRange: [14, 60] },
      { type: 'rain jacket', department: 'Coats, Jackets & Vests', options: { size: FASHION_SIZES, color: CLOTH_COLORS }, priceRange: [30, 150] },
      { type: 'ankle socks', department: 'Socks', options: { size: ['small', 'medium', 'large'], color: CLOTH_COLORS }, priceRange: [6, 24] },
    ],
  },
  {
    category: 'food',
    root: 'Grocery & Gourmet Food',
    attributes: [
      'gluten free',
      'sugar free',
      'non gmo',
      'low calorie',
      'organic',
      'keto friendly',
      'high protein',
      'kosher',
      'low sodium',
      'dairy free',
      'ready to eat',
    ],
    types: [
      { type: 'protein bars', department: 'Snack Foods', options: { flavor: FLAVORS, size: PACK_SIZES }, priceRange: [8, 40] },
      {
        type: 'green tea',
        department: 'Beverages',
        options: { flavor: ['original', 'jasmine', 'mint', 'lemon', 'ginger', 'peach'], size: PACK_SIZES },
        priceRange: [4, 30],
      },
      { type: 'olive oil', department: 'Pantry Staples', options: { size: ['8.5 fl oz', '16.9 fl oz', '25.4 fl oz', '33.8 fl oz'] }, priceRange: [7, 45] },
      { type: 'trail mix', department: 'Snack Foods', options: { flavor: FLAVORS, size: PACK_SIZES }, priceRange: [5, 32] },
      {
        type: 'ground coffee',
        department: 'Beverages',
        options: { flavor: ['original', 'hazelnut', 'french vanilla', 'caramel', 'mocha'], size: ['12 ounce', '24 ounce', '32 ounce'] },
        priceRange: [7, 40],
      },
      {
        type: 'beef jerky',
        department: 'Meat Snacks',
        options: { flavor: ['original', 'teriyaki', 'black pepper', 'sweet and spicy', 'smoked'], size: PACK_SIZES },
        priceRange: [6, 45],
      },
    ],
  },
  {
    category: 'furniture',
    root: 'Home & Kitchen',
    attributes: [
      'easy assemble',
      'solid wood',
      'space saving',
      'storage space',
      'living room',
      'metal frame',
      'mid century',
      'non slip',
      'height adjustable',
      'faux leather',
      'bedroom furniture',
    ],
    types: [
      { type: 'office chair', department: 'Home Office Furniture', options: { color: WOOD_COLORS }, priceRange: [60, 300] },
      { type: 'bookshelf', department: 'Living Room Furniture', options: { color: WOOD_COLORS, size: ['3-tier', '4-tier', '5-tier'] }, priceRange: [40, 220] },
      { type: 'coffee table', department: 'Living Room Furniture', options: { color: WOOD_COLORS }, priceRange: [50, 260] },
      {
        type: 'bar stool',
        department: 'Kitchen & Dining Furniture',
        options: { color: WOOD_COLORS, size: ['24 inch', '26 inch', '30 inch'] },
        priceRange: [35, 180],
      },
      { type: 'nightstand', department: 'Bedroom Furniture', options: { color: WOOD_COLORS }, priceRange: [30, 160] },
      {
        type: 'shoe rack',
        department: 'Storage & Organization',
        options: { color: WOOD_COLORS, size: ['2-tier', '3-tier', '4-tier', '5-tier'] },
        priceRange: [15, 90],
      },
    ],
  },
];

/** The categories the generator writes products for; also the task types of generated tasks. */
export const GENERATED_CATEGORIES: readonly string[] = CATEGORIES.map((c) => c.category);

const BRAND_HEADS = ['Nor', 'Brigh', 'Cal', 'Vel', 'Mar', 'Ost', 'Quin', 'Tal', 'Ever', 'Lum', 'Hav', 'Sol', 'Wren', 'Dun', 'Ash'];
const BRAND_TAILS = ['dale', 'ton', 'ora', 'wick', 'ridge', 'mere', 'vale', 'stead', 'brook', 'field', 'haven', 'crest'];
const TITLE_EXTRAS = ['Premium', 'Classic', 'Everyday', 'Deluxe', 'Essential', 'Signature', 'Original', 'Pro'];

function titleCase(text: string): string {
  return text.replace(/(^|[\s-])([a-z])/g, (_m, sep: string, ch: string) => sep + ch.toUpperCase());
}

function pickSome<T>(rng: Rng, items: readonly T[], min: number, max: number): T[] {
  const count = Math.min(items.length, min + rng.int(max - min + 1));
  return rng.shuffle(items.slice()).slice(0, count);
}

function makeAsin(rng: Rng): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';
  let id = 'B0';
  for (let i = 0; i < 8; i++) id += alphabet[rng.int(alphabet.length)];
  return id;
}

function joinAnd(parts: string[]): string {
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** The three files' JSON values, as the original files hold them. */
export interface GeneratedFiles {
  products: Array<Record<string, unknown>>;
  attributes: Record<string, { attributes: string[]; instruction: string; instruction_attributes: string[] }>;
  humanInstructions: Record<string, Array<Record<string, unknown>>>;
}

/** One synthetic instruction per product: its type and 1-3 of its attributes, in one of a few phrasings. */
function instructionFor(rng: Rng, type: string, attributes: string[]): string {
  const attrText = joinAnd(attributes);
  const templates = [
    () => `i'm looking for a ${type} that is ${attrText}`,
    () => `i need ${attrText} ${type}`,
    () => `find me a ${type} with ${attrText}`,
    () => `i want to buy a ${attrText} ${type}`,
  ];
  return rng.pick(templates)();
}

/**
 * A catalog of `size` generated products in the original files' format, fully determined by `seed`. Every product type
 * appears; each product has 2-4 attributes of its category, 2-4 values per option of its type (1-2 options), a price
 * (one in five a range "$a - $b", whose hidden price the loader draws as the original does), one synthetic instruction
 * and one human-style instruction. Asins are unique.
 */
export function generateCatalogFiles(size = 1000, seed = 0): GeneratedFiles {
  const rng = new Rng(seed);
  const files: GeneratedFiles = { products: [], attributes: {}, humanInstructions: {} };
  const asins = new Set<string>();
  const allTypes = CATEGORIES.flatMap((c) => c.types.map((t) => ({ cat: c, spec: t })));
  for (let i = 0; i < size; i++) {
    // Cycle through types so every type is well represented, then vary everything else at random.
    const { cat, spec } = allTypes[i % allTypes.length];
    let asin = makeAsin(rng);
    while (asins.has(asin)) asin = makeAsin(rng);
    asins.add(asin);
    const brand = rng.pick(BRAND_HEADS) + rng.pick(BRAND_TAILS);
    const attributes = pickSome(rng, cat.attributes, 2, 4);
    const options: Record<string, Array<{ value: string; image: null }>> = {};
    for (const [name, pool] of Object.entries(spec.options)) {
      // Keep option values in the pool's order so pages list them naturally (small before large).
      const chosen = new Set(pickSome(rng, pool, 2, 4));
      options[titleCase(name)] = pool.filter((v) => chosen.has(v)).map((value) => ({ value, image: null }));
    }
    const [lo, hi] = spec.priceRange;
    const price = Math.round((lo + rng.next() * (hi - lo)) * 100) / 100;
    const pricing =
      rng.int(5) === 0 ? `$${price.toFixed(2)} - $${(price + 1 + rng.int(Math.max(2, Math.round(price / 4)))).toFixed(2)}` : `$${price.toFixed(2)}`;
    // Titles carry one or two attributes, as shop titles do; the rest is only in the description and features.
    const titleAttrs = attributes
      .slice(0, 1 + rng.int(2))
      .map(titleCase)
      .join(' ');
    const name = `${brand} ${rng.pick(TITLE_EXTRAS)} ${titleAttrs} ${titleCase(spec.type)}`;
    const features = attributes.map((a) => `${titleCase(a)}: designed to be ${a} for everyday use.`);
    features.push(`Made by ${brand} with a satisfaction guarantee.`);
    const description = `This ${spec.type} from ${brand} is ${attributes.join(', ')}. Choose the option that suits you and enjoy it at home or on the go.`;
    files.products.push({
      name,
      full_description: description,
      pricing,
      images: [''],
      product_category: [cat.root, spec.department, titleCase(spec.type)].join(' › '),
      small_description: features,
      customization_options: options,
      asin,
      category: cat.category,
      query: spec.type,
    });
    const wanted = pickSome(rng, attributes, 1, Math.min(3, attributes.length));
    files.attributes[asin] = { attributes, instruction: instructionFor(rng, spec.type, wanted), instruction_attributes: wanted };
    const humanOptions = Object.values(options).map((values) => rng.pick(values).value);
    files.humanInstructions[asin] = [
      {
        asin,
        instruction: `${instructionFor(rng, spec.type, wanted)}${humanOptions.length > 0 ? `, ${joinAnd(humanOptions)}` : ''}.`,
        attributes: wanted,
        options: Object.keys(options).map((k, j) => `${k.toLowerCase()}: ${humanOptions[j]}`),
        instruction_attributes: wanted,
        instruction_options: humanOptions,
        assignment_id: `G${i}`,
        worker_id: 'generated',
      },
    ];
  }
  return files;
}

/** The three files' names when written to a folder (the original's small-set names). */
export const GENERATED_FILE_NAMES = {
  products: 'items_shuffle_1000.json',
  attributes: 'items_ins_v2_1000.json',
  humanInstructions: 'items_human_ins.json',
} as const;

/** Writes a generated catalog as the three original-format files into `dir`; returns their paths. */
export function writeGeneratedCatalog(dir: string, size = 1000, seed = 0): { products: string; attributes: string; humanInstructions: string } {
  const files = generateCatalogFiles(size, seed);
  mkdirSync(dir, { recursive: true });
  const paths = {
    products: join(dir, GENERATED_FILE_NAMES.products),
    attributes: join(dir, GENERATED_FILE_NAMES.attributes),
    humanInstructions: join(dir, GENERATED_FILE_NAMES.humanInstructions),
  };
  writeFileSync(paths.products, JSON.stringify(files.products));
  writeFileSync(paths.attributes, JSON.stringify(files.attributes));
  writeFileSync(paths.humanInstructions, JSON.stringify(files.humanInstructions));
  return paths;
}
