// The WebShop environment against the original code's outputs (princeton-nlp/WebShop run under Python 3.11 with its
// templates rendered by jinja2 3.1.6 and parsed by beautifulsoup4 4.15.0, LaMer's seeded SimServer flow, numpy 2.4.6's
// RandomState), kept here as literals: the load pipeline and goal construction with the original's random draws, the
// split modes, the seven pages' text and clickables along a played sequence, and the recorded real pages of the one-shot
// example in THUDM/AgentBench's WebShop task (src/server/tasks/webshop/__init__.py at 4aa57c1). Fixtures
// (test/fixtures/webshop) are small files in the original format.

import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { contentSplit, taskSeed } from '../../src/envs/common/seeds.js';
import { createAlfWorldEnv } from '../../src/envs/alfworld/index.js';
import { drawGoalSet, goalAt, parsePricing } from '../../src/envs/webshop/data/pipeline.js';
import { createWebShopEnv, createWebShopExpert, webShopData, writeGeneratedCatalog, type WebShopOptions } from '../../src/envs/webshop/index.js';
import { pageClickables, pageText, startSession, type Session } from '../../src/envs/webshop/site/pages.js';
import { searchWords } from '../../src/envs/webshop/env.js';
import type { Goal } from '../../src/envs/webshop/data/pipeline.js';
import { parseAction } from '../../src/envs/webshop/parse.js';
import { flaskToJson, pyFloatRepr } from '../../src/envs/common/python.js';
import { goalKey } from '../../src/envs/webshop/splits.js';
import { Trainer } from '../../src/train/trainer.js';
import { codeOf, rng } from '../helpers/index.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'webshop');
const files = (dir: string) => ({
  products: join(dir, 'items_shuffle.json'),
  attributes: join(dir, 'items_ins_v2.json'),
  humanInstructions: join(dir, 'items_human_ins.json'),
});
const act = (a: string) => `I think this is right.\n<action>${a}</action>`;

const createHashHex = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('load pipeline (engine.py load_products) on the four-product fixture', () => {
  const data = webShopData({ source: 'original', goals: 'synthetic', files: files(FIXTURES), catalogSize: 0, catalogSeed: 0 });

  it("drops the 'nan' and repeated asins and parses prices, options, attributes and bullets as the original", () => {
    expect(data.products.map((p) => [p.asin, p.priceTag, p.pricing, [...p.options], p.attributes, p.bulletPoints, p.query])).toEqual([
      [
        'B0TEA00001',
        '$12.5',
        [12.5],
        [
          ['flavor name', ['jasmine', 'mint | lemon']],
          ['size', ['20 count', '40 count']],
        ],
        ['gluten free', 'non gmo', 'green tea'],
        ['Organic whole leaf tea ', 'Gluten free, non GMO'],
        'green tea',
      ],
      [
        'B0SHOE0002',
        '$20.0 to $35.99',
        [20, 35.99],
        [
          ['color', ['black', 'navy blue']],
          ['size', ['9', '10.5']],
        ],
        ['rubber sole', 'lace up'],
        ['Rubber sole; lace-up closure'],
        "men's running shoes",
      ],
      ['B0DESK0003', '$100.0', [100], [], ['easy assemble'], [], 'desk organizer'],
      ['B0SOFA0004', '$985.0', [985], [['color', ['cognac', 'slate grey']]], ['DUMMY_ATTR'], ['Top grain leather', 'Solid wood frame'], 'sofas'],
    ]);
  });

  it('builds the synthetic goals in the original RNG order (uniform prices, sample(price_range, 2), seed, shuffle)', () => {
    // [asin, instruction, price_upper, goal options, weight], the shuffled list of worker seed 0, from the original.
    const seed0: Array<[string, string, number, Array<[string, string]>, number]> = [
      ['B0DESK0003', 'find me a wooden desk organizer, and price lower than 140.00 dollars', 140, [], 1],
      ['B0SOFA0004', "i'm looking for a mid century leather sofa with color: cognac", 1000000, [['color', 'cognac']], 0.5],
      [
        'B0TEA00001',
        'i want gluten free green tea bags with flavor name: jasmine, and size: 40 count, and price lower than 50.00 dollars',
        50,
        [
          ['flavor name', 'jasmine'],
          ['size', '40 count'],
        ],
        0.25,
      ],
      [
        'B0TEA00001',
        'i want gluten free green tea bags with flavor name: mint | lemon, and size: 20 count, and price lower than 50.00 dollars',
        50,
        [
          ['flavor name', 'mint | lemon'],
          ['size', '20 count'],
        ],
        0.25,
      ],
      [
        'B0SHOE0002',
        'i need lightweight running shoes with a rubber sole with color: black, and size: 10.5, and price lower than 70.00 dollars',
        70,
        [
          ['color', 'black'],
          ['size', '10.5'],
        ],
        0.25,
      ],
      [
        'B0TEA00001',
        'i want gluten free green tea bags with flavor name: mint | lemon, and size: 40 count, and price lower than 50.00 dollars',
        50,
        [
          ['flavor name', 'mint | lemon'],
          ['size', '40 count'],
        ],
        0.25,
      ],
      [
        'B0SHOE0002',
        'i need lightweight running shoes with a rubber sole with color: navy blue, and size: 10.5, and price lower than 70.00 dollars',
        70,
        [
          ['color', 'navy blue'],
          ['size', '10.5'],
        ],
        0.25,
      ],
      [
        'B0SHOE0002',
        'i need lightweight running shoes with a rubber sole with color: black, and size: 9, and price lower than 70.00 dollars',
        70,
        [
          ['color', 'black'],
          ['size', '9'],
        ],
        0.25,
      ],
      [
        'B0TEA00001',
        'i want gluten free green tea bags with flavor name: jasmine, and size: 20 count, and price lower than 50.00 dollars',
        50,
        [
          ['flavor name', 'jasmine'],
          ['size', '20 count'],
        ],
        0.25,
      ],
      ['B0SOFA0004', "i'm looking for a mid century leather sofa with color: slate grey", 1000000, [['color', 'slate grey']], 0.5],
      [
        'B0SHOE0002',
        'i need lightweight running shoes with a rubber sole with color: navy blue, and size: 9, and price lower than 70.00 dollars',
        70,
        [
          ['color', 'navy blue'],
          ['size', '9'],
        ],
        0.25,
      ],
    ];
    const set = drawGoalSet(data.products, data.goalBase, 0);
    const goals = Array.from(set.order, (_, k) => goalAt(set, data.products, k));
    expect(goals.map((g) => [g.asin, g.instruction, g.priceUpper, [...(g.goalOptions as Map<string, string>)], g.weight])).toEqual(seed0);
    // The hidden price of the range-priced shoes: random.uniform(20.0, 35.99) after random.seed(seed).
    expect([0, 1, 1000, 233].map((s) => pyFloatRepr(drawGoalSet(data.products, data.goalBase, s).prices[1]))).toEqual([
      '33.50230540588552',
      '22.148484263357297',
      '32.42993271678202',
      '30.912805854018174',
    ]);
    // The first goal of other worker seeds, and the price limits they drew.
    const first = (s: number) => goalAt(drawGoalSet(data.products, data.goalBase, s), data.products, 0).instruction;
    expect(first(1)).toBe('i need lightweight running shoes with a rubber sole with color: navy blue, and size: 9, and price lower than 40.00 dollars');
    expect(first(1000)).toBe('i need lightweight running shoes with a rubber sole with color: black, and size: 9, and price lower than 60.00 dollars');
    expect(first(233)).toBe('i need lightweight running shoes with a rubber sole with color: black, and size: 10.5, and price lower than 70.00 dollars');
  });

  it('builds human goals: one draw per instruction with attributes, the text stripped of dots, options as texts', () => {
    const human = webShopData({ source: 'original', goals: 'human', files: files(FIXTURES), catalogSize: 0, catalogSeed: 0 });
    const goalsOf = (s: number) => {
      const set = drawGoalSet(human.products, human.goalBase, s);
      return Array.from(set.order, (_, k) => goalAt(set, human.products, k)).map((g) => [g.asin, g.instruction, g.priceUpper, g.goalOptions]);
    };
    expect(goalsOf(0)).toEqual([
      ['B0TEA00001', "I'd like jasmine green tea that is gluten free, and price lower than 50.00 dollars", 50, ['jasmine']],
      ['B0SOFA0004', 'a cognac leather sofa', 1000000, ['cognac']],
      ['B0SHOE0002', 'running shoes in navy blue, size 10.5, and price lower than 70.00 dollars', 70, ['navy blue', '10.5']],
    ]);
    expect(goalsOf(7)[2]).toEqual(['B0SHOE0002', 'running shoes in navy blue, size 10.5, and price lower than 60.00 dollars', 60, ['navy blue', '10.5']]);
  });

  it('parses prices as engine.py (Python float repr in the tag) and refuses what the original cannot parse', () => {
    expect(parsePricing('$877.80', () => 'x')).toEqual({ pricing: [877.8], priceTag: '$877.8' });
    expect(parsePricing('$1,299.00 - $1,499.99 - $9', () => 'x')).toEqual({ pricing: [1299, 1499.99], priceTag: '$1299.0 to $1499.99' });
    expect(parsePricing('', () => 'x')).toEqual({ pricing: [100], priceTag: '$100.0' });
    expect(codeOf(() => parsePricing('12.99', () => 'x'))).toBe('E_CONFIG');
    expect(codeOf(() => parsePricing('$ - $3', () => 'x'))).toBe('E_CONFIG');
    expect([1e16, 0.0001, 0.00001, 123456789.125, 1e22].map(pyFloatRepr)).toEqual(['1e+16', '0.0001', '1e-05', '123456789.125', '1e+22']);
  });
});

describe('split modes on the generated catalog, against the original pipeline run on the same files', () => {
  it("paper: LaMer's per-worker shuffles and numpy's RandomState choices; webshop: seed 233, test goals 0-499", () => {
    const paper = createWebShopEnv({ split: 'paper' });
    expect(paper.settings.goalCount).toBe(6461);
    const evalTask = (i: number) => {
      paper.reset(taskSeed('eval', i));
      return paper.task.instruction;
    };
    // Evaluation task i: worker seed 1000 + i % 128, index RandomState(1000).choice(range(500), 128) of reset i / 128.
    expect(evalTask(0)).toBe(
      'i need slim fit, rubber sole and short sleeve ankle socks with color: navy blue, and size: medium, and price lower than 20.00 dollars',
    );
    expect(evalTask(127)).toBe('i want to buy a rubber sole jeans with color: light indigo, and size: 30w x 30l, and price lower than 80.00 dollars');
    expect(evalTask(128)).toBe('find me a lipstick with sensitive skin, vegan formula and long lasting with color: berry, and price lower than 50.00 dollars');
    const trainTask = (t: number) => {
      paper.reset(taskSeed('train', t));
      return paper.task.instruction;
    };
    // Training task t: worker seed t % 8, index 500 + RandomState(0).choice(len - 500, 8) of reset t / 8.
    expect(trainTask(0)).toBe(
      'find me a shoe rack with easy assemble and storage space with color: black, and size: 2-tier, and price lower than 50.00 dollars',
    );
    expect(trainTask(13)).toBe('i need long lasting body wash with scent: eucalyptus mint, and size: 1.7 fl oz, and price lower than 40.00 dollars');
    expect(codeOf(() => paper.reset(taskSeed('train', 8 * 2048)))).toBe('E_ENV');
    const webshop = createWebShopEnv({ split: 'webshop' });
    webshop.reset(taskSeed('eval', 499));
    expect(webshop.task.instruction).toBe('i need quick drying and slim fit running shoes with color: white, and size: 8, and price lower than 130.00 dollars');
    webshop.reset(taskSeed('eval', 0));
    expect(webshop.task.instruction).toBe(
      'find me a beef jerky with low sodium, organic and sugar free with flavor: original, and size: pack of 6, and price lower than 80.00 dollars',
    );
  });

  it('lamer: evaluation, selection and training seeds play goals of their own content split only', () => {
    const env = createWebShopEnv();
    const splitOf = (seed: number) => {
      env.reset(seed);
      return contentSplit(goalKey(env.task));
    };
    for (let i = 0; i < 40; i++) {
      expect(splitOf(taskSeed('eval', i))).toBe('eval');
      expect(splitOf(taskSeed('train', i))).toBe('train');
      expect(splitOf(900_000_000 + i)).toBe('select');
    }
  });

  it('the generated catalog written as files and read back as the original takes the same path: same hashes, same goals', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-webshop-'));
    try {
      const paths = writeGeneratedCatalog(dir, 200, 3);
      const fromFiles = createWebShopEnv({ source: 'original', files: paths, split: 'lamer' });
      const generated = createWebShopEnv({ catalogSize: 200, catalogSeed: 3 });
      expect(fromFiles.settings.sha256).toEqual(generated.settings.sha256);
      for (const seed of [0, 5, taskSeed('eval', 2)]) expect(fromFiles.reset(seed)).toEqual(generated.reset(seed));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** [action, page text with {I} for the instruction, clickables, selected options, reward] along a played sequence. */
const PLAYED: Array<[string, string, string[] | null, Record<string, string> | null, number]> = [
  ['reset', 'WebShop [SEP] Instruction: [SEP] {I} [SEP] Search', ['search'], {}, 0],
  [
    "search[l'eau d'issey]",
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] Page 1 (Total results: 2) [SEP] Next > [SEP] B000MJZOPK [SEP] Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz [SEP] $39.0 to $52.5 [SEP] B000VOHH8I [SEP] L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle [SEP] $64.98",
    ['back to search', 'next >', 'b000mjzopk', 'b000vohh8i'],
    {},
    0.0,
  ],
  [
    'click[next >]',
    'Instruction: [SEP] {I} [SEP] Back to Search [SEP] Page 2 (Total results: 2) [SEP] < Prev [SEP] Next >',
    ['back to search', '< prev', 'next >'],
    {},
    0.0,
  ],
  [
    'click[< prev]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] Page 1 (Total results: 2) [SEP] Next > [SEP] B000MJZOPK [SEP] Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz [SEP] $39.0 to $52.5 [SEP] B000VOHH8I [SEP] L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle [SEP] $64.98",
    ['back to search', 'next >', 'b000mjzopk', 'b000vohh8i'],
    {},
    0.0,
  ],
  [
    'click[b000vohh8i]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] 2.5 fl oz [SEP] 6.76 fl oz (pack of 1) [SEP] L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle [SEP] Price: $64.98 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now",
    ['back to search', '< prev', 'description', 'features', 'reviews', 'buy now', '2.5 fl oz', '6.76 fl oz (pack of 1)'],
    {},
    0.0,
  ],
  [
    'click[6.76 fl oz (pack of 1)]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] 2.5 fl oz [SEP] 6.76 fl oz (pack of 1) [SEP] L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle [SEP] Price: $64.98 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now",
    ['back to search', '< prev', 'description', 'features', 'reviews', 'buy now', '2.5 fl oz', '6.76 fl oz (pack of 1)'],
    { size: '6.76 fl oz (pack of 1)' },
    0.0,
  ],
  [
    'click[description]',
    'Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] A fresh aquatic fragrance for men.',
    ['back to search', '< prev'],
    { size: '6.76 fl oz (pack of 1)' },
    0.0,
  ],
  [
    'click[< prev]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] 2.5 fl oz [SEP] 6.76 fl oz (pack of 1) [SEP] L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle [SEP] Price: $64.98 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now",
    ['back to search', '< prev', 'description', 'features', 'reviews', 'buy now', '2.5 fl oz', '6.76 fl oz (pack of 1)'],
    { size: '6.76 fl oz (pack of 1)' },
    0.0,
  ],
  [
    'click[features]',
    'Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] Long lasting [SEP] 6.7 fl oz spray bottle',
    ['back to search', '< prev'],
    { size: '6.76 fl oz (pack of 1)' },
    0.0,
  ],
  [
    'click[< prev]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] 2.5 fl oz [SEP] 6.76 fl oz (pack of 1) [SEP] L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle [SEP] Price: $64.98 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now",
    ['back to search', '< prev', 'description', 'features', 'reviews', 'buy now', '2.5 fl oz', '6.76 fl oz (pack of 1)'],
    { size: '6.76 fl oz (pack of 1)' },
    0.0,
  ],
  ['click[reviews]', 'Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev', ['back to search', '< prev'], { size: '6.76 fl oz (pack of 1)' }, 0.0],
  [
    'click[< prev]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] 2.5 fl oz [SEP] 6.76 fl oz (pack of 1) [SEP] L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle [SEP] Price: $64.98 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now",
    ['back to search', '< prev', 'description', 'features', 'reviews', 'buy now', '2.5 fl oz', '6.76 fl oz (pack of 1)'],
    { size: '6.76 fl oz (pack of 1)' },
    0.0,
  ],
  [
    'click[< prev]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] Page 1 (Total results: 2) [SEP] Next > [SEP] B000MJZOPK [SEP] Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz [SEP] $39.0 to $52.5 [SEP] B000VOHH8I [SEP] L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle [SEP] $64.98",
    ['back to search', 'next >', 'b000mjzopk', 'b000vohh8i'],
    {},
    0.0,
  ],
  [
    'click[b000mjzopk]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] black [SEP] navy | blue [SEP] size [SEP] x-large [SEP] black [SEP] Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz [SEP] Price: $39.0 to $52.5 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now",
    ['back to search', '< prev', 'description', 'features', 'reviews', 'buy now', 'black', 'navy | blue', 'x-large'],
    {},
    0.0,
  ],
  [
    'click[black]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] black [SEP] navy | blue [SEP] size [SEP] x-large [SEP] black [SEP] Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz [SEP] Price: $39.0 to $52.5 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now",
    ['back to search', '< prev', 'description', 'features', 'reviews', 'buy now', 'black', 'navy | blue', 'x-large'],
    { size: 'black' },
    0.0,
  ],
  [
    'click[navy | blue]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] black [SEP] navy | blue [SEP] size [SEP] x-large [SEP] black [SEP] Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz [SEP] Price: $39.0 to $52.5 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now",
    ['back to search', '< prev', 'description', 'features', 'reviews', 'buy now', 'black', 'navy | blue', 'x-large'],
    { size: 'black', color: 'navy | blue' },
    0.0,
  ],
  [
    'click[features]',
    'Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] Citrus woody [SEP] ',
    ['back to search', '< prev'],
    { size: 'black', color: 'navy | blue' },
    0.0,
  ],
  [
    'search[sport]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] Page 1 (Total results: 1) [SEP] Next > [SEP] B000MJZOPK [SEP] Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz [SEP] $39.0 to $52.5",
    ['back to search', 'next >', 'b000mjzopk'],
    {},
    0.0,
  ],
  [
    'click[b000mjzopk]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] black [SEP] navy | blue [SEP] size [SEP] x-large [SEP] black [SEP] Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz [SEP] Price: $39.0 to $52.5 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now",
    ['back to search', '< prev', 'description', 'features', 'reviews', 'buy now', 'black', 'navy | blue', 'x-large'],
    {},
    0.0,
  ],
  [
    'click[black]',
    "Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] black [SEP] navy | blue [SEP] size [SEP] x-large [SEP] black [SEP] Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz [SEP] Price: $39.0 to $52.5 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now",
    ['back to search', '< prev', 'description', 'features', 'reviews', 'buy now', 'black', 'navy | blue', 'x-large'],
    { size: 'black' },
    0.0,
  ],
  [
    'click[buy now]',
    'Thank you for shopping with us! [SEP] Your code: [SEP] None [SEP] (Paste it in your MTurk interface.) [SEP] Purchased [SEP] asin [SEP] B000MJZOPK [SEP] options [SEP] {"size": "black"} [SEP] attrs [SEP] None [SEP] category [SEP] None [SEP] query [SEP] None [SEP] product category [SEP] None [SEP] Target [SEP] asin [SEP] options [SEP] attrs [SEP] price upper [SEP] instuction text [SEP] category [SEP] product category [SEP] query [SEP] Goal [SEP] None [SEP] Reward [SEP] Your score (min 0.0, max 1.0) [SEP] 0.3333333333333333 [SEP] Reward Details [SEP] None',
    null,
    null,
    0.3333333333333333,
  ],
];

describe('pages and navigation (the original SimServer and convert_html_to_text, played on the transcript fixture)', () => {
  const env = createWebShopEnv({ source: 'original', files: files(join(FIXTURES, 'transcript')), goals: 'human', goalSeed: 5, maxTurns: 50 });
  const goal = () => {
    // The fixture has one goal: reset with a seed of the content split it falls in.
    const probe = createWebShopEnv({ source: 'original', files: files(join(FIXTURES, 'transcript')), goals: 'human', goalSeed: 5, split: 'lamer' });
    for (const seed of [0, taskSeed('eval', 0), 900_000_000]) {
      try {
        probe.reset(seed);
        return seed;
      } catch {
        // not this split
      }
    }
    throw new Error('no seed reaches the fixture goal');
  };

  it('shows the same page text, clickables and selections as the original after every action', () => {
    const first = env.reset(goal());
    const instruction = "i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars";
    expect(env.task.instruction).toBe(instruction);
    expect(first.anchor).toBe(PLAYED[0][1].replace('{I}', instruction));
    for (const [action, text, clickables, selected, reward] of PLAYED.slice(1)) {
      const r = env.step(act(action));
      expect(r.valid, action).toBe(true);
      expect(r.observation.anchor.split(' [SEP] Selected: ')[0], action).toBe(text.replace('{I}', instruction));
      if (clickables !== null) expect(env.admissibleActions(), action).toEqual(clickables.filter((c) => c !== 'search').map((c) => `click[${c}]`));
      if (!r.done) expect(Object.fromEntries(env.view().options), action).toEqual(selected);
      else expect(r.info.score, action).toBe(reward);
    }
  });

  it("renders the recorded real pages of AgentBench's WebShop one-shot example (src/server/tasks/webshop/__init__.py)", () => {
    const data = env.data;
    const ctx = { products: data.products, instruction: "i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars" };
    expect(pageText(startSession(), ctx)).toBe(
      "WebShop [SEP] Instruction: [SEP] i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars [SEP] Search",
    );
    const vohh = data.products.findIndex((p) => p.asin === 'B000VOHH8I');
    const other = 1 - vohh;
    const results: Session = { ...startSession(), page: 'results', keywords: ['x'], hits: [vohh, other, ...Array<number>(48).fill(other)] };
    expect(pageText(results, ctx)).toMatch(
      /^Instruction: \[SEP\] i need a long lasting 6\.76 fl oz bottle of l'eau d'issey, and price lower than 100\.00 dollars \[SEP\] Back to Search \[SEP\] Page 1 \(Total results: 50\) \[SEP\] Next > \[SEP\] B000VOHH8I \[SEP\] L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6\.7 Fl Oz Bottle \[SEP\] \$64\.98 \[SEP\] B000MJZOPK /,
    );
    const item: Session = { ...results, page: 'item', product: vohh };
    const recorded =
      "Instruction: [SEP] i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] 2.5 fl oz [SEP] 6.76 fl oz (pack of 1) [SEP] L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle [SEP] Price: $64.98 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now";
    expect(pageText(item, ctx)).toBe(recorded);
    // Selections are not shown: identical after click[6.76 fl oz (pack of 1)].
    expect(pageText({ ...item, options: new Map([['size', '6.76 fl oz (pack of 1)']]) }, ctx)).toBe(recorded);
    expect(
      pageClickables({ ...results, pageNo: 2 }, ctx)
        .clickables.map((c) => c.key)
        .slice(0, 3),
    ).toEqual(['back to search', '< prev', 'next >']);
  });

  it('clickables of an item whose option values overlap: a repeated value keeps its first place and selects the last group', () => {
    const mjz = env.data.products.findIndex((p) => p.asin === 'B000MJZOPK');
    const { clickables } = pageClickables({ ...startSession(), page: 'item', product: mjz }, { products: env.data.products, instruction: 'x' });
    expect(clickables.map((c) => c.key)).toEqual([
      'back to search',
      '< prev',
      'description',
      'features',
      'reviews',
      'buy now',
      'black',
      'navy | blue',
      'x-large',
    ]);
    expect(clickables.find((c) => c.key === 'black')?.optionName).toBe('size');
  });

  it('done page: Flask tojson of the options (sorted keys, html-safe escapes) and the score as Python prints it', () => {
    expect(
      flaskToJson(
        new Map([
          ['size', 'x'],
          ['color', "a<b>&'c é"],
        ]),
      ),
    ).toBe('{"color": "a\\u003cb\\u003e\\u0026\\u0027c \\u00e9", "size": "x"}');
    expect(pyFloatRepr(2 / 3)).toBe('0.6666666666666666');
    expect(pyFloatRepr(1)).toBe('1.0');
  });
});

describe('actions (engine.py parse_action)', () => {
  // The original's expression, with JavaScript's backtracking engine: the same greedy semantics on one line.
  const byRegex = (text: string) => {
    const m = /^(.+)\[(.+)\]/.exec(text);
    return m === null ? null : { name: m[1], arg: m[2] };
  };

  it('reads what (.+)\\[(.+)\\] reads on 20,000 random short actions, and long ones as written out here', () => {
    const next = rng(7);
    const pick = (xs: string[]) => xs[Math.floor(next() * xs.length)];
    let parsed = 0;
    for (let i = 0; i < 20000; i++) {
      const text = Array.from({ length: Math.floor(next() * 8) }, () => pick(['search', 'click', '[', ']', 'a', ' ', 'x y', '\n', '[]', ']['])).join('');
      expect(parseAction(text), JSON.stringify(text)).toEqual(byRegex(text));
      if (byRegex(text)) parsed++;
    }
    expect(parsed).toBeGreaterThan(2000);
    // Long ones (bench/envs-text.bench.ts times these): the expression's backtracking is not needed to read them.
    expect(parseAction(`click[${'] ['.repeat(40000)}]`)).toEqual({ name: `click[${'] ['.repeat(39998)}] `, arg: '] [' });
    expect(parseAction(`search[a]${' '.repeat(100000)}x`)).toEqual({ name: 'search', arg: 'a' });
    expect(parseAction('click[buy now] please')).toEqual({ name: 'click', arg: 'buy now' });
    expect(parseAction('search[a [b] c]')).toEqual({ name: 'search[a ', arg: 'b] c' });
  });

  // Actions of 100,000 characters of each shape a model can write, as whole actions and inside search[...] /
  // click[...]: what the parser reads, what LaMer's projection records, and what the step does, each written out here.
  // (Stripping whitespace with a backtracking expression made the ones with whitespace between other characters take
  // tens of seconds; this test's 10 s limit is a guard far above the few milliseconds they take.)
  it('reads 100,000-character actions of spaces, tabs, newlines, brackets and a mix as the original does', () => {
    const N = 100_000;
    const mix = ' \t[ ]\t '.repeat(N / 7 + 1).slice(0, N - 8);
    const lastClose = mix.lastIndexOf(']');
    expect([mix.endsWith(' \t[ '), mix.slice(lastClose - 2, lastClose + 1)]).toEqual([true, '[ ]']);
    const cases: Array<{ shape: string; action: string; parsed: { name: string; arg: string } | null; valid: boolean; recorded: string }> = [
      { shape: 'spaces', action: ' '.repeat(N), parsed: null, valid: false, recorded: '' },
      {
        shape: 'spaces in search[]',
        action: `search[${' '.repeat(N - 8)}]`,
        parsed: { name: 'search', arg: ' '.repeat(N - 8) },
        valid: true,
        recorded: `search[${' '.repeat(N - 8)}]`,
      },
      { shape: 'tabs', action: '\t'.repeat(N), parsed: null, valid: false, recorded: '' },
      {
        shape: 'tabs in search[]',
        action: `search[${'\t'.repeat(N - 8)}]`,
        parsed: { name: 'search', arg: '\t'.repeat(N - 8) },
        valid: true,
        recorded: `search[${'\t'.repeat(N - 8)}]`,
      },
      { shape: 'newlines', action: '\n'.repeat(N), parsed: null, valid: false, recorded: '' },
      { shape: 'newlines in search[]', action: `search[${'\n'.repeat(N - 8)}]`, parsed: null, valid: false, recorded: `search[${'\n'.repeat(N - 8)}]` },
      {
        shape: 'brackets',
        action: `${'['.repeat(N / 2)}${']'.repeat(N / 2)}`,
        parsed: { name: '['.repeat(N / 2 - 1), arg: ']'.repeat(N / 2 - 1) },
        valid: false,
        recorded: `${'['.repeat(N / 2)}${']'.repeat(N / 2)}`,
      },
      {
        shape: 'brackets in click[]',
        action: `click[x${'[]'.repeat(N / 2 - 4)}]`,
        parsed: { name: `click[x${'[]'.repeat(N / 2 - 5)}`, arg: ']' },
        valid: false,
        recorded: `click[x${'[]'.repeat(N / 2 - 4)}]`,
      },
      // The mix ends in ' \t[ ' and its last ']' is two characters after a '[': the argument is the one space between.
      { shape: 'mixed', action: `a${mix}\n\tbcdef`, parsed: { name: `a${mix.slice(0, lastClose - 2)}`, arg: ' ' }, valid: false, recorded: `a${mix}\n\tbcdef` },
      {
        shape: 'mixed in search[]',
        action: `search[${mix}]`,
        parsed: { name: `search[${mix.slice(0, -2)}`, arg: ' ' },
        valid: false,
        recorded: `search[${mix}]`,
      },
    ];
    const env = createWebShopEnv();
    const initial = env.reset(1);
    for (const c of cases) {
      expect(c.action.length, c.shape).toBe(N);
      expect(parseAction(c.action), c.shape).toEqual(c.parsed);
      env.restart();
      const r = env.step(`I think so.\n<action>${c.action}</action>`);
      expect([r.valid, r.historyAction === c.recorded], c.shape).toEqual([c.valid, true]);
      if (c.valid) expect(r.observation.text, c.shape).toMatch(/^Back to Search \[SEP\] Page 1 \(Total results: 0\) \[SEP\] Next >\n/);
      else expect(r.observation, c.shape).toEqual(initial);
    }
  }, 10_000);
});

describe('the environment', () => {
  it("offers to search the request's product and attributes: the words before its option list and price clause", () => {
    const words = (instruction: string): string => searchWords({ instruction } as Goal);
    // An attribute clause may itself start with "with"; only "with <option>:" starts the options.
    expect(words('find me a running shoes with relaxed fit and button closure with color: royal blue, and size: 6, and price lower than 60.00 dollars')).toBe(
      'find me a running shoes with relaxed fit and button closure',
    );
    expect(words("i'm looking for a ground coffee that is dairy free with flavor: original, and price lower than 50.00 dollars")).toBe(
      "i'm looking for a ground coffee that is dairy free",
    );
    expect(words('i need long lasting body wash, and price lower than 40.00 dollars')).toBe('i need long lasting body wash');
  });

  it('compact prompts show pages in lower case, as the actions name what they click', () => {
    const env = createWebShopEnv();
    const initial = env.reset(3);
    const results = env.step(act('search[black hoodie]'));
    const prompt = env.playPrompt({
      style: 'compact',
      initial,
      memory: [],
      episode: 0,
      steps: [{ action: 'search[black hoodie]', observation: results.observation.text }],
    });
    const asin = results.observation.text.match(/B0[0-9A-Z]{8}/)![0];
    expect(prompt).toContain(`now: back to search / page 1 (total results: 50) / next > / ${asin.toLowerCase()} / `);
    expect(prompt).toContain(`click[${asin.toLowerCase()}]`);
    expect(prompt).not.toContain(asin);
  });

  it('search works on every page; unknown clicks, click[search] and missing tags are invalid no-ops', () => {
    const env = createWebShopEnv();
    const first = env.reset(3);
    // The search action lists the request's words without the price clause and without the option list.
    const words = env.task.instruction.replace(/, and price lower than .*$/, '');
    expect(words).toMatch(/ with [a-z]+: /);
    expect(first.text).toBe(`Search\nAvailable actions: search[${words.slice(0, words.search(/ with [a-z]+: /))}]`);
    expect(first.anchor.startsWith('WebShop [SEP] Instruction: [SEP] ')).toBe(true);
    for (const bad of ['no tags', act('click[search]'), act('click[buy now]'), act('jump[up]'), act('search[]')]) {
      const r = env.step(bad);
      expect(r.valid, bad).toBe(false);
      expect(r.observation).toEqual(first);
    }
    const results = env.step(act('search[black hoodie]'));
    expect(results.valid).toBe(true);
    expect(results.observation.text).toMatch(/^Back to Search \[SEP\] Page 1 \(Total results: 50\) \[SEP\] Next > \[SEP\] B0/);
    // Searching again from a results page is allowed in the original.
    expect(env.step(act('search[green tea]')).valid).toBe(true);
    // next > has no upper bound: page 6 of 50 results is empty.
    for (let p = 2; p <= 6; p++) expect(env.step(act('click[next >]')).observation.anchor).toContain(`Page ${p} (Total results: 50)`);
    expect(env.view().pageNo).toBe(6);
  });

  it('a search of 100,000 characters hands the index its first 2,000 characters only', () => {
    const env = createWebShopEnv();
    env.reset(2);
    const words = 'black hoodie slim fit organic green tea '.repeat(2500);
    // The index (shared by every env on this data) is watched for this one step: what it is asked to analyse and
    // score bounds the step's work, whatever the action's length.
    const search = vi.spyOn(env.data.search, 'search');
    let r: ReturnType<typeof env.step>;
    let queried: number[];
    try {
      r = env.step(act(`search[${words}]`));
      queried = search.mock.calls.map(([query]) => query.length);
    } finally {
      search.mockRestore();
    }
    expect(queried).toEqual([2000]);
    expect(r.valid).toBe(true);
    expect(env.view().hits).toEqual(env.searchResults(words.slice(0, 2000)));
  });

  it('ends after 12 turns without a purchase (score 0, truncated) and restart() gives the initial observation', () => {
    const env = createWebShopEnv();
    const initial = env.reset(1);
    let r = env.step('nothing');
    let turns = 1;
    while (!r.done) {
      r = env.step('still nothing');
      turns++;
    }
    expect([turns, r.won, r.info.score, r.reward, r.truncated]).toEqual([12, false, 0, 0, true]);
    expect(codeOf(() => env.step('more'))).toBe('E_ENV');
    expect(env.restart()).toEqual(initial);
  });

  it('restart after a wrong purchase: the same goal, or with paper-random-goal the random draw of the original', () => {
    const options: WebShopOptions = { source: 'original', files: files(FIXTURES), split: 'lamer' };
    const seedOf = (env: ReturnType<typeof createWebShopEnv>) => {
      for (const seed of [0, 1, 2, 3, taskSeed('eval', 0), taskSeed('eval', 1)]) {
        env.reset(seed);
        if (env.task.asin === 'B0DESK0003') return seed;
      }
      throw new Error('no seed plays the desk');
    };
    const same = createWebShopEnv(options);
    const seed = seedOf(same);
    const buyDesk = (env: ReturnType<typeof createWebShopEnv>) => {
      env.step(act('search[desk organizer]'));
      expect(env.step(act('click[b0desk0003]')).valid).toBe(true);
      return env.step(act('click[buy now]'));
    };
    same.reset(seed);
    const task = same.task.instruction;
    expect(buyDesk(same).done).toBe(true);
    same.restart();
    expect(same.goal.instruction).toBe(task);
    const random = createWebShopEnv({ ...options, restartAfterPurchase: 'paper-random-goal' });
    random.reset(seed);
    const won = buyDesk(random);
    // The desk goal is {wooden} at price < 140: bought at 100, "wooden" in its description, its own title.
    expect(won.won).toBe(true);
    // The original's draws after the shuffle of worker seed 0: random_idx gives 10 at construction, then 4, 4, 1.
    const set = drawGoalSet(random.data.products, random.data.goalBase, 0);
    for (const position of [4, 4, 1]) {
      random.restart();
      expect(random.goal.instruction).toBe(goalAt(set, random.data.products, position).instruction);
      expect(random.task.instruction).toBe(task);
      buyDesk(random);
    }
  });

  it('same seed, same behaviour; different seeds mostly different tasks', () => {
    const a = createWebShopEnv();
    const b = createWebShopEnv();
    for (const seed of [0, 1, 99, 123456]) {
      expect(a.reset(seed)).toEqual(b.reset(seed));
      let s = seed;
      for (let t = 0; t < 12; t++) {
        const actions = a.admissibleActions();
        expect(b.admissibleActions()).toEqual(actions);
        s = (s * 1103515245 + 12345) % 2 ** 31;
        const pick = actions[s % actions.length];
        const ra = a.step(act(pick));
        expect(b.step(act(pick))).toEqual(ra);
        if (ra.done) break;
      }
    }
    expect(new Set([0, 1, 2, 3, 4, 5, 6, 7].map((s) => (a.reset(s), a.taskKey()))).size).toBeGreaterThan(6);
  });

  it('rejects bad options and misuse with stable codes naming the option', () => {
    expect(codeOf(() => createWebShopEnv({ split: 'random' as never }))).toBe('E_CONFIG');
    expect(codeOf(() => createWebShopEnv({ restartAfterPurchase: 'new' as never }))).toBe('E_CONFIG');
    expect(codeOf(() => createWebShopEnv({ source: 'original' }))).toBe('E_CONFIG');
    expect(codeOf(() => createWebShopEnv({ source: 'original', files: { products: '/nonexistent.json', attributes: '/x.json' } }))).toBe('E_CONFIG');
    expect(() => createWebShopEnv({ sha256: { products: 'abc' } })).toThrow(/sha256.products/);
    expect(() => createWebShopEnv({ colour: 'red' } as never)).toThrow(/colour/);
    expect(() => createWebShopEnv({ maxTurns: 0 })).toThrow(/maxTurns/);
    const env = createWebShopEnv();
    expect(codeOf(() => env.step(act('search[x]')))).toBe('E_ENV');
    expect(codeOf(() => env.reset(-1))).toBe('E_ENV');
  });
});

describe('records: the data and choices a run used', () => {
  it('provenance() resolves every choice and the SHA-256 of the files; giving it back as options is accepted', () => {
    const recorded = createWebShopEnv({ source: 'original', files: files(FIXTURES) }).provenance();
    const sha = (p: string) => createHashHex(readFileSync(p));
    expect(recorded).toEqual({
      source: 'original',
      files: files(FIXTURES),
      sha256: {
        products: sha(files(FIXTURES).products),
        attributes: sha(files(FIXTURES).attributes),
        humanInstructions: sha(files(FIXTURES).humanInstructions),
      },
      goals: 'synthetic',
      split: 'lamer',
      goalSeed: 0,
      restartAfterPurchase: 'same-goal',
      fuzz: 'rapidfuzz',
      maxTurns: 12,
    });
    expect(createWebShopEnv(recorded as WebShopOptions).settings.sha256).toEqual(recorded.sha256);
  });

  it("a run's config.json records the env's provenance: resolved options with the data hashes", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-webshop-run-'));
    try {
      const trainer = new Trainer(
        { name: 'ws', runsDir: dir, method: 'random', env: { name: 'webshop', options: { catalogSize: 100 } }, eval: { tasks: 2 }, trial: { episodes: 1 } },
        { progress: false, log: () => {} },
      );
      for await (const _ of trainer.run()) void _;
      const config = JSON.parse(readFileSync(join(dir, 'ws', 'config.json'), 'utf8')) as { provenance: { train: Record<string, unknown> } };
      expect(config.provenance.train).toMatchObject({
        source: 'generated',
        catalogSize: 100,
        catalogSeed: 0,
        split: 'lamer',
        restartAfterPurchase: 'same-goal',
      });
      expect((config.provenance.train.sha256 as Record<string, string>).products).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('webshop expert and prompts', () => {
  it('wins at least 99% of 500 generated tasks, with valid actions only', () => {
    const env = createWebShopEnv();
    const expert = createWebShopExpert(env);
    let wins = 0;
    let invalid = 0;
    for (let seed = 0; seed < 500; seed++) {
      env.reset(seed);
      for (;;) {
        const r = env.step(expert.act());
        if (!r.valid) invalid++;
        if (r.done) {
          if (r.won) wins++;
          break;
        }
      }
    }
    expect(invalid).toBe(0);
    expect(wins / 500).toBeGreaterThanOrEqual(0.99);
  });

  it("compact style: bare actions of at most 96 characters (a tiny model's budget) that still win, and a short remark", () => {
    const env = createWebShopEnv();
    const expert = createWebShopExpert(env, { style: 'compact' });
    let wins = 0;
    for (let seed = 0; seed < 200; seed++) {
      env.reset(seed);
      for (;;) {
        const answer = expert.act();
        expect(answer).toMatch(/^<action>[^\n]+<\/action>$/);
        expect(answer.length).toBeLessThanOrEqual(96);
        const r = env.step(answer);
        if (r.done) {
          if (r.won) wins++;
          break;
        }
      }
    }
    expect(wins / 200).toBeGreaterThanOrEqual(0.99);
    const remark = expert.reflect([{ action: 'click[buy now]', observation: 'x' }]);
    expect(remark).toMatch(/^<remark>buy b0[0-9a-z]{8}( .+)?<\/remark>$/);
    expect(remark.length).toBeLessThanOrEqual(96);
  });

  it('reflects inside <remark>; prompts carry the request, the trial number and the windowed trajectory', () => {
    const env = createWebShopEnv();
    const initial = env.reset(4);
    const reflection = env.parseReflection(createWebShopExpert(env).reflect([{ action: 'click[buy now]', observation: 'x' }]));
    expect(reflection.valid).toBe(true);
    expect(reflection.text).toContain('Plan for the next trial');
    expect(() => createWebShopExpert(createAlfWorldEnv())).toThrow(/webshop/);
    const steps = Array.from({ length: 9 }, (_, i) => ({ action: `click[x${i}]`, observation: `page ${i}` }));
    const prompt = env.playPrompt({
      style: 'full',
      initial,
      memory: ['On trial #1 the task was NOT completed. Your reflection was: try navy blue'],
      episode: 1,
      steps,
    });
    expect(prompt).toContain(env.task.instruction);
    expect(prompt).toContain('Currently you are on trial #2');
    expect(prompt).toContain('try navy blue');
    expect(prompt).not.toContain('page 1\n');
    expect(prompt).toContain('page 8');
    expect(env.playPrompt({ style: 'compact', initial, memory: [], episode: 0, steps: [] }).length).toBeLessThan(prompt.length / 2);
    expect(env.reflectPrompt({ style: 'full', initial, steps, episode: 0 })).toContain('<remark>');
  });
});
