#!/usr/bin/env node
// The README's results table, read from run folders (the seeds of `lamer train --seeds`): per method the mean
// pass@1/2/3 over the seeds with the across-seed 95% t-interval of pass@3, then the first method against each other
// one, the across-seed mean difference of pass@3 and of the gain pass@1->3 with their t-intervals (SPEC §11), and
// the reflections the model wrote that name the mine it hit. The figures are `lamer compare`'s; this only lays them
// out as Markdown.
// usage: node scripts/results-table.mjs [--a METHOD ...] RUN_DIR...   (--a: the methods compared with the others;
// default the runs' first method)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { register } from 'tsx/esm/api';

register();
const { compareRuns } = await import('../src/eval/across-runs.ts');
const { readRunEvaluation } = await import('../src/cli/commands/compare.ts');
const { describeTaskSet } = await import('../src/eval/evaluate.ts');

const args = process.argv.slice(2);
/** @type {string[]} */
const as = [];
/** @type {string[]} */
const dirs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--a') as.push(args[++i]);
  else dirs.push(args[i]);
}
if (dirs.length === 0 || as.some((a) => !a)) {
  console.error('usage: node scripts/results-table.mjs [--a METHOD ...] RUN_DIR...');
  process.exit(2);
}
const runs = dirs.map(readRunEvaluation);
const c = compareRuns(runs);
// Pairs of every method named with --a against the methods after it (a pair is listed once).
const pairs = as.length === 0 ? c.pairs : [];
as.forEach((a, i) => {
  for (const p of compareRuns(runs, { a }).pairs) if (!as.slice(0, i).includes(p.b)) pairs.push(p);
});
const n = c.episodes;
const pct = (/** @type {number} */ x) => (100 * x).toFixed(1);
const signed = (/** @type {number} */ x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
const interval = (/** @type {{ mean: number, low: number, high: number } | undefined} */ i) =>
  i ? `${signed(i.mean)} (${signed(i.low)} to ${signed(i.high)})` : '-';
const level = (/** @type {{ mean: number, low: number, high: number } | undefined} */ i) => (i ? `${pct(i.mean)} (${pct(i.low)} to ${pct(i.high)})` : '-');
const seeds = c.runs.map((r) => r.seed ?? r.run).join(', ');

// Reflections right, summed over the seeds, for the methods that reflect: eval.json holds the evaluation events
// (EvalEvent), whose reflectionChecks readRunEvaluation keeps though its type does not name them.
/** @type {Map<string, import('../src/eval/evaluate.ts').ReflectionChecks>} */
const checks = new Map();
for (const r of runs) {
  for (const m of /** @type {ReadonlyArray<{ method: string, reflectionChecks?: import('../src/eval/evaluate.ts').ReflectionChecks }>} */ (r.results)) {
    if (!m.reflectionChecks) continue;
    const s = checks.get(m.method) ?? { checked: 0, correct: 0 };
    s.checked += m.reflectionChecks.checked;
    s.correct += m.reflectionChecks.correct;
    checks.set(m.method, s);
  }
}

// The environment and its options as each run's config.json records them (a CPU-scale variant names itself here).
const envs = new Set(
  dirs.map((d) => {
    const env = JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')).env;
    const options = Object.entries({ ...env.options, ...env.evalOptions }).map(([k, v]) => `${k} ${JSON.stringify(v)}`);
    return options.length > 0 ? `${env.name} (${options.join(', ')})` : env.name;
  }),
);
if (envs.size !== 1) {
  console.error(`results-table: the runs evaluate different environments or options: ${[...envs].join('; ')}`);
  process.exit(2);
}
// compareRuns refuses runs whose records name different task lists, so "the same tasks" is checked, not assumed.
console.log(
  `${c.runs.length} seeds (${seeds}) on ${[...envs][0]}, each scored on the same ${describeTaskSet(c.taskSet)} ` +
    `(task hash ${c.taskSet.hash.slice(0, 12)}); mean over the seeds, 95% t-interval on ${c.runs.length - 1} d.o.f.\n`,
);
console.log(`| method | pass@1 / pass@2 / pass@${n} | pass@${n} (95% CI over seeds) | reflections right |`);
console.log('|---|---|---|---|');
for (const m of c.methods) {
  const k = checks.get(m.method);
  const right = k ? `${k.correct} of ${k.checked} (${pct(k.correct / k.checked)}%)` : '';
  console.log(`| ${m.method} | ${m.mean.map(pct).join(' / ')} | ${level(m.passAtN)} | ${right} |`);
}
console.log(`\n| difference | pass@${n} (95% CI over seeds) | gain pass@1->${n} (95% CI over seeds) | per seed pass@${n} | per seed gain |`);
console.log('|---|---|---|---|---|');
for (const p of pairs) {
  const per = (/** @type {(c: import('../src/eval/compare.ts').PairedComparison) => { mean: number }} */ f) =>
    p.perRun.map((r) => signed(f(r.comparison).mean)).join(', ');
  console.log(`| ${p.a} - ${p.b} | ${interval(p.passAtN)} | ${interval(p.gain)} | ${per((x) => x.passAtN)} | ${per((x) => x.gain)} |`);
}
