#!/usr/bin/env node
// The README's results tables, read from run folders (the seeds of `lamer train --seeds`). The figures are `lamer
// compare`'s; this only lays them out as Markdown.
//
// One job's seeds: per method the mean pass@1/2/3 over the seeds with the across-seed 95% t-interval of pass@3, the
// reflections the environment could check and the right ones, the invalid actions (where the records count them) and
// WebShop's score@N (the mean best purchase score of the first N attempts, where the records hold it); then the first
// method against each other one, the across-seed mean difference of pass@3 and of the gain pass@1->3 with their
// t-intervals (SPEC §11). Where the records split the tasks into in- and out-of-distribution types
// (ALFWorld), also each method's pass@N on the ID and OOD lines with across-seed t-intervals, its mean pass@N on each
// task type (as the paper's ALFWorld table), and the differences of the pairs on the ID and OOD lines.
// usage: node scripts/results-table.mjs [--a METHOD ...] RUN_DIR...   (--a: the methods compared with the others;
// default the runs' first method)
//
// --claims: the paper's findings on MineSweeper (configs/minesweeper-findings.yaml), each as lamer's across-seed mean
// difference with its 95% t-interval and a verdict: holds (the interval excludes 0 on the paper's side), refuted (it
// excludes 0 on the other side) or inconclusive (it holds 0).
// usage: node scripts/results-table.mjs --claims RUN_DIR...
//
// --environments: one row per environment (the runs grouped by the environment and options their config.json
// records), the paper's LaMer - GiGPO pass@3 beside lamer's across its seeds, with the chance row.
// usage: node scripts/results-table.mjs --environments RUN_DIR...
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { register } from 'tsx/esm/api';

register();
const { compareRuns, runsInterval } = await import('../src/eval/across-runs.ts');
const { readRunEvaluation } = await import('../src/cli/commands/compare.ts');
const { describeTaskSet } = await import('../src/eval/evaluate.ts');
const { TASK_TYPES } = await import('../src/envs/alfworld/games/tasks.ts');

/**
 * The paper's Table (Qwen3-4B, N = 3): LaMer's and GiGPO's pass@3 per environment (arXiv 2512.16848). ALFWorld is
 * reported per task type there (out of distribution: Cool +23, Pick Two +14 over RL), with no pass@3 of its own.
 */
const PAPER = {
  sokoban: { lamer: 55.9, gigpo: 44.1 },
  minesweeper: { lamer: 74.4, gigpo: 55.1 },
  webshop: { lamer: 89.1, gigpo: 75.2 },
};

const args = process.argv.slice(2);
/** @type {string[]} */
const as = [];
/** @type {string[]} */
const dirs = [];
let environments = false;
let claims = false;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--a') as.push(args[++i]);
  else if (args[i] === '--environments') environments = true;
  else if (args[i] === '--claims') claims = true;
  else dirs.push(args[i]);
}
if (dirs.length === 0 || as.some((a) => !a) || ((environments || claims) && as.length > 0) || (environments && claims)) {
  console.error(
    'usage: node scripts/results-table.mjs [--a METHOD ...] RUN_DIR...\n       node scripts/results-table.mjs --environments RUN_DIR...\n' +
      '       node scripts/results-table.mjs --claims RUN_DIR...',
  );
  process.exit(2);
}

const pct = (/** @type {number} */ x) => (100 * x).toFixed(1);
const signed = (/** @type {number} */ x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
const interval = (/** @type {{ mean: number, low: number, high: number } | undefined} */ i) =>
  i ? `${signed(i.mean)} (${signed(i.low)} to ${signed(i.high)})` : '-';
const level = (/** @type {{ mean: number, low: number, high: number } | undefined} */ i) => (i ? `${pct(i.mean)} (${pct(i.low)} to ${pct(i.high)})` : '-');

/** The environment and its options as a run's config.json records them (a CPU-scale variant names itself here). */
function environmentOf(/** @type {string} */ dir) {
  const env = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).env;
  const options = Object.entries({ ...env.options, ...env.evalOptions }).map(([k, v]) => `${k} ${JSON.stringify(v)}`);
  return { name: /** @type {string} */ (env.name), label: options.length > 0 ? `${env.name} (${options.join(', ')})` : env.name };
}

if (claims) {
  const runs = dirs.map(readRunEvaluation);
  /** The across-seed pair of `a` against `b` (pass@N and gain), on a's tasks. */
  const pair = (/** @type {string} */ a, /** @type {string} */ b) => {
    const p = compareRuns(runs, { a }).pairs.find((x) => x.b === b);
    if (!p?.passAtN || !p.gain) throw new Error(`results-table --claims: no pair ${a} - ${b} in every run (two seeds at least)`);
    return { passAtN: p.passAtN, gain: p.gain };
  };
  /** A per-seed figure of a method's evaluation record (eval.json keeps the whole record). */
  const figure = (/** @type {string} */ method, /** @type {(m: any) => number} */ f) =>
    runs.map((r) => {
      const m = r.results.find((x) => x.method === method);
      if (!m) throw new Error(`results-table --claims: ${r.run} has no ${method}`);
      return f(m);
    });
  // A finding of the paper holds, is refuted or is inconclusive; a figure the paper does not claim (side 0) is above,
  // below or not told from 0.
  const decide = (/** @type {{ low: number, high: number }} */ i, /** @type {1 | 0 | -1} */ side) => {
    const sign = i.low > 0 ? 1 : i.high < 0 ? -1 : 0;
    if (side === 0) return sign > 0 ? 'above 0' : sign < 0 ? 'below 0' : 'not told from 0';
    return sign === 0 ? 'inconclusive' : sign === side ? 'holds' : 'refuted';
  };
  /** @type {Array<[string, string, { mean: number, low: number, high: number }, 1 | 0 | -1, (x: { mean: number, low: number, high: number }) => string]>} */
  const rows = [
    ['LaMer vs GiGPO (pass@3)', 'LaMer ahead (MineSweeper 74.4 vs 55.1)', pair('lamer', 'gigpo').passAtN, 1, interval],
    ['test-time scaling: gain pass@1->3, LaMer vs GiGPO', 'far larger for LaMer', pair('lamer', 'gigpo').gain, 1, interval],
    ['memory: reflections only vs trajectories only', 'reflections only ahead (80.5 vs 69.5)', pair('lamer', 'lamer-history').passAtN, 1, interval],
    ['memory: reflections only vs both', 'reflections only ahead (80.5 vs 74.4)', pair('lamer', 'lamer-both').passAtN, 1, interval],
    ['gamma_traj 0.9 vs 0.6', 'MineSweeper prefers 0.9', pair('lamer', 'lamer-g06').passAtN, 1, interval],
    ['cross-episode credit: gamma_traj 0.9 vs 0', 'the cross-episode return is the mechanism', pair('lamer', 'lamer-traj0').passAtN, 1, interval],
    [
      'training vs protocol: LaMer vs GiGPO with reflections (gigpo+reflect)',
      'meta-RL training adds to test-time reflection',
      pair('lamer', 'gigpo+reflect').passAtN,
      1,
      interval,
    ],
    ['what the protocol adds: gigpo+reflect vs GiGPO', 'not in the paper (the control)', pair('gigpo+reflect', 'gigpo').passAtN, 0, interval],
    ['harder boards (5 mines): LaMer vs GiGPO', 'LaMer keeps a 5-10 point lead', pair('lamer-hard', 'gigpo-hard').passAtN, 1, interval],
  ];
  // Diversity: the attempts' entropy (bits) and how often an attempt repeats the last action of the failed one before.
  const bitsOf = (/** @type {string} */ method) => figure(method, (m) => m.diversity.meanEntropyBits);
  const entropy = (/** @type {string} */ b) => runsInterval(bitsOf('lamer').map((x, i) => x - bitsOf(b)[i]));
  const repeat = (/** @type {string} */ method) => figure(method, (m) => m.diversity.repeatedEnd / m.diversity.afterFailure);
  const repeats = (/** @type {string} */ b) => runsInterval(repeat('lamer').map((x, i) => x - repeat(b)[i]));
  const bits = (/** @type {{ mean: number, low: number, high: number }} */ i) =>
    `${i.mean >= 0 ? '+' : ''}${i.mean.toFixed(2)} (${i.low >= 0 ? '+' : ''}${i.low.toFixed(2)} to ${i.high >= 0 ? '+' : ''}${i.high.toFixed(2)}) bits`;
  rows.push(['diversity: entropy of the attempts, LaMer vs GiGPO', 'meta-RL explores more diversely', entropy('gigpo'), 1, bits]);
  rows.push(['diversity in the same trial: LaMer vs gigpo+reflect', 'meta-RL explores more diversely', entropy('gigpo+reflect'), 1, bits]);
  rows.push(["use of what failed: attempts repeating the failed attempt's last action, LaMer vs GiGPO", 'not in the paper', repeats('gigpo'), 0, interval]);
  rows.push(['the same in the same trial: LaMer vs gigpo+reflect', 'not in the paper', repeats('gigpo+reflect'), 0, interval]);
  const first = runs[0].results.find((m) => m.method === 'lamer');
  const hard = runs[0].results.find((m) => m.method === 'lamer-hard');
  console.log(
    `${runs.length} seeds (${runs.map((r) => r.seed ?? r.run).join(', ')}), each scored on ${first?.taskSet ? describeTaskSet(first.taskSet) : '?'}` +
      `${hard?.taskSet ? ` (the harder boards, 5 mines instead of 3: the same indices, task hash ${hard.taskSet.hash.slice(0, 12)})` : ''}; across-seed mean difference, 95% t-interval on ${runs.length - 1} d.o.f.\n`,
  );
  console.log('| finding | the paper | lamer: difference (95% CI over seeds) | at this scale |');
  console.log('|---|---|---|---|');
  for (const [name, paper, i, side, show] of rows) console.log(`| ${name} | ${paper} | ${show(i)} | ${decide(i, side)} |`);
  process.exit(0);
}

if (environments) {
  /** @type {Map<string, { name: string, dirs: string[] }>} */
  const groups = new Map();
  for (const d of dirs) {
    const e = environmentOf(d);
    const g = groups.get(e.label) ?? { name: e.name, dirs: [] };
    g.dirs.push(d);
    groups.set(e.label, g);
  }
  console.log(
    "| environment (lamer's task) | paper: LaMer / GiGPO pass@3, difference | lamer: LaMer / GiGPO / random pass@3 | lamer: LaMer - GiGPO pass@3 (95% CI over seeds) | gain pass@1->3 (95% CI over seeds) | seeds, tasks |",
  );
  console.log('|---|---|---|---|---|---|');
  for (const [label, g] of groups) {
    const runs = g.dirs.map(readRunEvaluation);
    const c = compareRuns(runs, { a: 'lamer' });
    const p = c.pairs.find((x) => x.b === 'gigpo');
    // Mean pass@N over the seeds.
    const mean = (/** @type {string} */ m) => c.methods.find((x) => x.method === m)?.mean.at(-1);
    const [l, gi, r] = ['lamer', 'gigpo', 'random'].map(mean);
    const paper = PAPER[/** @type {keyof typeof PAPER} */ (g.name)];
    const paperCell = paper ? `${paper.lamer} / ${paper.gigpo}, ${signed((paper.lamer - paper.gigpo) / 100)}` : 'per task type';
    const ours = [l, gi, r].map((x) => (x === undefined ? '-' : pct(x))).join(' / ');
    const seeds = c.runs.map((x) => x.seed ?? x.run).join(', ');
    console.log(`| ${label} | ${paperCell} | ${ours} | ${interval(p?.passAtN)} | ${interval(p?.gain)} | ${seeds}; ${describeTaskSet(c.taskSet)} |`);
  }
  process.exit(0);
}

const runs = dirs.map(readRunEvaluation);
const c = compareRuns(runs);
// Pairs of every method named with --a against the methods after it (a pair is listed once).
const pairs = as.length === 0 ? c.pairs : [];
as.forEach((a, i) => {
  for (const p of compareRuns(runs, { a }).pairs) if (!as.slice(0, i).includes(p.b)) pairs.push(p);
});
const n = c.episodes;
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

// Invalid actions, summed over the seeds, where the records count them (TurnCounts in each evaluation event).
/** @type {Map<string, { played: number, invalid: number }>} */
const turns = new Map();
for (const r of runs) {
  for (const m of /** @type {ReadonlyArray<{ method: string, turns?: { played: number, invalid: number } }>} */ (r.results)) {
    if (!m.turns) continue;
    const s = turns.get(m.method) ?? { played: 0, invalid: 0 };
    s.played += m.turns.played;
    s.invalid += m.turns.invalid;
    turns.set(m.method, s);
  }
}

// Where the environment scores episodes (WebShop), each seed's score@N per method (scoreAtK in each evaluation event).
/** @type {Map<string, number[]>} */
const scores = new Map();
for (const r of runs) {
  for (const m of /** @type {ReadonlyArray<{ method: string, scoreAtK?: number[] }>} */ (r.results)) {
    if (m.scoreAtK) scores.set(m.method, [...(scores.get(m.method) ?? []), /** @type {number} */ (m.scoreAtK.at(-1))]);
  }
}

const envs = new Set(dirs.map((d) => environmentOf(d).label));
if (envs.size !== 1) {
  console.error(`results-table: the runs evaluate different environments or options: ${[...envs].join('; ')}`);
  process.exit(2);
}
// compareRuns refuses runs whose records name different task lists, so "the same tasks" is checked, not assumed.
console.log(
  `${c.runs.length} seeds (${seeds}) on ${[...envs][0]}, each scored on the same ${describeTaskSet(c.taskSet)} ` +
    `(task hash ${c.taskSet.hash.slice(0, 12)}); mean over the seeds, 95% t-interval on ${c.runs.length - 1} d.o.f.\n`,
);
// The invalid-actions column appears where the records count them (records of earlier builds do not).
const withTurns = turns.size > 0;
// The score column appears where every seed's records score the episodes.
const withScores = scores.size > 0 && [...scores.values()].every((v) => v.length === c.runs.length);
console.log(
  `| method | pass@1 / pass@2 / pass@${n} | pass@${n} (95% CI over seeds) |${withScores ? ` score@${n} (95% CI over seeds) |` : ''} reflections right |` +
    `${withTurns ? ' invalid actions |' : ''}`,
);
console.log(`|---|---|---|---|${withScores ? '---|' : ''}${withTurns ? '---|' : ''}`);
for (const m of c.methods) {
  const k = checks.get(m.method);
  const right = k ? `${k.correct} of ${k.checked} (${pct(k.correct / k.checked)}%)` : '';
  const t = turns.get(m.method);
  const invalid = withTurns ? ` ${t ? `${t.invalid} of ${t.played} (${pct(t.played > 0 ? t.invalid / t.played : 0)}%)` : ''} |` : '';
  const v = scores.get(m.method);
  const score = withScores ? ` ${v === undefined ? '' : v.length >= 2 ? level(runsInterval(v)) : pct(v[0])} |` : '';
  console.log(`| ${m.method} | ${m.mean.map(pct).join(' / ')} | ${level(m.passAtN)} |${score} ${right} |${invalid}`);
}
console.log(`\n| difference | pass@${n} (95% CI over seeds) | gain pass@1->${n} (95% CI over seeds) | per seed pass@${n} | per seed gain |`);
console.log('|---|---|---|---|---|');
for (const p of pairs) {
  const per = (/** @type {(c: import('../src/eval/compare.ts').PairedComparison) => { mean: number }} */ f) =>
    p.perRun.map((r) => signed(f(r.comparison).mean)).join(', ');
  console.log(`| ${p.a} - ${p.b} | ${interval(p.passAtN)} | ${interval(p.gain)} | ${per((x) => x.passAtN)} | ${per((x) => x.gain)} |`);
}

// In- and out-of-distribution task types, where every record splits them (bySplit in each evaluation event).
/** @type {(r: { results: ReadonlyArray<unknown> }, method: string) => { bySplit?: Record<string, number[]>, byType?: Record<string, number[]>, tasksByType?: Record<string, number>, typeSplits?: Record<string, string> } | undefined} */
const record = (r, method) => /** @type {any} */ (r.results).find((/** @type {{ method: string }} */ x) => x.method === method);
const splits = ['ID', 'OOD'].filter((s) => runs.every((r) => c.methods.every((m) => record(r, m.method)?.bySplit?.[s] !== undefined)));
if (splits.length > 0) {
  // One seed gives its value alone, without an interval.
  const atLevel = (/** @type {number[]} */ v) => (v.length >= 2 ? level(runsInterval(v)) : pct(v[0]));
  const difference = (/** @type {number[]} */ v) => (v.length >= 2 ? interval(runsInterval(v)) : signed(v[0]));
  const first = record(runs[0], c.methods[0].method);
  const tasksOf = (/** @type {string} */ s) =>
    Object.entries(first?.typeSplits ?? {})
      .filter(([, v]) => v === s)
      .reduce((n, [t]) => n + (first?.tasksByType?.[t] ?? 0), 0);
  console.log(`\n| method | ${splits.map((s) => `${s} pass@${n} (95% CI over seeds; ${tasksOf(s)} tasks)`).join(' | ')} |`);
  console.log(`|---|${splits.map(() => '---|').join('')}`);
  for (const m of c.methods) {
    const cells = splits.map((s) => atLevel(runs.map((r) => record(r, m.method)?.bySplit?.[s]?.at(-1) ?? 0)));
    console.log(`| ${m.method} | ${cells.join(' | ')} |`);
  }
  // Per task type, as the paper's ALFWorld table lays them out: each split's types after it, mean pass@N over the seeds.
  /** @type {readonly string[]} */
  const typeOrder = TASK_TYPES;
  const types = splits.flatMap((s) =>
    Object.keys(first?.typeSplits ?? {})
      .filter((t) => first?.typeSplits?.[t] === s)
      .sort((x, y) => typeOrder.indexOf(x) - typeOrder.indexOf(y)),
  );
  if (types.length > 0) {
    console.log(
      `\n| method (mean pass@${n} over seeds) | ${types.map((t) => `${t} (${first?.typeSplits?.[t]}, ${first?.tasksByType?.[t] ?? 0})`).join(' | ')} |`,
    );
    console.log(`|---|${types.map(() => '---|').join('')}`);
    for (const m of c.methods) {
      const cells = types.map((t) => pct(runs.reduce((sum, r) => sum + (record(r, m.method)?.byType?.[t]?.at(-1) ?? 0), 0) / runs.length));
      console.log(`| ${m.method} | ${cells.join(' | ')} |`);
    }
  }
  console.log(`\n| difference | ${splits.map((s) => `${s} pass@${n} (95% CI over seeds)`).join(' | ')} |`);
  console.log(`|---|${splits.map(() => '---|').join('')}`);
  for (const p of pairs) {
    const cells = splits.map((s) => difference(runs.map((r) => (record(r, p.a)?.bySplit?.[s]?.at(-1) ?? 0) - (record(r, p.b)?.bySplit?.[s]?.at(-1) ?? 0))));
    console.log(`| ${p.a} - ${p.b} | ${cells.join(' | ')} |`);
  }
}
