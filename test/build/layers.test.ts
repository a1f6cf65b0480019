// The layers import downwards only: the model concern (Policy, tokenizer, chat template) is below the train concern,
// so no file under src/model may import from src/train. Read from the sources, so a new import that closes the cycle
// fails here rather than as a load-order bug. Inside ALFWorld the engine (src/envs/alfworld/engine) is below the game
// sources (games/), which are below the adapter (the files at the top); eslint.config.js checks the same order.
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
