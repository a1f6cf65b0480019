// Measures how closely the WebShop search (src/envs/webshop/search/bm25.ts) agrees with Lucene itself on a query set:
// the documents of a catalog (the generated one by default, or original files) are indexed by both, the queries run
// through both, and the rankings compared (top-10 overlap, identical top-10 order, identical top-50, identical float
// scores). Lucene runs through scripts/webshop/LuceneBm25.java, on Debian's liblucene8-java:
//   apt-get install liblucene8-java
//   npx tsx bench/webshop-search-agreement.ts [--products items_shuffle_1000.json --attributes items_ins_v2_1000.json]
//   npx tsx bench/webshop-search-agreement.ts --texts docs.json --queries queries.json
// The second form indexes any JSON list of texts and runs the queries of a JSON list, or of a {text: [queries]} map
// (princeton-nlp/WebShop's baseline_models/data/human_goals.json and goal_query_map.json: real shoppers' requests and
// the queries people typed for them).
// Prints the figures as JSON; docs/webshop-data.md reports them.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '../src/util/rng.js';
import { analyze } from '../src/envs/webshop/search/analyzer.js';
import { webShopData } from '../src/envs/webshop/loader.js';
import { drawGoalSet, goalAt } from '../src/envs/webshop/data/pipeline.js';
import { Bm25Index, productDocument } from '../src/envs/webshop/search/bm25.js';
import { searchQueryFor } from '../src/envs/webshop/expert.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const products = flag('--products');
const attributes = flag('--attributes');
const textsPath = flag('--texts');
const queriesPath = flag('--queries');

let documents: Array<{ id: string; contents: string }>;
let index: Bm25Index;
let catalog: string;
const queries: Array<{ kind: string; text: string }> = [];
const rng = new Rng(2024);
if (textsPath !== undefined && queriesPath !== undefined) {
  const texts = JSON.parse(readFileSync(textsPath, 'utf8')) as string[];
  documents = texts.map((t, i) => ({ id: `D${String(i).padStart(6, '0')}`, contents: t.toLowerCase() }));
  index = new Bm25Index(documents);
  const raw = JSON.parse(readFileSync(queriesPath, 'utf8')) as string[] | Record<string, string[]>;
  const list = Array.isArray(raw) ? raw : Object.values(raw).flat();
  for (const text of list) queries.push({ kind: 'typed', text });
  catalog = `${textsPath} (${documents.length} texts), queries ${queriesPath}`;
} else {
  const data = webShopData(
    products !== undefined && attributes !== undefined
      ? { source: 'original', goals: 'synthetic', files: { products, attributes }, catalogSize: 0, catalogSeed: 0 }
      : { source: 'generated', goals: 'synthetic', catalogSize: 1000, catalogSeed: 0 },
  );
  documents = data.products.map((p) => ({ id: p.asin, contents: productDocument(p) }));
  index = data.search;
  catalog = products ?? 'generated (1000 products, seed 0)';
  // The query set: what a shopper types (request words), product titles, bags of catalog words, and edge cases.
  const set = drawGoalSet(data.products, data.goalBase, 0);
  for (let i = 0; i < 300; i++) queries.push({ kind: 'request', text: searchQueryFor(goalAt(set, data.products, rng.int(set.order.length))) });
  for (let i = 0; i < 100; i++) queries.push({ kind: 'title', text: data.products[rng.int(data.products.length)].name.toLowerCase() });
}
const vocabulary = [...new Set(documents.flatMap((d) => d.contents.split(/\s+/)))].filter((w) => w.length > 0);
for (let i = 0; i < 200; i++) {
  const words = Array.from({ length: 1 + rng.int(5) }, () => rng.pick(vocabulary));
  queries.push({ kind: 'words', text: words.join(' ') });
}
for (const text of [
  'the and of',
  "men's shoes shoes shoes",
  'x-large navy/blue t-shirt',
  "l'eau d'issey 6.76 fl oz",
  'size: large, color: black',
  'jeans jeans',
  '100% cotton',
  'u.s.a made',
  'ä ö ü',
  '',
]) {
  queries.push({ kind: 'edge', text });
}

const work = mkdtempSync(join(tmpdir(), 'lamer-lucene-'));
const classes = join(work, 'classes');
mkdirSync(classes);
const escape = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\t/g, '\\t');
writeFileSync(join(work, 'docs.tsv'), documents.map((d) => `${d.id}\t${escape(d.contents)}`).join('\n') + '\n');
writeFileSync(join(work, 'queries.txt'), queries.map((q) => q.text.replace(/\n/g, ' ')).join('\n') + '\n');
const cp = '/usr/share/java/*';
execFileSync('javac', ['-cp', cp, '-d', classes, join(here, '..', 'scripts', 'webshop', 'LuceneBm25.java')]);
const lucene = execFileSync('java', ['-cp', `${classes}:${cp}`, 'LuceneBm25', 'search', join(work, 'docs.tsv'), join(work, 'queries.txt')], {
  maxBuffer: 1 << 28,
})
  .toString('utf8')
  .split('\n')
  .slice(0, queries.length)
  .map((line) =>
    line === '' ? [] : line.split(' ').map((hit) => ({ id: hit.slice(0, hit.lastIndexOf(':')), score: Number(hit.slice(hit.lastIndexOf(':') + 1)) })),
  );

const byKind = new Map<string, { queries: number; overlap10: number; sameTop10: number; sameTop50: number; sameScores: number }>();
const differences: Array<{ query: string; lucene: string[]; ours: string[] }> = [];
queries.forEach((q, i) => {
  const ours = index.scored(q.text, 50).map((h) => ({ id: documents[h.doc].id, score: h.score }));
  const ref = lucene[i];
  const top = (xs: Array<{ id: string }>, k: number) => xs.slice(0, k).map((x) => x.id);
  const a10 = top(ours, 10);
  const b10 = top(ref, 10);
  const overlap = b10.length === 0 ? (a10.length === 0 ? 1 : 0) : a10.filter((id) => b10.includes(id)).length / b10.length;
  const s = byKind.get(q.kind) ?? { queries: 0, overlap10: 0, sameTop10: 0, sameTop50: 0, sameScores: 0 };
  s.queries++;
  s.overlap10 += overlap;
  if (a10.join() === b10.join()) s.sameTop10++;
  else differences.push({ query: q.text, lucene: b10, ours: a10 });
  if (top(ours, 50).join() === top(ref, 50).join()) s.sameTop50++;
  if (ours.length === ref.length && ours.every((h, j) => h.id === ref[j].id && Math.fround(h.score) === Math.fround(ref[j].score))) s.sameScores++;
  byKind.set(q.kind, s);
});
const total = { queries: 0, overlap10: 0, sameTop10: 0, sameTop50: 0, sameScores: 0 };
for (const s of byKind.values()) for (const k of Object.keys(total) as Array<keyof typeof total>) total[k] += s[k];
const summary = (s: typeof total) => ({
  queries: s.queries,
  meanOverlapAt10: +(s.overlap10 / s.queries).toFixed(4),
  identicalTop10: s.sameTop10,
  identicalTop50: s.sameTop50,
  identicalScores: s.sameScores,
});
console.log(
  JSON.stringify(
    {
      reference:
        'Lucene 8.7.0 (Debian liblucene8-java): StandardTokenizer, EnglishPossessiveFilter, LowerCaseFilter, English stop set, PorterStemFilter; BM25(0.9, 0.4)',
      catalog,
      documents: documents.length,
      distinctTerms: new Set(documents.flatMap((d) => analyze(d.contents))).size,
      all: summary(total),
      byKind: Object.fromEntries([...byKind].map(([k, s]) => [k, summary(s)])),
      differences: differences.slice(0, 10),
    },
    null,
    2,
  ),
);
