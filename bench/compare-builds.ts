// The engine's CPU generation in two builds of lamer, side by side: the `small` preset, 32 prompts of 128 tokens,
// 64 new tokens, greedy and temperature-1 sampling, each side run from its own tree (its TS and its addon, in a
// process of its own), alternated over rounds so that the machine's drift falls on both; medians, the median of the
// paired ratios, and whether the tokens agree.
//
//   git worktree add /tmp/old <commit> && (cd /tmp/old && ln -s "$PWD/node_modules" . && npm run build:native)
//   npx tsx bench/compare-builds.ts /tmp/old . [rounds]
//
// A tree is run with `npx tsx compare-builds.mts --side` (this file, copied into the run folder), so the two
// trees need only their src/ and their built addon.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

interface Side {
  greedy: number;
  sampled: number;
  greedyTokens: number[][];
  sampledTokens: number[][];
}

async function side(root: string, work: string): Promise<void> {
  const { Policy } = await import(join(root, 'src', 'model', 'policy.ts'));
  const { Engine } = await import(join(root, 'src', 'engine', 'index.ts'));
  const policy = await Policy.load(join(work, 'ckpt'));
  const prompts = JSON.parse(readFileSync(join(work, 'prompts.json'), 'utf8')) as number[][];
  const run = async (temperature: number): Promise<{ tps: number; tokens: number[][] }> => {
    const engine = new Engine(policy, { slots: prompts.length });
    const t0 = performance.now();
    const out = (await Promise.all(prompts.map((p, i) => engine.generate({ promptIds: p, maxNewTokens: 64, temperature, stopIds: [], seed: i })))) as {
      tokens: Int32Array;
    }[];
    const seconds = (performance.now() - t0) / 1000;
    engine.dispose();
    return { tps: (prompts.length * 64) / seconds, tokens: out.map((o) => Array.from(o.tokens)) };
  };
  await run(0); // warm-up
  const g = await run(0);
  const s = await run(1);
  const result: Side = { greedy: g.tps, sampled: s.tps, greedyTokens: g.tokens, sampledTokens: s.tokens };
  writeFileSync(join(work, 'side.json'), JSON.stringify(result));
  policy.dispose();
}

async function setup(work: string): Promise<void> {
  const { Policy } = await import('../src/model/policy.js');
  const { presetCheckpoint } = await import('../src/model/presets.js');
  const { config, assets } = await presetCheckpoint('small');
  const init = await Policy.init(config, { seed: 1, assets });
  await init.save(join(work, 'ckpt'));
  let s = 12;
  const r = (): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const V = init.config.vocabSize;
  writeFileSync(join(work, 'prompts.json'), JSON.stringify(Array.from({ length: 32 }, () => Array.from({ length: 128 }, () => 3 + Math.floor(r() * (V - 3))))));
  init.dispose();
}

const median = (xs: number[]): number => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};

if (process.argv[2] === '--side') {
  await side(resolve(process.argv[3]), process.argv[4]);
} else {
  const [a, b] = [process.argv[2], process.argv[3]].map((p) => (p ? resolve(p) : ''));
  const rounds = Number(process.argv[4] ?? 5);
  if (!a || !b || !(rounds >= 1)) {
    console.error('usage: npx tsx bench/compare-builds.ts TREE_A TREE_B [rounds]');
    process.exit(2);
  }
  const work = mkdtempSync(join(tmpdir(), 'lamer-compare-'));
  await setup(work);
  copyFileSync(new URL(import.meta.url).pathname, join(work, 'compare-builds.mts')); // .mts: an ES module outside the package
  const results: [Side[], Side[]] = [[], []];
  for (let i = 0; i < rounds; i++) {
    for (const k of i % 2 ? [1, 0] : [0, 1]) {
      const root = k ? b : a;
      execFileSync('npx', ['tsx', join(work, 'compare-builds.mts'), '--side', root, work], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
      results[k].push(JSON.parse(readFileSync(join(work, 'side.json'), 'utf8')) as Side);
    }
  }
  for (const key of ['greedy', 'sampled'] as const) {
    const [ra, rb] = [results[0].map((x) => x[key]), results[1].map((x) => x[key])];
    const paired = median(rb.map((x, i) => x / ra[i]));
    console.log(`${key}: A ${median(ra).toFixed(0)} tokens/s, B ${median(rb).toFixed(0)} tokens/s, paired B/A ${paired.toFixed(3)}`);
  }
  const same = (k: 'greedyTokens' | 'sampledTokens'): string => {
    const [x, y] = [results[0][0][k].flat(), results[1][0][k].flat()];
    return `${x.filter((t, i) => t === y[i]).length} of ${x.length}`;
  };
  console.log(`tokens equal: greedy ${same('greedyTokens')}, sampled ${same('sampledTokens')}`);
}
