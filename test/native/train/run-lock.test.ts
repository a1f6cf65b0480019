// One writer per run folder: a run claims its folder before writing in it. Two `lamer train` started together on one
// run name: one runs, the other stops at once with E_LOCKED naming the holder, and the folder holds one run's records.
// A lock left by a killed run does not block `--resume`. Holders are real processes (this one, a live child, a
// finished one), so liveness is what the operating system says.
import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { hasCode } from '../../../src/errors.js';
import { LOCK_FILE, claimRunFolder } from '../../../src/train/run-lock.js';
import { tinyNativeConfig } from './helpers.js';
import { root } from '../../helpers/index.js';

const lamer = join(root, 'bin', 'lamer.js');

function lockOf(pid: number, host = hostname()): string {
  return JSON.stringify({ pid, host, since: '2026-01-01T00:00:00.000Z', command: 'bin/lamer.js train' });
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

function refusal(dir: string): string {
  try {
    claimRunFolder(dir).release();
    return '';
  } catch (e) {
    expect(hasCode(e, 'E_LOCKED'), String(e)).toBe(true);
    return (e as Error).message;
  }
}

interface Exit {
  code: number | null;
  stderr: string;
}

function run(args: string[], onStderr?: (text: string) => void): { done: Promise<Exit>; pid: number; kill: () => void } {
  const child = spawn(process.execPath, [lamer, ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    onStderr?.(stderr);
  });
  const done = new Promise<Exit>((res) => child.on('close', (code) => res({ code, stderr })));
  return { done, pid: child.pid!, kill: () => child.kill('SIGKILL') };
}

function tinyConfigFile(dir: string, iterations: number): string {
  const path = join(dir, 'tiny.yaml');
  writeFileSync(path, stringify({ ...tinyNativeConfig('one', dir), train: { iterations, evalEvery: 0, checkpointEvery: 1 }, eval: { tasks: 3 } }));
  return path;
}

const iterationEvents = (dir: string) =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { type: string; iteration?: number })
    .filter((e) => e.type === 'iteration')
    .map((e) => e.iteration);

describe('run folder lock', () => {
  it('names a live holder, takes over from a dead one, refuses an unreadable lock, and goes at release', () => {
    const base = mkdtempSync(join(tmpdir(), 'lamer-lock-'));
    // A live holder: the process that started this test's worker.
    const live = join(base, 'live');
    expect(refusal(live)).toBe('');
    writeFileSync(join(live, LOCK_FILE), lockOf(process.ppid));
    expect(refusal(live)).toMatch(new RegExp(`in use by process ${process.ppid} on ${hostname()} since 2026-01-01.*bin/lamer\\.js train`));
    // Another machine's holder cannot be checked from here: refused, with how to clear it if it is gone.
    writeFileSync(join(live, LOCK_FILE), lockOf(process.ppid, 'elsewhere'));
    expect(refusal(live)).toMatch(/if it no longer runs on elsewhere, remove .*\.lock/);
    writeFileSync(join(live, LOCK_FILE), 'not json');
    expect(refusal(live)).toMatch(/does not say who holds it/);
    // A dead holder on this host: taken over, and said so.
    const dead = deadPid();
    writeFileSync(join(live, LOCK_FILE), lockOf(dead));
    const claim = claimRunFolder(live);
    expect(claim.tookOver?.pid).toBe(dead);
    const held = JSON.parse(readFileSync(join(live, LOCK_FILE), 'utf8'));
    expect(held.pid).toBe(process.pid);
    // Inside a folder this process holds (a comparison job's method runs): no second claim, no second lock file.
    const inner = claimRunFolder(join(live, 'lamer'));
    expect(existsSync(join(live, 'lamer', LOCK_FILE))).toBe(false);
    inner.release();
    expect(existsSync(join(live, LOCK_FILE))).toBe(true);
    claim.release();
    expect(existsSync(join(live, LOCK_FILE))).toBe(false);
    claim.release();
  });

  it('two lamer train started together on one run name: one runs, the other exits with E_LOCKED, and the folder holds one run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-lock-race-'));
    const config = tinyConfigFile(dir, 3);
    const [a, b] = [run(['train', '--config', config, '--quiet']), run(['train', '--config', config, '--quiet'])];
    const exits = await Promise.all([a.done, b.done]);
    const [won, lost] = exits[0].code === 0 ? [exits[0], exits[1]] : [exits[1], exits[0]];
    expect(won.code, won.stderr).toBe(0);
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(/\[E_LOCKED\] .*one is in use by process \d+ on /);
    const runDir = join(dir, 'one');
    expect(iterationEvents(runDir)).toEqual([1, 2, 3]);
    expect(JSON.parse(readFileSync(join(runDir, 'eval.json'), 'utf8'))).toHaveLength(1);
    expect(existsSync(join(runDir, LOCK_FILE))).toBe(false);
  }, 300_000);

  it('a lock left by a killed run does not block --resume, which says whose lock it took over', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-lock-kill-'));
    const config = tinyConfigFile(dir, 4);
    const runDir = join(dir, 'one');
    let killed = false;
    const first = run(['train', '--config', config], () => {
      // Killed (no cleanup runs) once the first checkpoint is in place.
      if (!killed && existsSync(join(runDir, 'checkpoints', 'ckpt-000001'))) {
        killed = true;
        first.kill();
      }
    });
    const exit = await first.done;
    expect(killed, exit.stderr).toBe(true);
    expect(JSON.parse(readFileSync(join(runDir, LOCK_FILE), 'utf8')).pid).toBe(first.pid);
    const resumed = await run(['train', '--config', config, '--resume', '--quiet']).done;
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`took over the lock of process ${first.pid}`);
    expect(iterationEvents(runDir)).toEqual([1, 2, 3, 4]);
    expect(existsSync(join(runDir, LOCK_FILE))).toBe(false);
    // A plain start on the finished run is refused for the run it holds, not for a lock.
    const again = await run(['train', '--config', config, '--quiet']).done;
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/\[E_EXISTS\]/);
  }, 300_000);
});
