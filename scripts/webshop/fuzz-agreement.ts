// Compares WebShop's token_set_ratio (src/envs/webshop/reward/fuzz.ts) with thefuzz itself on random pairs
// (test/fixtures/webshop/fuzz-pairs.ts), for the back end the installed thefuzz uses: thefuzz 0.19 without
// python-Levenshtein runs difflib (Debian's python3-thefuzz), thefuzz >= 0.20 runs rapidfuzz.
//   npx tsx scripts/webshop/fuzz-agreement.ts [--python /usr/bin/python3] [--count 3000] [--seed 7] [--write FILE]
// Prints the pairs compared and the differences as JSON; --write saves thefuzz's scores as the fixture the test reads
// (test/fixtures/webshop/fuzz-difflib.json for the difflib back end).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenSetRatio, type FuzzBackend } from '../../src/envs/webshop/reward/fuzz.js';
import { fuzzPairs } from '../../test/fixtures/webshop/fuzz-pairs.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const python = flag('--python', 'python3');
const count = Number(flag('--count', '3000'));
const seed = Number(flag('--seed', '7'));
const write = flag('--write', '');

const pairs = fuzzPairs(count, seed);
const out = execFileSync(python, [join(dirname(fileURLToPath(import.meta.url)), 'fuzz_reference.py')], {
  input: JSON.stringify(pairs),
  encoding: 'utf8',
  maxBuffer: 64 * 2 ** 20,
  stdio: ['pipe', 'pipe', 'ignore'],
});
const reference = JSON.parse(out) as { thefuzz: string; backend: string; python: string; scores: number[] };
if (reference.backend !== 'difflib' && reference.backend !== 'rapidfuzz') {
  console.error(
    `thefuzz ${reference.thefuzz} runs on ${reference.backend}, which lamer does not emulate: use thefuzz 0.19 without python-Levenshtein (difflib) or thefuzz >= 0.20 (rapidfuzz)`,
  );
  process.exit(2);
}
const backend = reference.backend as FuzzBackend;
const differences = pairs.flatMap(([a, b], i) => {
  const ours = tokenSetRatio(a, b, backend);
  return ours === reference.scores[i] ? [] : [{ i, a, b, thefuzz: reference.scores[i], lamer: ours }];
});
console.log(
  JSON.stringify(
    {
      reference: `thefuzz ${reference.thefuzz} (${backend}), Python ${reference.python}`,
      pairs: pairs.length,
      seed,
      differences: differences.length,
      first: differences.slice(0, 10),
    },
    null,
    2,
  ),
);
if (write !== '') {
  writeFileSync(
    write,
    JSON.stringify({ reference: `thefuzz ${reference.thefuzz} (${backend}), Python ${reference.python}`, backend, count, seed, scores: reference.scores }) +
      '\n',
  );
}
