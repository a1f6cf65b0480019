// Hostile WebShop data files: each original file is read through the bounded regular-file reader (a named pipe, a
// device or an over-size file is refused at once with E_CONFIG naming the option and the file), every text of the data
// has a length bound, and synthetic goals are counted before they are built, so a product with many options is refused
// instead of building millions of goals.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LamerError } from '../../src/errors.js';
import { MAX_SYNTHETIC_GOALS, MAX_TEXT_CHARS } from '../../src/envs/webshop/data/pipeline.js';
import { createWebShopEnv } from '../../src/envs/webshop/index.js';
import { MAX_DATA_FILE_BYTES, webShopData } from '../../src/envs/webshop/loader.js';
import { removeTempDirs, tempDir } from '../helpers/index.js';

afterAll(removeTempDirs);

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'webshop');
const NAMES = { products: 'items_shuffle.json', attributes: 'items_ins_v2.json', humanInstructions: 'items_human_ins.json' } as const;
type Role = keyof typeof NAMES;

/** A copy of the four-product fixture in a fresh folder; `edit` may replace any file. */
function dataDir(edit: (dir: string) => void = () => {}): Record<Role, string> {
  const dir = tempDir('webshop-hostile');
  const paths = {} as Record<Role, string>;
  for (const [role, name] of Object.entries(NAMES) as [Role, string][]) {
    paths[role] = join(dir, name);
    copyFileSync(join(FIXTURES, name), paths[role]);
  }
  edit(dir);
  return paths;
}

/** The fixture's products with `edit` applied to the first one (a product with a synthetic instruction). */
function editProducts(edit: (product: Record<string, unknown>) => void): (dir: string) => void {
  return (dir) => {
    const products = JSON.parse(readFileSync(join(FIXTURES, NAMES.products), 'utf8')) as Record<string, unknown>[];
    edit(products[0]);
    writeFileSync(join(dir, NAMES.products), JSON.stringify(products));
  };
}

/** The error creating an env on these files throws (fails the test when none is thrown), with the time it took. */
function refusal(files: Record<Role, string>, goals: 'synthetic' | 'human' = 'synthetic'): { error: LamerError; ms: number } {
  const t = performance.now();
  try {
    createWebShopEnv({ source: 'original', files, goals });
  } catch (e) {
    return { error: e as LamerError, ms: performance.now() - t };
  }
  throw new Error('the env was created');
}

describe('WebShop data files are read only when regular and bounded', () => {
  for (const role of ['products', 'attributes', 'humanInstructions'] as const) {
    it(`${role}: a named pipe is refused at once, naming the option and the file`, () => {
      const files = dataDir((dir) => {
        const p = join(dir, NAMES[role]);
        execFileSync('rm', [p]);
        execFileSync('mkfifo', [p]);
      });
      const { error, ms } = refusal(files, role === 'humanInstructions' ? 'human' : 'synthetic');
      expect(error.code).toBe('E_CONFIG');
      expect(error.message).toContain(`files.${role}`);
      expect(error.message).toContain(files[role]);
      expect(error.message).toMatch(/named pipe/);
      expect(ms).toBeLessThan(5_000);
    });
  }

  it('a symlink to /dev/zero is refused before any read', () => {
    const files = dataDir((dir) => {
      const p = join(dir, NAMES.products);
      execFileSync('rm', [p]);
      symlinkSync('/dev/zero', p);
    });
    const { error } = refusal(files);
    expect(error.code).toBe('E_CONFIG');
    expect(error.message).toMatch(/files\.products: .*items_shuffle\.json: expected a regular file, found a device/);
  });

  it('a folder in place of a file is refused', () => {
    const files = dataDir((dir) => {
      const p = join(dir, NAMES.attributes);
      execFileSync('rm', [p]);
      mkdirSync(p);
    });
    const { error } = refusal(files);
    expect(error.code).toBe('E_CONFIG');
    expect(error.message).toMatch(/files\.attributes: .*found a folder/);
  });

  it('a file past the size bound is refused unread (a sparse file: its size, not its bytes)', () => {
    const files = dataDir((dir) => truncateSync(join(dir, NAMES.products), MAX_DATA_FILE_BYTES + 1));
    const { error, ms } = refusal(files);
    expect(error.code).toBe('E_CONFIG');
    expect(error.message).toContain(`more than the ${MAX_DATA_FILE_BYTES}`);
    expect(ms).toBeLessThan(5_000);
  });

  it('a missing file is E_CONFIG naming it', () => {
    const files = dataDir((dir) => execFileSync('rm', [join(dir, NAMES.attributes)]));
    const { error } = refusal(files);
    expect(error.code).toBe('E_CONFIG');
    expect(error.message).toContain(files.attributes);
  });
});

describe('WebShop data texts and goals are bounded', () => {
  it('a description past the text bound is refused, naming the file, the product and the field', () => {
    const files = dataDir(editProducts((p) => (p.full_description = 'word '.repeat(MAX_TEXT_CHARS / 5 + 1))));
    const { error, ms } = refusal(files);
    expect(error.code).toBe('E_CONFIG');
    expect(error.message).toMatch(/items_shuffle\.json\[0\] \(asin B0TEA00001\)\.full_description: a text of 100005 characters/);
    expect(ms).toBeLessThan(5_000);
  });

  it('a bullet point, an option value and an instruction past the bound are refused too', () => {
    const long = 'x'.repeat(MAX_TEXT_CHARS + 1);
    const bullet = refusal(dataDir(editProducts((p) => (p.small_description = ['ok', long])))).error;
    expect(bullet.message).toMatch(/small_description\[1\]: a text of/);
    const option = refusal(dataDir(editProducts((p) => (p.customization_options = { Size: [{ value: long, image: null }] })))).error;
    expect(option.message).toMatch(/customization_options\.Size\[0\]\.value: a text of/);
    const attributes = JSON.parse(readFileSync(join(FIXTURES, NAMES.attributes), 'utf8')) as Record<string, Record<string, unknown>>;
    const asin = Object.keys(attributes)[0];
    attributes[asin].instruction = long;
    const instruction = refusal(dataDir((dir) => writeFileSync(join(dir, NAMES.attributes), JSON.stringify(attributes)))).error;
    expect(instruction.message).toContain(`[${asin}].instruction: a text of`);
    for (const e of [bullet, option, instruction]) expect(e.code).toBe('E_CONFIG');
  });

  it('a product with 7 options of 10 values (10^7 goals) is refused before any goal is built', () => {
    const options = Object.fromEntries(
      Array.from({ length: 7 }, (_, i) => [`Option ${i}`, Array.from({ length: 10 }, (_, j) => ({ value: `value ${j}`, image: null }))]),
    );
    const files = dataDir(editProducts((p) => (p.customization_options = options)));
    const heapBefore = process.memoryUsage().heapUsed;
    const { error, ms } = refusal(files);
    expect(error.code).toBe('E_CONFIG');
    expect(error.message).toContain(`more than the ${MAX_SYNTHETIC_GOALS} that are built`);
    expect(error.message).toContain('product B0TEA00001 alone has 7 options giving more than');
    expect(ms).toBeLessThan(5_000);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(200 * 2 ** 20);
  });

  it('a product with a few options of a few values still builds every combination as goal.py does', () => {
    const options = Object.fromEntries(
      Array.from({ length: 3 }, (_, i) => [`Option ${i}`, Array.from({ length: 4 }, (_, j) => ({ value: `value ${j}`, image: null }))]),
    );
    const files = dataDir(editProducts((p) => (p.customization_options = options)));
    const data = webShopData({ source: 'original', goals: 'synthetic', files, catalogSize: 0, catalogSeed: 0 });
    const first = data.goalBase.goals.filter((g) => g.product === 0);
    expect(first).toHaveLength(64);
    expect(new Set(first.map((g) => g.stem)).size).toBe(64);
    expect(first[1].stem).toMatch(/with option 0: value 0, and option 1: value 0, and option 2: value 1$/);
  });
});

describe('WebShop data JSON nesting is bounded', () => {
  it('an attributes file nested 100,000 deep is E_CONFIG naming it, not a stack overflow', () => {
    const files = dataDir((dir) => {
      const attributes = JSON.parse(readFileSync(join(FIXTURES, NAMES.attributes), 'utf8')) as Record<string, Record<string, unknown>>;
      attributes.B0TEA00001.attributes = 'NESTED';
      const text = JSON.stringify(attributes).replace('"NESTED"', `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
      writeFileSync(join(dir, NAMES.attributes), text);
    });
    const { error } = refusal(files);
    expect(error.code).toBe('E_CONFIG');
    expect(error.message).toMatch(/files\.attributes: .*items_ins_v2\.json nests arrays and objects more than 1000 deep/);
  });
});
