import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanInterruptedCheckpoints, latestCheckpoint, listCheckpoints, saveCheckpoint } from '../../src/train/checkpoint.js';
import { root } from '../helpers/index.js';

const PAYLOAD = 4 * 1024 * 1024;

// A writer that resumes from the latest checkpoint and keeps writing new ones (4 MB payload + metadata each).
const writerScript = `
  import { saveCheckpoint, latestCheckpoint } from './src/train/checkpoint.ts';
  import { readFileSync, writeFileSync } from 'node:fs';
  import { join } from 'node:path';
  const dir = process.argv[process.argv.length - 1]; // node -e SCRIPT DIR
  const last = latestCheckpoint(dir);
  let it = last ? JSON.parse(readFileSync(join(last, 'meta.json'), 'utf8')).iteration : 0;
  process.stdout.write('resumed ' + it + '\\n');
  for (;;) {
    it++;
    await saveCheckpoint(dir, it, async (tmp) => {
      const buf = Buffer.alloc(${PAYLOAD}, it % 251);
      for (let k = 0; k < 4; k++) writeFileSync(join(tmp, 'part' + k + '.bin'), buf.subarray(k * ${PAYLOAD / 4}, (k + 1) * ${PAYLOAD / 4}));
      writeFileSync(join(tmp, 'meta.json'), JSON.stringify({ iteration: it }));
    });
  }
`;

function checkComplete(dir: string): number {
  const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as { iteration: number };
  for (let k = 0; k < 4; k++) {
    const part = readFileSync(join(dir, `part${k}.bin`));
    expect(part.length).toBe(PAYLOAD / 4);
    expect(part.every((b) => b === meta.iteration % 251)).toBe(true);
  }
  return meta.iteration;
}

describe('checkpoints', () => {
  it('keeps the newest `keep` complete checkpoints and points latest at the newest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-ckpt-'));
    for (let i = 1; i <= 4; i++) {
      await saveCheckpoint(dir, i, async (tmp) => writeFileSync(join(tmp, 'meta.json'), JSON.stringify({ i })), 2);
    }
    expect(listCheckpoints(dir)).toEqual(['ckpt-000003', 'ckpt-000004']);
    expect(latestCheckpoint(dir)).toBe(join(dir, 'ckpt-000004'));
  });

  it('a failing writer leaves the previous checkpoint as latest and no temporary folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-ckpt-'));
    await saveCheckpoint(dir, 1, async (tmp) => writeFileSync(join(tmp, 'meta.json'), '{}'));
    await expect(
      saveCheckpoint(dir, 2, async (tmp) => {
        writeFileSync(join(tmp, 'meta.json'), '{}');
        throw new Error('disk full');
      }),
    ).rejects.toThrow('disk full');
    expect(latestCheckpoint(dir)).toBe(join(dir, 'ckpt-000001'));
    expect(readdirSync(dir).filter((n) => n.includes('tmp'))).toEqual([]);
  });

  it('SIGKILL at random moments while writing always leaves a complete, resumable latest checkpoint', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-ckpt-kill-'));
    let previous = 0;
    for (let round = 0; round < 6; round++) {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', writerScript, dir], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      const started = await new Promise<boolean>((resolve) => {
        child.stdout.once('data', () => resolve(true));
        child.once('exit', () => resolve(false));
      });
      expect(started, err).toBe(true);
      await new Promise((r) => setTimeout(r, 150 + Math.random() * 400));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const resumedFrom = Number(/resumed (\d+)/.exec(out)?.[1]);
      expect(resumedFrom).toBeGreaterThanOrEqual(previous);
      const latest = latestCheckpoint(dir);
      if (latest) previous = checkComplete(latest);
      cleanInterruptedCheckpoints(dir);
    }
    expect(previous).toBeGreaterThan(0);
    expect(existsSync(join(dir, 'latest'))).toBe(true);
  }, 60_000);
});
