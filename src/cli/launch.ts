// `lamer train --nproc N`: starts N local processes of the same command as the ranks of one process group, with the
// variables torchrun would set (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), for users
// without Python. Signals are passed on; when a rank fails, the others are stopped (SIGTERM: they save what
// completed), and the launcher exits with the first failure's status.
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { createServer } from 'node:net';

/** The variables torchrun sets for a process of a group. */
export const TORCHRUN_VARIABLES = ['RANK', 'LOCAL_RANK', 'WORLD_SIZE', 'LOCAL_WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT'] as const;

/** torchrun's variables for rank `rank` of `n` processes on this machine, meeting at 127.0.0.1:port. */
export function localRankVariables(rank: number, n: number, port: number): Record<(typeof TORCHRUN_VARIABLES)[number], string> {
  return {
    RANK: String(rank),
    LOCAL_RANK: String(rank),
    WORLD_SIZE: String(n),
    LOCAL_WORLD_SIZE: String(n),
    MASTER_ADDR: '127.0.0.1',
    MASTER_PORT: String(port),
  };
}

/** A TCP port of 127.0.0.1 that is free at the time of the call. */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => ok(port));
    });
  });
}

/** Runs `lamer <args>` in n processes; resolves with the exit status the launcher should return. */
export async function launchLocalRanks(n: number, args: readonly string[]): Promise<number> {
  const port = process.env.MASTER_PORT ? Number(process.env.MASTER_PORT) : await freePort();
  // Each rank's torch threads: the cores shared out, unless the user chose (LAMER_THREADS).
  const threads = process.env.LAMER_THREADS ?? String(Math.max(1, Math.floor(availableParallelism() / n)));
  const entry = process.argv[1];
  console.error(`[launch] ${n} processes on 127.0.0.1:${port}, ${threads} thread(s) each; rank 0 prints and writes the run folder`);
  const children: ChildProcess[] = [];
  let firstFailure: number | undefined;
  // A signal passed on to the ranks: their exits (130, 143) are the interruption, not a failure to report.
  let interrupted = false;
  const exits = Array.from({ length: n }, (_, rank) => {
    const child = spawn(process.execPath, [...process.execArgv, entry, ...args], {
      stdio: rank === 0 ? 'inherit' : ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...localRankVariables(rank, n, port), LAMER_THREADS: threads },
      // A process group of its own: a terminal's Ctrl-C reaches the launcher alone, which passes it on once (a rank
      // signalled twice would quit at once instead of saving what completed).
      detached: true,
    });
    children.push(child);
    // Other ranks are silent unless they fail: their last words are kept for the error.
    let tail = '';
    child.stderr?.on('data', (d: Buffer) => {
      tail = (tail + d.toString()).slice(-4000);
    });
    return new Promise<number>((ok) => {
      child.on('close', (code, signal) => {
        const status = exitStatus(code, signal);
        if (status !== 0 && firstFailure === undefined) {
          firstFailure = status;
          if (interrupted) return ok(status);
          if (rank !== 0 && tail.trim()) console.error(`[launch] rank ${rank} exited with status ${status}:\n${tail.trim()}`);
          else if (rank !== 0) console.error(`[launch] rank ${rank} exited with status ${status}`);
          for (const other of children) if (other !== child && other.exitCode === null) other.kill('SIGTERM');
        }
        ok(status);
      });
    });
  });
  const stopPassing = passSignalsOn((signal) => {
    interrupted = true;
    for (const child of children) if (child.exitCode === null) child.kill(signal);
  });
  try {
    const statuses = await Promise.all(exits);
    return firstFailure ?? statuses.find((s) => s !== 0) ?? 0;
  } finally {
    stopPassing();
  }
}

/** A child's exit as a shell reports it: its code, or 128 + the signal's number for SIGINT and SIGTERM (else 1). */
function exitStatus(code: number | null, signal: NodeJS.Signals | null): number {
  return code ?? (signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 1);
}

/**
 * Passes SIGINT and SIGTERM on to `forward` while a launcher's children run (they run in process groups of their own,
 * so nothing else signals them), and a closed terminal's SIGHUP as SIGTERM; returns the function that stops it.
 */
function passSignalsOn(forward: (signal: NodeJS.Signals) => void): () => void {
  const onInt = () => forward('SIGINT');
  const onTerm = () => forward('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  process.on('SIGHUP', onTerm);
  return () => {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    process.off('SIGHUP', onTerm);
  };
}

/**
 * `lamer train --seeds LIST --jobs N`: runs `lamer <argsFor(seed)>` for every seed, at most n processes at once, each
 * line they print passed on with `[seed S] ` before it (stdout to stdout, stderr to stderr). The processes keep the
 * thread count a lone run takes (the machine's cores, or LAMER_THREADS), so each seed computes what it computes when the
 * seeds run one after another. Signals are passed on; when a seed fails, the others are stopped (SIGTERM: they save
 * what completed) and no further seed starts. Resolves with the first failure's status, or 0.
 */
export async function launchSeeds(seeds: readonly number[], n: number, argsFor: (seed: number) => string[]): Promise<number> {
  const entry = process.argv[1];
  const running = new Map<number, ChildProcess>();
  let next = 0;
  let firstFailure: number | undefined;
  let interrupted = false;
  const start = (seed: number) =>
    new Promise<number>((ok) => {
      const child = spawn(process.execPath, [...process.execArgv, entry, ...argsFor(seed)], {
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group, as the ranks of launchLocalRanks: a signal reaches each seed once, from here.
        detached: true,
      });
      running.set(seed, child);
      for (const [from, to] of [
        [child.stdout!, process.stdout],
        [child.stderr!, process.stderr],
      ] as const) {
        // Lines as they come; a progress bar's carriage returns end a line too (a pipe shows no bar).
        let pending = '';
        from.on('data', (d: Buffer) => {
          const parts = (pending + d.toString()).split(/\r?\n|\r/);
          pending = parts.pop()!;
          for (const line of parts) to.write(`[seed ${seed}] ${line}\n`);
        });
        from.on('end', () => {
          if (pending) to.write(`[seed ${seed}] ${pending}\n`);
        });
      }
      child.on('close', (code, signal) => {
        running.delete(seed);
        const status = exitStatus(code, signal);
        if (status !== 0 && firstFailure === undefined) {
          firstFailure = status;
          if (!interrupted) {
            console.error(`[train] seed ${seed} exited with status ${status}; stopping the other seeds (they save what completed)`);
            for (const other of running.values()) other.kill('SIGTERM');
          }
        }
        ok(status);
      });
    });
  // A worker takes the next seed as long as nothing failed and no signal came.
  const worker = async () => {
    while (next < seeds.length && firstFailure === undefined && !interrupted) await start(seeds[next++]);
  };
  const stopPassing = passSignalsOn((signal) => {
    interrupted = true;
    for (const child of running.values()) child.kill(signal);
  });
  try {
    await Promise.all(Array.from({ length: Math.min(n, seeds.length) }, worker));
    return firstFailure ?? 0;
  } finally {
    stopPassing();
  }
}
