// Compares WebShop's Lucene analysis (src/envs/webshop/search/analyzer.ts: StandardTokenizer, possessive filter,
// lower case, stop words, Porter stemmer) with Lucene itself (scripts/webshop/LuceneBm25.java on Debian's
// liblucene8-java) token by token, on a word list and on one probe per code point of four ranges.
//   apt-get install liblucene8-java wamerican
//   npx tsx scripts/webshop/analyzer-agreement.ts [--words /usr/share/dict/words]
// A word probe is the word alone; a code-point probe is `a<c>b <c>` (the character joined to letters and alone), for
// every code point of U+0020-U+33FF, U+A000-U+A4CF, U+F900-U+FFFF and U+1F000-U+1FAFF that this Node's Unicode tables
// assign and that is not a control character. Prints the counts and the first differences as JSON.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyze } from '../../src/envs/webshop/search/analyzer.js';

const args = process.argv.slice(2);
const i = args.indexOf('--words');
const wordsFile = i >= 0 ? args[i + 1] : '/usr/share/dict/words';

const RANGES: Array<[number, number]> = [
  [0x20, 0x33ff],
  [0xa000, 0xa4cf],
  [0xf900, 0xffff],
  [0x1f000, 0x1faff],
];
const words = [
  ...new Set(
    readFileSync(wordsFile, 'utf8')
      .split('\n')
      .map((w) => w.trim()),
  ),
].filter((w) => w.length > 0);
const codePoints = RANGES.flatMap(([lo, hi]) => Array.from({ length: hi - lo + 1 }, (_, k) => lo + k)).filter((c) =>
  /^[^\p{Cn}\p{Cc}\p{Cs}]$/u.test(String.fromCodePoint(c)),
);
const probes = [...words, ...codePoints.map((c) => `a${String.fromCodePoint(c)}b ${String.fromCodePoint(c)}`)];

const here = dirname(fileURLToPath(import.meta.url));
const classes = join(mkdtempSync(join(tmpdir(), 'lamer-lucene-')), 'classes');
mkdirSync(classes);
const cp = '/usr/share/java/*';
execFileSync('javac', ['-cp', cp, '-d', classes, join(here, 'LuceneBm25.java')]);
const escape = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\t/g, '\\t');
const lucene = execFileSync(
  'java',
  ['-Dfile.encoding=UTF-8', '-Dsun.stdout.encoding=UTF-8', '-Dstdout.encoding=UTF-8', '-cp', `${classes}:${cp}`, 'LuceneBm25', 'analyze'],
  {
    input: probes.map(escape).join('\n') + '\n',
    maxBuffer: 1 << 28,
  },
)
  .toString('utf8')
  .split('\n');

const differ = probes.flatMap((p, k) => {
  const ours = analyze(p).join(' ');
  return ours === lucene[k]
    ? []
    : [
        {
          probe: p,
          lucene: lucene[k],
          lamer: ours,
          codePoint: k >= words.length ? `U+${codePoints[k - words.length].toString(16).toUpperCase().padStart(4, '0')}` : undefined,
        },
      ];
});
const wordDiffer = differ.filter((d) => d.codePoint === undefined);
const pointDiffer = differ.filter((d) => d.codePoint !== undefined);
console.log(
  JSON.stringify(
    {
      words: { file: wordsFile, probes: words.length, identical: words.length - wordDiffer.length, first: wordDiffer.slice(0, 10) },
      codePoints: { probes: codePoints.length, identical: codePoints.length - pointDiffer.length, differing: pointDiffer.map((d) => d.codePoint) },
      unicode: process.versions.unicode,
    },
    null,
    2,
  ),
);
