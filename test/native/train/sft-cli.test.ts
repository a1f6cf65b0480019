// `lamer sft` as a user runs it: Ctrl-C (SIGINT) stops it after saving where it stood and exits 130 naming
// `--resume`; a second start without --resume refuses to overwrite the saves; `--resume` ends with the weights of a
// warm start never stopped, and removes the saves.
import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tinyJobFile } from './helpers.js';
import { root } from '../../helpers/index.js';
import { WARM_START_SAVES } from '../../../src/train/warm-start.js';

const sftArgs = (config: string, more: string[]) => [
  join(root, 'bin', 'lamer.js'),
  'sft',
  '--config',
  config,
  '--set',
  'sft.steps=400',
  '--set',
  'sft.checkpointEvery=5',
  '--quiet',
  ...more,
];

describe('lamer sft: Ctrl-C and --resume', () => {
  it('saves on SIGINT, refuses to start over the saves, and resumes to the weights of a warm start never stopped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-sft-cli-'));
    const config = tinyJobFile(dir);
    const whole = spawnSync(process.execPath, sftArgs(config, ['--out', join(dir, 'whole')]), { cwd: root, encoding: 'utf8', timeout: 300_000 });
    expect(whole.status, whole.stderr).toBe(0);
    const saves = join(dir, 'tiny', WARM_START_SAVES);
    expect(existsSync(saves)).toBe(false);

    const child = spawn(process.execPath, sftArgs(config, []), { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    // Interrupt once the first save is there (the warm start is under way).
    const start = Date.now();
    while (!existsSync(join(saves, 'warm-start.json')) && Date.now() - start < 120_000) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    expect(await exited, err).toBe(130);
    expect(err).toMatch(/lamer sft --resume/);
    const stoppedAt = (JSON.parse(readFileSync(join(saves, 'warm-start.json'), 'utf8')) as { losses: number[] }).losses.length;
    expect(stoppedAt).toBeGreaterThan(0);
    expect(stoppedAt).toBeLessThan(400);

    const over = spawnSync(process.execPath, sftArgs(config, []), { cwd: root, encoding: 'utf8', timeout: 300_000 });
    expect(over.status).toBe(2);
    expect(over.stderr).toMatch(/--resume/);

    const resumed = spawnSync(process.execPath, sftArgs(config, ['--resume']), { cwd: root, encoding: 'utf8', timeout: 300_000 });
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/warm start: 400 steps/);
    const weights = (d: string) => readFileSync(join(d, 'model.safetensors'));
    expect(weights(join(dir, 'tiny', 'warm-start')).equals(weights(join(dir, 'whole')))).toBe(true);
    expect(existsSync(saves)).toBe(false);
  }, 600_000);
});
