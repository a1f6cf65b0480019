#!/usr/bin/env node
// Formats the sources (`npm run format`) or checks that they are formatted (`npm run format:check`, part of CI):
// Prettier over the TypeScript and JavaScript files (.prettierrc.json), clang-format over native/ and the CUDA test
// (.clang-format; the clang-format npm package's binary, so every machine formats alike). With --check nothing is
// written, and the exit status is 1 when a file would change, naming it.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const bin = (/** @type {string} */ name) => join(root, 'node_modules', '.bin', name);
const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && existsSync(join(root, f))); // a file deleted but not yet staged is still in the index
const native = tracked.filter((f) => /^(native|test)\/.*\.(cpp|h|cu|cuh)$/.test(f));
const script = tracked.filter((f) => /\.(ts|mjs|js)$/.test(f) && /^(src|test|bench|scripts|bin)\/|^[^/]+\.(ts|js)$/.test(f));

let failed = false;
const prettier = spawnSync(bin('prettier'), [check ? '--check' : '--write', '--log-level', check ? 'warn' : 'log', ...script], { cwd: root, stdio: 'inherit' });
if (prettier.status !== 0) failed = true;
const clang = spawnSync(bin('clang-format'), [check ? '--dry-run' : '-i', ...(check ? ['-Werror'] : []), '--style=file', ...native], {
  cwd: root,
  encoding: 'utf8',
});
if (clang.status !== 0) {
  failed = true;
  // One line per file that would change, rather than every differing line.
  const files = [...new Set([...clang.stderr.matchAll(/^([^:\n]+):\d+:\d+: (?:error|warning)/gm)].map((m) => m[1]))];
  console.error(files.length ? `clang-format: not formatted: ${files.join(', ')}` : clang.stderr);
}
if (failed && check) console.error('run `npm run format` to format them');
process.exit(failed ? 1 : 0);
