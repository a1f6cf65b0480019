// The layers import downwards only: the model concern (Policy, tokenizer, chat template) is below the train concern,
// so no file under src/model may import from src/train. Read from the sources, so a new import that closes the cycle
// fails here rather than as a load-order bug. Inside ALFWorld the engine (src/envs/alfworld/engine) is below the game
// sources (games/), which are below the adapter (the files at the top); inside WebShop the engine's folders data/ <
// search/ < reward/ < site/ are below its adapter, and of the other environment code the engine uses only the Python
// text forms (src/envs/common/python.ts). eslint.config.js checks the same order.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every `from '...'` / `import('...')` specifier of a file, resolved to a path relative to src/. */
function importsOf(file: string): string[] {
  const code = readFileSync(file, 'utf8');
  const specs = [...code.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.[^'"]+)['"]/g)].map((m) => m[1]);
  return specs.map((s) => relative(src, resolve(dirname(file), s)));
}

function importsInto(fromDir: string, intoDir: string): string[] {
  return tsFiles(join(src, fromDir)).flatMap((f) =>
    importsOf(f)
      .filter((target) => target === intoDir || target.startsWith(`${intoDir}/`))
      .map((target) => `${relative(src, f)} -> ${target}`),
  );
}

describe('layering', () => {
  it('src/model imports nothing from src/train', () => {
    expect(importsInto('model', 'train')).toEqual([]);
  });

  it('would see such an import (the train concern does import the model)', () => {
    expect(importsInto('train', 'model').length).toBeGreaterThan(0);
  });
});

/** Imports from files under `dir` into `env` (a folder under src/) outside the folders `allowed` of it. */
function importsOutside(dir: string, env: string, allowed: string[]): string[] {
  return tsFiles(join(src, env, dir)).flatMap((f) =>
    importsOf(f)
      .filter((target) => target.startsWith(`${env}/`) && !allowed.some((a) => target.startsWith(`${env}/${a}/`)))
      .map((target) => `${relative(src, f)} -> ${target}`),
  );
}

describe('layering inside ALFWorld: engine < games < adapter', () => {
  it('the engine imports nothing of the game sources or the adapter', () => {
    expect(importsOutside('engine', 'envs/alfworld', ['engine'])).toEqual([]);
  });

  it('the game sources import the engine, and nothing of the adapter', () => {
    expect(importsOutside('games', 'envs/alfworld', ['engine', 'games'])).toEqual([]);
    expect(importsOutside('games', 'envs/alfworld', ['games']).length).toBeGreaterThan(0);
  });
});

describe('layering inside WebShop: data < search < reward < site < adapter', () => {
  const floors = ['data', 'search', 'reward', 'site'];
  it('each engine folder imports only the folders below it, and nothing of the adapter', () => {
    for (const [i, floor] of floors.entries()) expect(importsOutside(floor, 'envs/webshop', floors.slice(0, i + 1)), floor).toEqual([]);
    // The check sees imports: the search, reward and site folders read the data folder's products.
    for (const floor of floors.slice(1)) expect(importsOutside(floor, 'envs/webshop', [floor]).length, floor).toBeGreaterThan(0);
  });

  it('the engine knows nothing of LaMer: of src/envs it imports only the Python text forms', () => {
    const outside = floors.flatMap((floor) =>
      tsFiles(join(src, 'envs/webshop', floor)).flatMap((f) =>
        importsOf(f)
          .filter((target) => target.startsWith('envs/') && !target.startsWith('envs/webshop/') && target !== 'envs/common/python.js')
          .map((target) => `${relative(src, f)} -> ${target}`),
      ),
    );
    expect(outside).toEqual([]);
    expect(importsInto('envs/webshop/site', 'envs/common').length).toBeGreaterThan(0);
  });
});
