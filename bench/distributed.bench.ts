// Data parallelism on c10d Gloo (CPU). `distributed.scaling`: the iteration time of a small LaMer run (small preset,
// 8 tasks x 4 trials x 3 episodes, no warm start) in one process with one thread and with two, and on two ranks of one
// thread each at ZeRO stages 0 and 2, every variant run once a round in a rotated order over LAMER_BENCH_ROUNDS rounds
// (default 3), with medians, speedups and each 2-rank variant's bytes per rank (rank 0's iteration events).
// `distributed.allreduce`: the all-reduce bandwidth between two ranks (64 MiB of float64, bytes per rank divided by the
// time, the figure an optimizer step's gradient all-reduce sees). `distributed.zero-collectives`: the same for ZeRO's
// reduce-scatter and all-gather. `distributed.zero-bytes`: the optimizer's bytes per rank at stages 0, 1 and 2.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TORCHRUN_VARIABLES, freePort, localRankVariables } from '../src/cli/launch.js';
import type { IterationEvent } from '../src/train/events.js';
import type { Bench, BenchResult } from './run.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const child = join(root, 'bench', 'dist-child.ts');

/** Runs the child in n processes (n = 1: no process group) and waits for all. */
async function ranks(n: number, args: (rank: number) => string[], extra: NodeJS.ProcessEnv = {}): Promise<void> {
  const port = await freePort();
  await Promise.all(
    Array.from({ length: n }, (_, rank) => {
      const env: NodeJS.ProcessEnv = { ...process.env, LAMER_THREADS: '1', ...extra };
      if (n > 1) Object.assign(env, localRankVariables(rank, n, port));
      else for (const k of TORCHRUN_VARIABLES) delete env[k];
      const p = spawn(process.execPath, ['--import', 'tsx', child, ...args(rank)], { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      p.stderr.on('data', (d) => (err += d));
      return new Promise<void>((ok, fail) => p.on('close', (code) => (code === 0 ? ok() : fail(new Error(`bench child exited ${code}: ${err.slice(-1000)}`)))));
    }),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Runs of the small LaMer run per variant, taken in turn: round r runs the variants in an order rotated by r. */
const SCALING_VARIANTS = [
  { label: '1 process, 1 thread', n: 1, stage: '0', threads: '1' },
  { label: '1 process, 2 threads', n: 1, stage: '0', threads: '2' },
  { label: '2 ranks (1 thread each), ZeRO stage 0', n: 2, stage: '0', threads: '1' },
  { label: '2 ranks (1 thread each), ZeRO stage 2', n: 2, stage: '2', threads: '1' },
] as const;

/**
 * The small LaMer run in one process (one thread, then both cores' two) and on two ranks (ZeRO stage 0 and 2),
 * alternated: `LAMER_BENCH_ROUNDS` rounds (default 3), each running every variant once in a rotated order, so that
 * drift in the machine's speed falls on every variant alike. Per variant the median of its iterations after the first
 * over all rounds; per pair the ratio of those medians and the median of the per-round ratios (paired in time).
 */
async function scaling(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-dist-'));
  try {
    const rounds = Number(process.env.LAMER_BENCH_ROUNDS ?? 3);
    if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`LAMER_BENCH_ROUNDS: expected a positive integer, found ${process.env.LAMER_BENCH_ROUNDS}`);
    const V = SCALING_VARIANTS.length;
    // times[v][r]: the iteration times (after the first) of variant v in round r.
    const times: number[][][] = SCALING_VARIANTS.map(() => []);
    const memory: (IterationEvent['memory'] | undefined)[] = SCALING_VARIANTS.map(() => undefined);
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < V; i++) {
        const v = (round + i) % V;
        const { n, stage, threads } = SCALING_VARIANTS[v];
        const name = `r${round}-v${v}`;
        await ranks(n, (rank) => ['train', join(dir, `${name}-${rank}.json`), dir, name, stage], { LAMER_THREADS: threads });
        const events = JSON.parse(readFileSync(join(dir, `${name}-0.json`), 'utf8')) as IterationEvent[];
        times[v][round] = events.slice(1).map((e) => e.seconds);
        memory[v] = events.at(-1)?.memory;
        process.stderr.write(`  round ${round + 1}/${rounds}: ${SCALING_VARIANTS[v].label}: ${times[v][round].map((t) => t.toFixed(1)).join(', ')} s\n`);
      }
    }
    const all = (v: number) => times[v].flat();
    const rows: BenchResult[] = [];
    const MiB = 2 ** 20;
    SCALING_VARIANTS.forEach((variant, v) => {
      rows.push({ name: `distributed: small LaMer iteration, ${variant.label}`, value: median(all(v)), unit: 's' });
      const m = memory[v];
      if (m && variant.n === 2) {
        rows.push({ name: `distributed:   ${variant.label}: optimizer state per rank`, value: m.optimizerState / MiB, unit: 'MiB' });
        rows.push({ name: `distributed:   ${variant.label}: gradients per rank at the update`, value: m.gradients / MiB, unit: 'MiB' });
      }
    });
    const ratio = (a: number, b: number, what: string) => {
      rows.push({ name: `distributed: ${what} (ratio of medians)`, value: median(all(a)) / median(all(b)), unit: 'x' });
      const paired = times[a].map((ta, r) => median(ta) / median(times[b][r]));
      rows.push({ name: `distributed: ${what} (median of ${rounds} per-round ratios)`, value: median(paired), unit: 'x' });
    };
    ratio(0, 2, 'speedup, 2 ranks / 1 process with 1 thread');
    ratio(1, 2, 'speedup, 2 ranks / 1 process with 2 threads');
    ratio(3, 2, 'time, ZeRO stage 2 / stage 0 on 2 ranks');
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function allReduce(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-allreduce-'));
  try {
    const mib = 64;
    await ranks(2, (rank) => ['allreduce', join(dir, `ar-${rank}.json`), String(mib)]);
    const seconds = median(JSON.parse(readFileSync(join(dir, 'ar-0.json'), 'utf8')) as number[]);
    return [
      { name: 'distributed: all-reduce 64 MiB float64, 2 Gloo ranks', value: seconds * 1000, unit: 'ms' },
      { name: 'distributed: all-reduce bandwidth (bytes per rank / time)', value: (mib * 2 ** 20) / seconds / 1e9, unit: 'GB/s' },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bandwidth of ZeRO's collectives between 2 Gloo ranks: reduce-scatter and all-gather of 64 MiB of float64. */
async function zeroCollectives(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-zero-'));
  try {
    const MiB = 2 ** 20;
    const mib = 64;
    await ranks(2, (rank) => ['shards', join(dir, `sh-${rank}.json`), String(mib)]);
    const sh = JSON.parse(readFileSync(join(dir, 'sh-0.json'), 'utf8')) as { reduceScatter: number[]; allGather: number[] };
    return [
      { name: 'distributed: reduce-scatter 64 MiB float64 -> 32 MiB, 2 Gloo ranks', value: median(sh.reduceScatter) * 1000, unit: 'ms' },
      { name: 'distributed: reduce-scatter bandwidth (input bytes per rank / time)', value: (mib * MiB) / median(sh.reduceScatter) / 1e9, unit: 'GB/s' },
      { name: 'distributed: all-gather 32 MiB -> 64 MiB float64, 2 Gloo ranks', value: median(sh.allGather) * 1000, unit: 'ms' },
      { name: 'distributed: all-gather bandwidth (output bytes per rank / time)', value: (mib * MiB) / median(sh.allGather) / 1e9, unit: 'GB/s' },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Bytes per rank of one supervised step at ZeRO stages 0, 1, 2 on 2 ranks: the `small` preset and the Qwen3-0.6B
 * shape (float32 on the CPU). */
async function zeroBytes(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-zero-bytes-'));
  try {
    const MiB = 2 ** 20;
    const rows: BenchResult[] = [];
    for (const [shape, stages] of [
      ['small', ['0', '1', '2']],
      ['qwen3-0.6b', ['0', '1', '2']],
    ] as const) {
      for (const stage of stages) {
        await ranks(2, (rank) => ['bytes', join(dir, `b-${shape}-${stage}-${rank}.json`), shape, stage]);
        for (const rank of [0, 1]) {
          const m = JSON.parse(readFileSync(join(dir, `b-${shape}-${stage}-${rank}.json`), 'utf8')) as {
            optimizerState: number;
            gradients: number;
            parameters: number;
          };
          rows.push(
            { name: `distributed: ${shape}, 2 ranks, ZeRO ${stage}, rank ${rank}: AdamW state`, value: m.optimizerState / MiB, unit: 'MiB' },
            { name: `distributed: ${shape}, 2 ranks, ZeRO ${stage}, rank ${rank}: gradients at the update`, value: m.gradients / MiB, unit: 'MiB' },
          );
        }
      }
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benches: Bench[] = [
  { name: 'distributed.scaling', unit: 's', run: scaling },
  { name: 'distributed.allreduce', unit: 'GB/s', run: allReduce },
  { name: 'distributed.zero-collectives', unit: 'GB/s', run: zeroCollectives },
  { name: 'distributed.zero-bytes', unit: 'MiB', run: zeroBytes },
];
