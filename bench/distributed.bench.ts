// Data parallelism on c10d Gloo (CPU), measured side by side in one run: the iteration time of a small LaMer run
// (small preset, 8 tasks x 4 trials x 3 episodes, no warm start) in one process and in two processes, one torch
// thread each, alternating A and B over rounds (medians of the iterations after the first), with the speedup and the
// scaling efficiency (speedup / processes); and the all-reduce bandwidth between two ranks (64 MiB of float64, bytes
// per rank divided by the time, the figure an optimizer step's gradient all-reduce sees). ZeRO: the same run at
// stage 2 and at stage 0 on 2 ranks, and in 1 process with both cores, alternated, with each variant's bytes per rank
// (rank 0's iteration events); and the bandwidth of ZeRO's reduce-scatter and all-gather.
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

async function scaling(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-dist-'));
  try {
    const times: Record<1 | 2, number[]> = { 1: [], 2: [] };
    const rounds = 2;
    for (let round = 0; round < rounds; round++) {
      for (const n of round % 2 === 0 ? ([1, 2] as const) : ([2, 1] as const)) {
        const name = `r${round}-n${n}`;
        await ranks(n, (rank) => ['train', join(dir, `${name}-${rank}.json`), dir, name]);
        const events = JSON.parse(readFileSync(join(dir, `${name}-0.json`), 'utf8')) as IterationEvent[];
        times[n].push(...events.slice(1).map((e) => e.seconds));
      }
    }
    const one = median(times[1]);
    const two = median(times[2]);
    return [
      { name: 'distributed: small LaMer iteration, 1 process (1 thread)', value: one, unit: 's' },
      { name: 'distributed: small LaMer iteration, 2 processes (1 thread each)', value: two, unit: 's' },
      { name: 'distributed: speedup 2 processes / 1', value: one / two, unit: 'x' },
      { name: 'distributed: scaling efficiency (speedup / 2)', value: one / two / 2, unit: '' },
    ];
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

async function zero(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-zero-'));
  try {
    const variants = [
      { label: '2 ranks, ZeRO stage 0', n: 2, stage: '0', threads: '1' },
      { label: '2 ranks, ZeRO stage 2', n: 2, stage: '2', threads: '1' },
      { label: '1 process, 2 threads', n: 1, stage: '0', threads: '2' },
    ];
    // (the rounds alternate the order: 0, 2, 1 process; then the reverse)
    const times: number[][] = variants.map(() => []);
    const memory: (IterationEvent['memory'] | undefined)[] = variants.map(() => undefined);
    for (let round = 0; round < 2; round++) {
      const order = round % 2 === 0 ? [0, 1, 2] : [2, 1, 0];
      for (const v of order) {
        const { n, stage, threads } = variants[v];
        const name = `r${round}-v${v}`;
        await ranks(n, (rank) => ['train', join(dir, `${name}-${rank}.json`), dir, name, stage], { LAMER_THREADS: threads });
        const events = JSON.parse(readFileSync(join(dir, `${name}-0.json`), 'utf8')) as IterationEvent[];
        times[v].push(...events.slice(1).map((e) => e.seconds));
        memory[v] = events.at(-1)?.memory;
      }
    }
    const MiB = 2 ** 20;
    const rows: BenchResult[] = [];
    variants.forEach((v, i) => {
      rows.push({ name: `distributed: small LaMer iteration, ${v.label}`, value: median(times[i]), unit: 's' });
      const m = memory[i];
      if (m) {
        rows.push({ name: `distributed:   ${v.label}: optimizer state per rank`, value: m.optimizerState / MiB, unit: 'MiB' });
        rows.push({ name: `distributed:   ${v.label}: gradients per rank at the update`, value: m.gradients / MiB, unit: 'MiB' });
      }
    });
    rows.push({ name: 'distributed: ZeRO stage 2 / stage 0 iteration time (2 ranks)', value: median(times[1]) / median(times[0]), unit: 'x' });
    const mib = 64;
    await ranks(2, (rank) => ['shards', join(dir, `sh-${rank}.json`), String(mib)]);
    const sh = JSON.parse(readFileSync(join(dir, 'sh-0.json'), 'utf8')) as { reduceScatter: number[]; allGather: number[] };
    rows.push(
      { name: 'distributed: reduce-scatter 64 MiB float64 -> 32 MiB, 2 Gloo ranks', value: median(sh.reduceScatter) * 1000, unit: 'ms' },
      { name: 'distributed: reduce-scatter bandwidth (input bytes per rank / time)', value: (mib * MiB) / median(sh.reduceScatter) / 1e9, unit: 'GB/s' },
      { name: 'distributed: all-gather 32 MiB -> 64 MiB float64, 2 Gloo ranks', value: median(sh.allGather) * 1000, unit: 'ms' },
      { name: 'distributed: all-gather bandwidth (output bytes per rank / time)', value: (mib * MiB) / median(sh.allGather) / 1e9, unit: 'GB/s' },
    );
    return rows;
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
  { name: 'distributed.zero', unit: 's', run: zero },
  { name: 'distributed.zero-bytes', unit: 'MiB', run: zeroBytes },
];
