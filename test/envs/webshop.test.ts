import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasCode } from '../../src/errors.js';
import { Rng } from '../../src/util/rng.js';
import {
  createWebShopEnv,
  createWebShopExpert,
  GENERATED_CATEGORIES,
  loadWebShopCatalog,
  type Catalog,
  type Goal,
  type Product,
} from '../../src/envs/webshop/index.js';
import { createAlfWorldEnv } from '../../src/envs/alfworld/index.js';
import { parseWebShopCommand, parseWebShopResponse } from '../../src/envs/webshop/parse.js';

/** The error code a call throws with, or 'no error'. */
function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return hasCode(e, 'E_ENV') ? 'E_ENV' : String(e);
  }
  return 'no error';
}

const act = (a: string) => `I think this is right.\n<action>${a}</action>`;

function product(over: Partial<Product> & Pick<Product, 'asin' | 'name'>): Product {
  return {
    category: 'fashion',
    productCategory: 'Clothing › Men › T-Shirts',
    query: 't-shirt',
    attributes: [],
    options: {},
    price: 20,
    priceTag: '$20.00',
    description: '',
    features: [],
    ...over,
  };
}

/** A shop of four hand-written products and one hand-written request, so every score can be worked out by hand. */
function handShop(): Catalog {
  const goal: Goal = {
    asin: 'B0TARGET01',
    instruction: "i'm looking for a slim fit t-shirt that is machine wash, in navy blue color and size large, and price lower than 30.00 dollars",
    attributes: ['slim fit', 'machine wash'],
    options: ['navy blue', 'large'],
    priceUpper: 30,
    category: 'fashion',
    productCategory: 'Clothing › Men › T-Shirts',
    query: 't-shirt',
    typeWords: ['t', 'shirt'],
  };
  return {
    goals: [goal],
    products: [
      product({
        asin: 'B0TARGET01',
        name: 'Acme Slim Fit T-Shirt',
        attributes: ['slim fit', 'machine wash'],
        options: { size: ['small', 'large'], color: ['black', 'navy blue'] },
      }),
      product({
        asin: 'B0PRICEY02',
        name: 'Luxe Slim Fit Machine Wash T-Shirt',
        attributes: ['slim fit'],
        options: { size: ['large'], color: ['navy blue'] },
        price: 45,
        priceTag: '$45.00',
      }),
      product({
        asin: 'B0HOODIE03',
        name: 'Cozy Hoodie',
        category: 'fashion',
        productCategory: 'Clothing › Women › Hoodies',
        query: 'hoodie',
        attributes: ['slim fit', 'machine wash'],
        options: { size: ['large'], color: ['navy blue'] },
      }),
      product({
        asin: 'B0PLAINT04',
        name: 'Basic Crew T-Shirt',
        attributes: ['relaxed fit'],
        // The attribute is only in the description here: it still counts, as in WebShop.
        description: 'A t-shirt you can machine wash.',
        options: { size: ['large'], color: ['navy blue'] },
      }),
    ],
  };
}

function buy(catalog: Catalog, asin: string, picks: string[]) {
  const env = createWebShopEnv({ catalog });
  env.reset(7);
  let r = env.step(act('search[slim fit t-shirt machine wash navy blue large]'));
  expect(r.valid).toBe(true);
  expect(r.observation.anchor).toContain(asin);
  r = env.step(act(`click[${asin.toLowerCase()}]`));
  expect(r.valid).toBe(true);
  for (const p of picks) {
    r = env.step(act(`click[${p}]`));
    expect(r.valid).toBe(true);
  }
  return env.step(act('click[Buy Now]'));
}

describe('webshop purchase score (worked out by hand)', () => {
  it('the right product with every option: score 1, reward 10, won', () => {
    const r = buy(handShop(), 'B0TARGET01', ['navy blue', 'large']);
    expect(r.done).toBe(true);
    expect(r.won).toBe(true);
    expect(r.reward).toBe(10);
    expect(r.info.score).toBe(1);
  });

  it('the right product with one option wrong: (2 attributes + 1 option + price) / (2 + 2 + 1) = 0.8, reward 0', () => {
    const r = buy(handShop(), 'B0TARGET01', ['black', 'large']);
    expect(r.done).toBe(true);
    expect(r.won).toBe(false);
    expect(r.reward).toBe(0);
    expect(r.info.score).toBeCloseTo(4 / 5, 12);
  });

  it('no options selected: (2 + 0 + 1) / 5 = 0.6', () => {
    expect(buy(handShop(), 'B0TARGET01', []).info.score).toBeCloseTo(3 / 5, 12);
  });

  it('over the price limit, one attribute only in the title: (2 + 2 + 0) / 5 = 0.8', () => {
    // "machine wash" is not in the attribute list but is in the title, which counts.
    expect(buy(handShop(), 'B0PRICEY02', ['navy blue', 'large']).info.score).toBeCloseTo(4 / 5, 12);
  });

  it('attribute found in the description: (1 + 2 + 1) / 5 = 0.8', () => {
    // "slim fit" is missing; "machine wash" appears in the description.
    expect(buy(handShop(), 'B0PLAINT04', ['navy blue', 'large']).info.score).toBeCloseTo(4 / 5, 12);
  });

  it('the wrong kind of product (no type word in its title): type factor 0, score 0', () => {
    expect(buy(handShop(), 'B0HOODIE03', ['navy blue', 'large']).info.score).toBe(0);
  });
});

describe('webshop pages and actions', () => {
  it('starts on the search page with the request; search only works there; unknown clicks are no-ops', () => {
    const env = createWebShopEnv({ catalog: handShop() });
    const first = env.reset(3);
    expect(first.anchor).toContain('Instruction:');
    expect(first.anchor).toContain('slim fit t-shirt');
    expect(first.text).toContain('search[<query>]');
    expect(env.taskType()).toBe('fashion');

    const clickFirst = env.step(act('click[buy now]'));
    expect(clickFirst.valid).toBe(false);
    expect(clickFirst.observation).toEqual(first);

    const results = env.step(act('search[t-shirt]'));
    expect(results.valid).toBe(true);
    expect(results.observation.anchor).toMatch(/^Back to Search \[SEP\] Page 1 \(Total results: \d+\)/);
    expect(results.observation.text).not.toBe(results.observation.anchor);
    expect(env.admissibleActions()).toContain('click[back to search]');

    const searchAgain = env.step(act('search[hoodie]'));
    expect(searchAgain.valid).toBe(false);
    expect(searchAgain.observation).toEqual(results.observation);

    for (const bad of ['no tags at all', '<action>click[nonexistent product]</action>', '<action>jump[up]</action>', '<action></action>']) {
      const r = env.step(bad);
      expect(r.valid).toBe(false);
      expect(r.reward).toBe(0);
      expect(r.observation).toEqual(results.observation);
    }
  });

  it('pages through results with next > and < prev, opens items, and navigates back', () => {
    const env = createWebShopEnv({ catalogSize: 200, resultsPerPage: 5 });
    env.reset(11);
    const page1 = env.step(act('search[shirt shoes chair tea]')).observation;
    expect(page1.anchor).toContain('Page 1');
    const page2 = env.step(act('click[Next >]')).observation;
    expect(page2.anchor).toContain('Page 2');
    expect(env.step(act('click[< prev]')).observation).toEqual(page1);
    const firstProduct = env.view().listed[0];
    const asin = env.products[firstProduct].asin;
    const item = env.step(act(`click[${asin}]`));
    expect(item.valid).toBe(true);
    expect(item.observation.anchor).toContain('Buy Now');
    const description = env.step(act('click[description]'));
    expect(description.observation.anchor).toContain('Description');
    expect(env.step(act('click[< prev]')).observation).toEqual(item.observation);
    expect(env.step(act('click[< prev]')).observation).toEqual(page1);
    expect(env.step(act('click[back to search]')).observation.anchor).toContain('Instruction:');
  });

  it('ends after 12 turns without a purchase', () => {
    const env = createWebShopEnv({ catalog: handShop() });
    env.reset(1);
    let r = env.step('nothing');
    let turns = 1;
    while (!r.done) {
      r = env.step('still nothing');
      turns++;
    }
    expect(turns).toBe(12);
    expect(r.won).toBe(false);
    expect(r.info.score).toBe(0);
    expect(r.reward).toBe(0);
    expect(() => env.step('more')).toThrow(/restart/);
  });

  it('restart() after random actions gives exactly the initial observation', () => {
    const env = createWebShopEnv({ catalogSize: 300 });
    const rng = new Rng(5);
    for (let seed = 0; seed < 20; seed++) {
      const initial = env.reset(seed);
      for (let t = 0; t < 1 + rng.int(11); t++) {
        const actions = env.admissibleActions();
        const a = actions[0] === 'search[<query>]' ? `search[${env.goal.query}]` : rng.pick(actions);
        if (env.step(act(a)).done) break;
      }
      expect(env.restart()).toEqual(initial);
      expect(env.view().kind).toBe('search');
      expect(env.turnsTaken).toBe(0);
    }
  });

  it('same seed: identical tasks and identical behaviour under the same actions', () => {
    const a = createWebShopEnv({ catalogSize: 300 });
    const b = createWebShopEnv({ catalogSize: 300 });
    for (const seed of [0, 1, 99, 123456]) {
      expect(a.reset(seed)).toEqual(b.reset(seed));
      const rng = new Rng(seed);
      for (let t = 0; t < 12; t++) {
        const actions = a.admissibleActions();
        expect(b.admissibleActions()).toEqual(actions);
        const pick = actions[0] === 'search[<query>]' ? `search[${a.goal.attributes.join(' ')}]` : rng.pick(actions);
        const ra = a.step(act(pick));
        const rb = b.step(act(pick));
        expect(rb).toEqual(ra);
        if (ra.done) break;
      }
    }
    // Different seeds give different requests (at least most of the time).
    const goals = new Set([0, 1, 2, 3, 4, 5, 6, 7].map((s) => a.reset(s).anchor));
    expect(goals.size).toBeGreaterThan(6);
  });

  it('rejects misuse with E_ENV', () => {
    const env = createWebShopEnv({ catalog: handShop() });
    expect(codeOf(() => env.step(act('search[x]')))).toBe('E_ENV');
    expect(codeOf(() => env.restart())).toBe('E_ENV');
    expect(codeOf(() => env.playPrompt({ style: 'full', initial: { text: '', anchor: '' }, memory: [], episode: 0, steps: [] }))).toBe('E_ENV');
    expect(() => createWebShopEnv({ maxTurns: 0 })).toThrow(/maxTurns/);
    expect(() => createWebShopEnv({ colour: 'red' } as never)).toThrow(/colour/);
    expect(() => env.reset(-1)).toThrow(/seed/);
  });

  it('generated requests name attributes, options and a price limit above the product price', () => {
    const env = createWebShopEnv();
    const types = new Set<string>();
    for (let seed = 0; seed < 200; seed++) {
      env.reset(seed);
      const g = env.goal;
      const p = env.products.find((x) => x.asin === g.asin)!;
      types.add(env.taskType()!);
      expect(g.instruction).toMatch(/, and price lower than \d+\.00 dollars$/);
      for (const a of g.attributes) expect(g.instruction).toContain(a);
      for (const o of g.options) expect(g.instruction).toContain(o);
      expect(g.priceUpper).toBeGreaterThan(p.price);
    }
    expect([...types].sort()).toEqual([...GENERATED_CATEGORIES].sort());
  });
});

describe('webshop expert', () => {
  it('wins at least 99% of 1,000 generated tasks, with valid actions only', () => {
    const env = createWebShopEnv();
    const expert = createWebShopExpert(env);
    let wins = 0;
    let invalid = 0;
    for (let seed = 0; seed < 1000; seed++) {
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
    expect(wins / 1000).toBeGreaterThanOrEqual(0.99);
  });

  it('writes a reflection inside <remark> that names the plan', () => {
    const env = createWebShopEnv();
    env.reset(4);
    const expert = createWebShopExpert(env);
    const steps = [{ action: 'click[buy now]', observation: 'Nothing happens' }];
    const reflection = env.parseReflection(expert.reflect(steps));
    expect(reflection.valid).toBe(true);
    expect(reflection.text).toContain('Plan for the next trial');
    expect(reflection.text).toContain(env.goal.priceUpper.toFixed(2));
    expect(() => createWebShopExpert(createAlfWorldEnv())).toThrow(/webshop/);
  });
});

describe('webshop prompts', () => {
  it('full prompts carry the request, the trial number, the windowed trajectory and the answer format', () => {
    const env = createWebShopEnv({ catalog: handShop() });
    const initial = env.reset(0);
    const steps = Array.from({ length: 9 }, (_, i) => ({ action: `click[x${i}]`, observation: `page ${i}` }));
    const prompt = env.playPrompt({
      style: 'full',
      initial,
      memory: ['On trial #1 the task was NOT completed. Your reflection was: try navy blue'],
      episode: 1,
      steps,
    });
    expect(prompt).toContain(env.goal.instruction);
    expect(prompt).toContain('Currently you are on trial #2');
    expect(prompt).toContain('try navy blue');
    expect(prompt).toContain('<action>');
    // Only the last 7 steps keep their observation.
    expect(prompt).not.toContain('page 1\n');
    expect(prompt).toContain('page 8');
    const compact = env.playPrompt({ style: 'compact', initial, memory: [], episode: 0, steps: [] });
    expect(compact.length).toBeLessThan(prompt.length / 2);
    const reflect = env.reflectPrompt({ style: 'full', initial, steps, episode: 0 });
    expect(reflect).toContain('<remark>');
    expect(reflect).toContain('NOT completed');
  });
});

describe('webshop loader (original WebShop JSON files)', () => {
  const products = [
    {
      asin: 'B07AAA1111',
      name: 'Sunny Organic Green Tea Bags',
      category: 'food',
      product_category: 'Grocery & Gourmet Food › Beverages › Tea › Green',
      query: 'green tea',
      pricing: '$12.50',
      customization_options: {
        Flavor: [
          { value: 'Mint', image: null },
          { value: 'Lemon/Ginger', image: null },
        ],
        Size: null,
      },
      full_description: 'Organic green tea, gluten free.',
      small_description: ['Organic', 'Gluten free'],
    },
    {
      asin: 'B07BBB2222',
      name: 'Trail Runner Shoes',
      category: 'fashion',
      product_category: 'Clothing, Shoes & Jewelry › Men › Shoes',
      query: 'running shoes',
      pricing: '$40.00 to $55.99',
      customization_options: { size: [{ value: '9' }, { value: '10' }] },
      full_description: 'Light shoes.',
      small_description: 'Rubber sole',
      attributes: ['rubber sole'],
    },
    { asin: 'nan', name: 'skipped row' },
  ];
  const instructions = {
    B07AAA1111: [
      {
        asin: 'B07AAA1111',
        instruction: 'i want organic green tea in lemon | ginger flavor.',
        instruction_attributes: ['organic', 'gluten free'],
        instruction_options: ['lemon | ginger'],
      },
      { asin: 'B07AAA1111', instruction: 'no attributes here', instruction_attributes: [], instruction_options: [] },
    ],
    B07BBB2222: [
      { asin: 'B07BBB2222', instruction: 'running shoes with rubber sole, size 10', instruction_attributes: ['rubber sole'], instruction_options: ['10'] },
    ],
  };
  const dir = mkdtempSync(join(tmpdir(), 'lamer-webshop-'));
  const productsPath = join(dir, 'items_shuffle.json');
  const instructionsPath = join(dir, 'items_human_ins.json');
  writeFileSync(productsPath, JSON.stringify(products));
  writeFileSync(instructionsPath, JSON.stringify(instructions));

  it('reads products, options, range prices and human instructions', () => {
    const catalog = loadWebShopCatalog({ products: productsPath, instructions: instructionsPath });
    expect(catalog.products.map((p) => p.asin)).toEqual(['B07AAA1111', 'B07BBB2222']);
    const [tea, shoes] = catalog.products;
    expect(tea.options).toEqual({ flavor: ['mint', 'lemon | ginger'] });
    expect(tea.price).toBe(12.5);
    expect(shoes.priceTag).toBe('$40.00 to $55.99');
    expect(shoes.price).toBe(40);
    expect(shoes.features).toEqual(['Rubber sole']);
    expect(catalog.goals).toHaveLength(2);
    const teaGoal = catalog.goals![0];
    expect(teaGoal.instruction).toMatch(/^i want organic green tea in lemon \| ginger flavor, and price lower than (30|40|50)\.00 dollars$/);
    expect(teaGoal.options).toEqual(['lemon | ginger']);
    expect(teaGoal.priceUpper).toBeGreaterThan(12.5);
  });

  it('an env over the loaded catalog is playable and its expert wins every goal', () => {
    const catalog = loadWebShopCatalog({ products: productsPath, instructions: instructionsPath });
    const env = createWebShopEnv({ catalog });
    const expert = createWebShopExpert(env);
    const seen = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      env.reset(seed);
      seen.add(env.goal.asin);
      let r = env.step(expert.act());
      while (!r.done) r = env.step(expert.act());
      expect(r.won).toBe(true);
      expect(r.info.score).toBe(1);
    }
    expect(seen.size).toBe(2);
  });

  it('reports an unreadable or malformed file with E_ENV and the path', () => {
    const missing = join(dir, 'missing.json');
    let error: unknown;
    try {
      loadWebShopCatalog({ products: missing });
    } catch (e) {
      error = e;
    }
    expect(hasCode(error, 'E_ENV')).toBe(true);
    expect(String(error)).toContain(missing);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '[{"asin": ');
    expect(() => loadWebShopCatalog({ products: broken })).toThrow(/not valid JSON/);
    const notList = join(dir, 'object.json');
    writeFileSync(notList, '{"a": 1}');
    expect(() => loadWebShopCatalog({ products: notList })).toThrow(/array of products/);
  });
});

describe('webshop action parsing', () => {
  // The rule as a regular expression: right, but quadratic on long runs of spaces, so only short inputs use it.
  const byRegex = (text: string) => {
    const m = /^\s*(search|click)\s*\[([\s\S]*)\]\s*\.?\s*$/i.exec(text);
    if (m === null) return null;
    const arg = m[2].trim().replace(/\s+/g, ' ');
    if (arg.length === 0) return null;
    return m[1].toLowerCase() === 'search' ? { kind: 'search', query: arg } : { kind: 'click', target: arg };
  };

  it('reads what the rule reads on 20,000 random short actions', () => {
    let s = 7;
    const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    const pick = (xs: string[]) => xs[Math.floor(next() * xs.length)];
    const space = () => pick(['', '', ' ', '  ', '\n', '\t ']);
    let parsed = 0;
    for (let i = 0; i < 20000; i++) {
      // Mostly well-formed commands, with every part sometimes missing, doubled or out of place.
      const arg = Array.from({ length: Math.floor(next() * 4) }, () => pick(['a', 'red shoe', ' ', ']', '[', '.', '\n'])).join('');
      const text = [
        space(),
        pick(['search', 'click', 'Search', 'CLICK', 'serch', '', 'buy']),
        space(),
        pick(['[', '[', '', '(']),
        arg,
        pick([']', ']', '', ')', ']]']),
        space(),
        pick(['', '', '.', '..', 'x']),
        space(),
      ].join('');
      const expected = byRegex(text);
      expect(parseWebShopCommand(text), JSON.stringify(text)).toEqual(expected);
      if (expected) parsed++;
    }
    expect(parsed).toBeGreaterThan(500);
  });

  it('parses or rejects a 100k-character action in linear time (under 50 ms)', () => {
    const long = [
      `search[a]${' '.repeat(100000)}x`,
      `search[${'red shoes '.repeat(11000)}]`,
      `click[${'] ['.repeat(33000)}]`,
      ` ${'\n'.repeat(100000)}click[x].`,
    ];
    for (const text of long) {
      const t = performance.now();
      parseWebShopResponse(`<action>${text}</action>`);
      expect(performance.now() - t, text.slice(0, 20)).toBeLessThan(50);
    }
    expect(parseWebShopCommand(long[3])).toEqual({ kind: 'click', target: 'x' });
  });
});
