// A run folder's state files are read only when they are regular files of bounded size: a named pipe in place of
// `checkpoints/latest`, eval.json, config.json or metrics.jsonl used to block the process forever (and a device such
// as /dev/zero to fill its memory); each is now refused at once with a coded error naming the file.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LATEST_MAX_BYTES, latestCheckpoint, readJson } from '../../src/train/checkpoint.js';
import { loadConfig } from '../../src/train/config.js';
import { runJob } from '../../src/train/job.js';
import { rescoreJob } from '../../src/train/rescore.js';
import { readRunEvaluation } from '../../src/cli/commands/compare.js';
import { runConfigBeside } from '../../src/cli/commands/eval.js';
import { readMetrics } from '../../src/report/runs.js';

const hasMkfifo = (() => {
  try {
    execFileSync('mkfifo', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const fifo = (path: string) => execFileSync('mkfifo', [path]);

/** Expects `f` to fail with `code`, naming `path`, in well under a second of work. */
async function refused(f: () => unknown, code: string, path: string): Promise<void> {
  const t0 = performance.now();
  let error: unknown;
  try {
    await f();
  } catch (e) {
    error = e;
  }
  expect(error, 'expected a refusal').toBeInstanceOf(Error);
  expect((error as { code?: string }).code, (error as Error).message).toBe(code);
  expect((error as Error).message).toContain(path);
  expect(performance.now() - t0).toBeLessThan(5000);
}

describe.skipIf(!hasMkfifo)('run folder files that are not regular files', () => {
  it('checkpoints/latest: a named pipe, /dev/zero or an oversized file is refused with E_CHECKPOINT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-run-files-'));
    mkdirSync(join(dir, 'ckpt-000001'));
    const latest = join(dir, 'latest');
    fifo(latest);
    await refused(() => latestCheckpoint(dir), 'E_CHECKPOINT', latest);
    execFileSync('rm', [latest]);
    symlinkSync('/dev/zero', latest);
    await refused(() => latestCheckpoint(dir), 'E_CHECKPOINT', latest);
    execFileSync('rm', [latest]);
    writeFileSync(latest, '');
    truncateSync(latest, LATEST_MAX_BYTES + 1);
    await refused(() => latestCheckpoint(dir), 'E_CHECKPOINT', latest);
    // A regular pointer still works, and a missing one falls back to the newest folder.
    writeFileSync(latest, 'ckpt-000001\n');
    expect(latestCheckpoint(dir)).toBe(join(dir, 'ckpt-000001'));
    execFileSync('rm', [latest]);
    expect(latestCheckpoint(dir)).toBe(join(dir, 'ckpt-000001'));
    const meta = join(dir, 'meta.json');
    fifo(meta);
    await refused(() => readJson(meta, 'the meta file'), 'E_CHECKPOINT', meta);
  });

  it('eval.json and config.json of a job, as compare, eval, rescore and a resumed job read them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-run-files-'));
    const evalJson = join(dir, 'eval.json');
    fifo(evalJson);
    await refused(() => readRunEvaluation(dir), 'E_ARG', evalJson);
    await refused(() => rescoreJob(dir, { out: join(tmpdir(), `lamer-run-files-out-${process.pid}`) }), 'E_ARG', evalJson);
    const config = loadConfig('default', [`runsDir=${tmpdir()}`, `name=${dir.slice(tmpdir().length + 1)}`]);
    await refused(() => runJob(config, { resume: true, log: () => {} }), 'E_CHECKPOINT', evalJson);

    execFileSync('rm', [evalJson]);
    writeFileSync(evalJson, JSON.stringify([{ method: 'lamer', passAtK: [0.5] }]));
    const configJson = join(dir, 'config.json');
    fifo(configJson);
    await refused(() => readRunEvaluation(dir), 'E_ARG', configJson);

    const run = mkdtempSync(join(tmpdir(), 'lamer-run-files-'));
    mkdirSync(join(run, 'checkpoints', 'ckpt-000001'), { recursive: true });
    fifo(join(run, 'config.json'));
    await refused(() => runConfigBeside(join(run, 'checkpoints', 'ckpt-000001')), 'E_CHECKPOINT', join(run, 'config.json'));
  });

  it('metrics.jsonl, as the report reads it', async () => {
    const run = mkdtempSync(join(tmpdir(), 'lamer-run-files-'));
    const metrics = join(run, 'metrics.jsonl');
    fifo(metrics);
    await refused(() => readMetrics(run), 'E_IO', metrics);
  });
});
