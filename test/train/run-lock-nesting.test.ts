// One writer per run folder, enclosing folders included: while a process holds a folder (a comparison job holds its
// folder, and its methods' runs write inside it), no other process writes in a folder inside it, and a folder that
// holds a claimed folder cannot be claimed either. The holders are real processes (a small child that claims a folder
// and waits); the second writer is `lamer train` itself, on a chance row, which needs no native addon.
import { describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { hasCode } from '../../src/errors.js';
import { LOCK_FILE, claimRunFolder } from '../../src/train/run-lock.js';

const root = resolve(import.meta.dirname, '..', '..');

// Claims the folder named last on its command line, says so ("held" or "refused CODE"), and keeps the claim until its
// stdin closes.
const holderScript = `
  import { claimRunFolder } from './src/train/run-lock.ts';
  let claim;
  try {
    claim = claimRunFolder(process.argv[process.argv.length - 1]);
    process.stdout.write('held\\n');
  } catch (e) {
    process.stdout.write('refused ' + e.code + '\\n');
  }
  process.stdin.resume();
  process.stdin.on('end', () => { claim?.release(); process.exit(0); });
`;

interface Holder {
  child: ChildProcess;
  pid: number;
  /** "held" or "refused CODE". */
  answer: Promise<string>;
  /** Ends the claim and waits for the process to exit. */
  release(): Promise<void>;
  /** SIGKILL: the lock stays behind, naming a process that no longer runs. */
  kill(): Promise<void>;
}

function holder(dir: string): Holder {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', holderScript, dir], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const answer = new Promise<string>((res, rej) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) res(out.trim());
    });
    child.once('exit', () => rej(new Error(`holder exited before answering: ${err}`)));
  });
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  return {
    child,
    pid: child.pid!,
    answer,
    release: async () => {
      child.stdin!.end();
      await exited;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

interface Exit {
  code: number | null;
  stderr: string;
}

/** `lamer train ARGS` without the native addon, as the fast tier runs everything. */
function lamer(args: string[]): Promise<Exit> {
  const child = spawn(process.execPath, [join(root, 'bin', 'lamer.js'), ...args], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LAMER_ADDON: '/nonexistent/lamer.node' },
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((res) => child.on('close', (code) => res({ code, stderr })));
}

/** A chance-row config (the random player, no model) whose runs go to `dir`. */
function chanceConfig(dir: string): string {
  const path = join(dir, 'chance.yaml');
  writeFileSync(
    path,
    stringify({
      name: 'job',
      runsDir: dir,
      method: 'random',
      model: { device: 'cpu' },
      env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2 } },
      eval: { tasks: 2 },
    }),
  );
  return path;
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

describe('run folder lock over nested folders', () => {
  it('a process holding a job folder keeps `lamer train --force` and `--resume` out of its method folders', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-lock-nest-'));
    const config = chanceConfig(dir);
    const job = join(dir, 'job');
    // What the job's method run has written so far.
    mkdirSync(join(job, 'random'), { recursive: true });
    const record = '{"type":"eval","method":"random","iteration":0}\n';
    writeFileSync(join(job, 'random', 'metrics.jsonl'), record);
    const h = holder(job);
    try {
      expect(await h.answer).toBe('held');
      for (const flag of ['--force', '--resume']) {
        const second = await lamer(['train', '--config', config, '--name', 'job/random', flag, '--quiet']);
        expect(second.code, second.stderr).toBe(1);
        expect(second.stderr).toMatch(new RegExp(`\\[E_LOCKED\\] .*job/random is inside .*job, which is in use by process ${h.pid} `));
        expect(readFileSync(join(job, 'random', 'metrics.jsonl'), 'utf8')).toBe(record);
        expect(existsSync(join(job, 'random', LOCK_FILE))).toBe(false);
      }
      // Deeper folders too, and from this process.
      expect(refusal(join(job, 'random', 'deeper'))).toMatch(new RegExp(`in use by process ${h.pid} `));
    } finally {
      await h.release();
    }
    // Once the holder is gone, the same command runs.
    const after = await lamer(['train', '--config', config, '--name', 'job/random', '--force', '--quiet']);
    expect(after.code, after.stderr).toBe(0);
    expect(existsSync(join(job, 'random', 'eval.json'))).toBe(true);
  }, 120_000);

  it('a process holding a method folder keeps a run off the job folder that encloses it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-lock-nest-inner-'));
    const config = chanceConfig(dir);
    const job = join(dir, 'job');
    const h = holder(join(job, 'lamer'));
    try {
      expect(await h.answer).toBe('held');
      const outer = await lamer(['train', '--config', config, '--force', '--quiet']);
      expect(outer.code, outer.stderr).toBe(1);
      expect(outer.stderr).toMatch(new RegExp(`\\[E_LOCKED\\] .*job holds .*job/lamer, which is in use by process ${h.pid} `));
      expect(existsSync(join(job, LOCK_FILE))).toBe(false);
      expect(existsSync(join(job, 'lamer', LOCK_FILE))).toBe(true);
      expect(existsSync(join(job, 'eval.json'))).toBe(false);
    } finally {
      await h.release();
    }
  }, 120_000);

  it('locks left by killed processes, above or below, do not block', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-lock-nest-stale-'));
    const config = chanceConfig(dir);
    const job = join(dir, 'job');
    const above = holder(job);
    expect(await above.answer).toBe('held');
    await above.kill();
    const below = holder(join(job, 'old', 'lamer'));
    expect(await below.answer).toBe('held');
    await below.kill();
    expect(existsSync(join(job, LOCK_FILE)) && existsSync(join(job, 'old', 'lamer', LOCK_FILE))).toBe(true);
    const inner = await lamer(['train', '--config', config, '--name', 'job/random', '--quiet']);
    expect(inner.code, inner.stderr).toBe(0);
    const outer = await lamer(['train', '--config', config, '--name', 'job', '--force', '--quiet']);
    expect(outer.code, outer.stderr).toBe(0);
  }, 120_000);

  it('a folder and one inside it claimed at the same moment: never both', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-lock-nest-race-'));
    for (let round = 0; round < 4; round++) {
      const job = join(dir, `job${round}`);
      const pair = [holder(job), holder(join(job, 'lamer'))];
      try {
        const answers = await Promise.all(pair.map((p) => p.answer));
        expect(answers.filter((a) => a === 'held').length, answers.join(', ')).toBeLessThanOrEqual(1);
        expect(
          answers.every((a) => a === 'held' || a === 'refused E_LOCKED'),
          answers.join(', '),
        ).toBe(true);
      } finally {
        await Promise.all(pair.map((p) => p.release()));
      }
    }
  }, 120_000);
});
