// Starts child scripts as the ranks of one process group on localhost, with the variables torchrun sets.
import { spawn, type ChildProcess } from 'node:child_process';
import { TORCHRUN_VARIABLES, freePort, localRankVariables } from '../../../src/cli/launch.js';
import { root } from '../../helpers/index.js';

export interface RankResult {
  rank: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Milliseconds from the start to the exit. */
  ms: number;
  /** Date.now() at the exit. */
  endedAt: number;
}

export interface Ranks {
  children: ChildProcess[];
  done: Promise<RankResult[]>;
}

/** Runs `script args` once per rank (world size `n`), one thread each; `env` is added to every rank's variables. */
export async function startRanks(n: number, script: string, args: (rank: number) => string[], env: Record<string, string> = {}): Promise<Ranks> {
  const port = await freePort();
  const t0 = Date.now();
  const children = Array.from({ length: n }, (_, rank) =>
    spawn(process.execPath, ['--import', 'tsx', script, ...args(rank)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        LAMER_THREADS: '1',
        // A rank that fails early must not leave the others waiting for the default half hour.
        LAMER_DIST_TIMEOUT: '120',
        ...localRankVariables(rank, n, port),
        ...env,
      },
    }),
  );
  const done = Promise.all(
    children.map(
      (child, rank) =>
        new Promise<RankResult>((ok) => {
          let stdout = '';
          let stderr = '';
          child.stdout!.on('data', (d) => (stdout += d));
          child.stderr!.on('data', (d) => (stderr += d));
          child.on('close', (code, signal) => ok({ rank, code, signal, stdout, stderr, ms: Date.now() - t0, endedAt: Date.now() }));
        }),
    ),
  );
  return { children, done };
}

/** Runs `script args` as one process without any of torchrun's variables. */
export async function runSingle(script: string, args: string[], env: Record<string, string> = {}): Promise<RankResult> {
  const base: NodeJS.ProcessEnv = { ...process.env, LAMER_THREADS: '1', ...env };
  for (const k of TORCHRUN_VARIABLES) delete base[k];
  const t0 = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: base });
  return new Promise((ok) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('close', (code, signal) => ok({ rank: 0, code, signal, stdout, stderr, ms: Date.now() - t0, endedAt: Date.now() }));
  });
}
