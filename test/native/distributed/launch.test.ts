// What a user meets first of data parallelism: torchrun's variables read and checked (E_DIST naming the variable),
// a rendezvous that no other rank joins failing within its timeout, and `lamer train --nproc 2` running a job as two
// processes (rank 0 printing and writing the run folder, every iteration event saying worldSize 2).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DistContext, distSettingsFromEnv } from '../../../src/train/distributed.js';
import { freePort } from '../../../src/cli/launch.js';
import { root } from '../../helpers/index.js';

const base = { WORLD_SIZE: '2', RANK: '1', LOCAL_RANK: '1', MASTER_ADDR: '10.0.0.1', MASTER_PORT: '29500' };

describe('torchrun variables', () => {
  it('are absent in a single process', () => {
    expect(distSettingsFromEnv({})).toBeNull();
  });

  it('are read as torchrun sets them', () => {
    const s = distSettingsFromEnv({ ...base, LAMER_DIST_TIMEOUT: '90', TORCHELASTIC_USE_AGENT_STORE: 'True', TORCHELASTIC_RESTART_COUNT: '2' });
    expect(s).toMatchObject({
      rank: 1,
      worldSize: 2,
      localRank: 1,
      masterAddr: '10.0.0.1',
      masterPort: 29500,
      timeoutMs: 90_000,
      backend: 'gloo',
      agentStore: true,
      restartCount: 2,
    });
  });

  it('are refused with E_DIST naming what is wrong', () => {
    const bad: [Record<string, string>, RegExp][] = [
      [{ ...base, RANK: '2' }, /RANK 2 is not below WORLD_SIZE 2/],
      [{ ...base, RANK: '' }, /RANK is not set/],
      [{ ...base, WORLD_SIZE: '0' }, /WORLD_SIZE must be an integer >= 1/],
      [{ ...base, MASTER_ADDR: '' }, /MASTER_ADDR is not set/],
      [{ ...base, MASTER_PORT: '70000' }, /MASTER_PORT must be at most 65535/],
      [{ ...base, MASTER_PORT: 'x' }, /MASTER_PORT must be an integer/],
      [{ ...base, LAMER_DIST_TIMEOUT: '-1' }, /LAMER_DIST_TIMEOUT must be a number of seconds > 0/],
      [{ ...base, LAMER_DIST_BACKEND: 'mpi' }, /LAMER_DIST_BACKEND must be gloo or nccl/],
    ];
    for (const [env, message] of bad) {
      expect(() => distSettingsFromEnv(env), JSON.stringify(env)).toThrow(message);
      try {
        distSettingsFromEnv(env);
      } catch (e) {
        expect((e as { code?: string }).code).toBe('E_DIST');
      }
    }
  });

  it('a rendezvous no other rank joins fails with E_DIST within its timeout', async () => {
    const port = await freePort();
    const t0 = Date.now();
    let error: (Error & { code?: string }) | undefined;
    try {
      DistContext.join({
        rank: 0,
        worldSize: 2,
        localRank: 0,
        masterAddr: '127.0.0.1',
        masterPort: port,
        timeoutMs: 1500,
        backend: 'gloo',
        agentStore: false,
        restartCount: 0,
      });
    } catch (e) {
      error = e as Error & { code?: string };
    }
    expect(error?.code).toBe('E_DIST');
    expect(error?.message).toMatch(/rank 0 could not join the rendezvous store at 127\.0\.0\.1:\d+ within 1500 ms/);
    expect(Date.now() - t0).toBeLessThan(15_000);
  });
});

/** `lamer train --nproc 2` of a tiny LaMer run (no warm start) into dir/name, with extra `--set` fields. */
function nprocTrain(dir: string, name: string, sets: string[]): string[] {
  const fields = [
    `runsDir=${dir}`,
    'model.init.preset=tiny',
    'sft.trials=0',
    'rollout.tasksPerIteration=3',
    'rollout.groupSize=2',
    'rollout.maxResponseTokens=12',
    'env.options.maxTurns=2',
    ...sets,
  ];
  return [join(root, 'bin', 'lamer.js'), 'train', '--nproc', '2', '--quiet', '--method', 'lamer', '--name', name, ...fields.flatMap((f) => ['--set', f])];
}

describe('lamer train --nproc', () => {
  it('runs the job as two processes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-nproc-'));
    const args = nprocTrain(dir, 'n2', ['train.iterations=2', 'eval.tasks=6']);
    const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 180_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\[launch\] 2 processes on 127\.0\.0\.1:\d+/);
    expect(r.stdout).toMatch(/pass@k on held-out tasks 0-5 \(development set\) \(2 processes\)/);
    // Printed once (rank 0), not once per rank.
    expect(r.stdout.match(/pass@k on/g)).toHaveLength(1);
    const events = readFileSync(join(dir, 'n2', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; worldSize?: number });
    expect(events.filter((e) => e.type === 'iteration').map((e) => e.worldSize)).toEqual([2, 2]);
  }, 200_000);

  it('refuses a bad process count and --nproc under torchrun', () => {
    const bin = join(root, 'bin', 'lamer.js');
    const zero = spawnSync(process.execPath, [bin, 'train', '--nproc', '0'], { cwd: root, encoding: 'utf8' });
    expect(zero.status).toBe(2);
    expect(zero.stderr).toMatch(/--nproc expects a number of processes from 1 to 1024, found "0"/);
    const nested = spawnSync(process.execPath, [bin, 'train', '--nproc', '2'], { cwd: root, encoding: 'utf8', env: { ...process.env, WORLD_SIZE: '2' } });
    expect(nested.status).toBe(2);
    expect(nested.stderr).toMatch(/WORLD_SIZE is set/);
  });

  it('Ctrl-C checkpoints what completed and exits 130', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-nproc-int-'));
    const args = nprocTrain(dir, 'int', ['train.iterations=50', 'train.checkpointEvery=0', 'eval.tasks=4']);
    // As a terminal's Ctrl-C: SIGINT to the launcher's whole process group (a rank reached by it and by the launcher
    // would see two signals and quit without saving).
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let err = '';
    let sent = false;
    child.stderr.on('data', (d) => {
      err += d;
      if (/iter 2\/50/.test(err) && !sent) {
        sent = true;
        process.kill(-child.pid!, 'SIGINT');
      }
    });
    const code = await new Promise<number | null>((ok) => child.on('close', (c) => ok(c)));
    expect(code, err).toBe(130);
    expect(err).toMatch(/interrupted: checkpoint of iteration \d+/);
    expect(err).not.toMatch(/\[launch\] rank 1 exited/);
    const ckpt = /checkpoint of iteration (\d+)/.exec(err)![1];
    expect(existsSync(join(dir, 'int', 'checkpoints', `ckpt-${ckpt.padStart(6, '0')}`, 'model.safetensors'))).toBe(true);
  }, 200_000);
});
