#!/usr/bin/env node
// The cost of each trained method's iterations in run folders, from their metrics.jsonl: totals over the iterations
// of wall seconds (iteration, rollout, update), CPU seconds, rows and tokens, the update's computed tokens, and the
// rollout's prefix-cache reuse; then each method's iteration time against the first folder's gigpo. In a run of several
// data-parallel ranks (`ranks` > 1) the rows and tokens are the whole iteration's, but the cores, the computed tokens
// and the prefix-cache reuse are rank 0's alone (what its process measured).
//   node scripts/iteration-costs.mjs runs/default [runs/other ...]
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error('usage: node scripts/iteration-costs.mjs RUN_DIR [RUN_DIR ...]');
  process.exit(2);
}
/** @typedef {Record<string, number | undefined> & { type: string }} Event */
/** @type {(xs: Event[], f: (e: Event) => number | undefined) => number} */
const sum = (xs, f) => xs.reduce((a, x) => a + (f(x) ?? 0), 0);
/** @type {(x: number, d?: number) => string} */
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');
console.log(
  '| run | method | ranks | iterations | iteration s | rollout s | update s | rollout cores | update cores | rows | prompt tokens | generated | update tokens computed | prefix-cache reuse |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const dir of dirs) {
  const methods = readdirSync(dir).filter((m) => existsSync(join(dir, m, 'metrics.jsonl')));
  for (const m of methods) {
    const events = readFileSync(join(dir, m, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => /** @type {Event} */ (JSON.parse(l)))
      .filter((e) => e.type === 'iteration');
    if (events.length === 0) continue;
    const roll = sum(events, (e) => e.rolloutSeconds);
    const upd = sum(events, (e) => e.updateSeconds);
    const rollCpu = sum(events, (e) => e.rolloutCpuSeconds);
    const updCpu = sum(events, (e) => e.updateCpuSeconds);
    const reused = sum(events, (e) => e.promptTokensReused);
    const prefilled = sum(events, (e) => e.promptTokensPrefilled);
    const computed = events.every((e) => e.updateTokens !== undefined) ? sum(events, (e) => e.updateTokens) : NaN;
    const ranks = Math.max(...events.map((e) => e.worldSize ?? 1));
    console.log(
      `| ${dir} | ${m} | ${ranks} | ${events.length} | ${fmt(sum(events, (e) => e.seconds))} | ${fmt(roll)} | ${fmt(upd)} | ${fmt(rollCpu / roll, 2)} | ${fmt(updCpu / upd, 2)} | ` +
        `${sum(events, (e) => e.rows)} | ${sum(events, (e) => e.promptTokens)} | ${sum(events, (e) => e.tokens)} | ${Number.isFinite(computed) ? computed : '-'} | ` +
        `${reused + prefilled > 0 ? fmt((100 * reused) / (reused + prefilled)) + '%' : '-'} |`,
    );
  }
}

// Where the iterations' time went (runs of builds that record `breakdown`): each part's total seconds and share of
// the iterations' wall time, and the unaccounted rest, overall and at its worst iteration.
for (const dir of dirs) {
  for (const m of readdirSync(dir).filter((x) => existsSync(join(dir, x, 'metrics.jsonl')))) {
    const events = readFileSync(join(dir, m, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === 'iteration' && e.breakdown);
    if (events.length === 0) continue;
    const wall = sum(events, (e) => e.seconds);
    /** @type {Map<string, number>} */
    const parts = new Map();
    for (const e of events) for (const [k, v] of Object.entries(e.breakdown)) parts.set(k, (parts.get(k) ?? 0) + v);
    const worst = Math.max(...events.map((e) => Math.abs(e.breakdown.unaccounted ?? 0) / e.seconds));
    console.log(
      `\n${dir} ${m}: ${events.length} iterations, ${fmt(wall)} s; unaccounted ${fmt((100 * (parts.get('unaccounted') ?? 0)) / wall, 2)}% (worst iteration ${fmt(100 * worst, 2)}%)`,
    );
    console.log('| part | seconds | share |');
    console.log('|---|---|---|');
    for (const [k, v] of [...parts.entries()].sort((a, b) => b[1] - a[1])) console.log(`| ${k} | ${fmt(v, 2)} | ${fmt((100 * v) / wall)}% |`);
    const agreement = events.filter((e) => e.agreement).map((e) => e.agreement);
    if (agreement.length > 0) {
      const mean = (/** @type {string} */ k) => agreement.reduce((a, x) => a + x[k], 0) / agreement.length;
      console.log(
        `agreement over ${agreement.length} iterations: mean |diff| ${mean('meanAbs').toExponential(2)}, max |diff| ${Math.max(...agreement.map((x) => x.maxAbs)).toExponential(2)}, k3 ${mean('k3').toExponential(2)}`,
      );
    }
  }
}
