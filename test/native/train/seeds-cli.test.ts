// `lamer train --seeds` and `lamer compare` end to end on a tiny comparison job: one run folder per seed, each with its
// own seed in its config, and the across-seed table read back from those folders; `--jobs 2` running the seeds side by
// side computes exactly what the seeds compute one after another.
import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command as trainCommand } from '../../../src/cli/commands/train.js';
import { command as compareCommand } from '../../../src/cli/commands/compare.js';
import { parseSeedList } from '../../../src/cli/args.js';
import { tinyJobFile } from './helpers.js';
import { captured, root } from '../../helpers/index.js';

/** `lamer train --seeds 0-1 --jobs 2` of the tiny job into `dir`, as a user runs it. */
function twoAtOnce(dir: string) {
  const args = [join(root, 'bin', 'lamer.js'), 'train', '--config', tinyJobFile(dir), '--seeds', '0-1', '--jobs', '2', '--quiet'];
  return spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 400_000 });
}

/** What a seed's run folder computed: every method's evaluation and the trained methods' last weights. */
function computed(run: string): unknown {
  const evals = JSON.parse(readFileSync(join(run, 'eval.json'), 'utf8')) as Array<{ method: string; passAtK: number[]; firstWin: number[] }>;
  return {
    evals: evals.map((e) => [e.method, e.passAtK, e.firstWin]),
    weights: ['lamer', 'gigpo'].map((m) => readFileSync(join(run, m, 'checkpoints', 'ckpt-000001', 'model.safetensors')).toString('base64')),
  };
}

describe('seed lists', () => {
  it('reads ranges and lists in order without repeats, and refuses anything else', () => {
    expect(parseSeedList('0-4')).toEqual([0, 1, 2, 3, 4]);
    expect(parseSeedList('3')).toEqual([3]);
    expect(parseSeedList('0,2, 7')).toEqual([0, 2, 7]);
    expect(parseSeedList('5-6,1,6')).toEqual([5, 6, 1]);
    for (const bad of ['', '4-2', 'a', '1-', '-1', '1.5', '0-99999']) expect(parseSeedList(bad), bad).toBeUndefined();
  });
});

describe('lamer train --seeds, lamer compare', () => {
  it('runs each seed into its own folder and prints the across-seed comparison of those folders', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-seeds-'));
    const config = tinyJobFile(dir);
    const train = await captured(() => trainCommand.run(['--config', config, '--seeds', '0-1', '--quiet']));
    expect(train.code, train.err).toBe(0);
    const runs = [0, 1].map((s) => join(dir, `tiny-seed${s}`));
    for (const [s, run] of runs.entries()) {
      for (const method of ['lamer', 'gigpo', 'random', 'random-memory']) {
        expect(JSON.parse(readFileSync(join(run, method, 'config.json'), 'utf8')).seed, `${run} ${method}`).toBe(s);
      }
      const evals = JSON.parse(readFileSync(join(run, 'eval.json'), 'utf8')) as Array<{ method: string }>;
      expect(evals.map((e) => e.method)).toEqual(['lamer', 'gigpo', 'random', 'random-memory']);
    }
    expect(train.out).toContain('across 2 seeds');
    expect(train.out).toContain('tiny-seed0 (seed 0)');
    expect(train.out).toContain('across 2 runs (t, 1 d.o.f.)');
    // The same table from the folders alone.
    const json = join(dir, 'out', 'compare.json');
    const compare = await captured(() => compareCommand.run([...runs, '--json', json]));
    expect(compare.code, compare.err).toBe(0);
    const table = compare.out.replace(/\nwrote .*$/, '');
    expect(train.out.endsWith(table)).toBe(true);
    const written = JSON.parse(readFileSync(json, 'utf8')) as { runs: Array<{ seed: number }>; pairs: Array<{ b: string; passAtN: { runs: number } }> };
    expect(written.runs.map((r) => r.seed)).toEqual([0, 1]);
    expect(written.pairs.map((p) => [p.b, p.passAtN.runs])).toEqual([
      ['gigpo', 2],
      ['random', 2],
      ['random-memory', 2],
    ]);
    // What the job wrote as its own paired comparison is what compare recomputes for that seed.
    const jobCompare = JSON.parse(readFileSync(join(runs[1], 'compare.json'), 'utf8')) as Array<{ b: string; passAtN: unknown }>;
    const fromCompare = (written.pairs as unknown as Array<{ b: string; perRun: Array<{ comparison: { passAtN: unknown } }> }>)[0].perRun[1].comparison.passAtN;
    expect(fromCompare).toEqual(jobCompare.find((c) => c.b === 'gigpo')!.passAtN);

    // The same job with the two seeds side by side, each in its own process.
    const dir2 = mkdtempSync(join(tmpdir(), 'lamer-jobs-'));
    const side = twoAtOnce(dir2);
    expect(side.status, side.stderr).toBe(0);
    expect(side.stdout).toContain(`[train] 2 seeds, 2 at a time, each in its own process: ${join(dir2, 'tiny-seed0')}, ${join(dir2, 'tiny-seed1')}`);
    for (const s of [0, 1]) {
      expect(side.stdout).toMatch(new RegExp(`\\[seed ${s}\\] minesweeper: pass@k on held-out tasks 0-2`));
      expect(computed(join(dir2, `tiny-seed${s}`)), `seed ${s}`).toEqual(computed(runs[s]));
    }
    expect(side.stdout).toContain('across 2 seeds');
    expect(side.stdout.trimEnd().endsWith(table.replaceAll(dir, dir2))).toBe(true);

    // A seed that fails (its folder already holds a run) stops the job with its status and no comparison.
    const dir3 = mkdtempSync(join(tmpdir(), 'lamer-jobs-fail-'));
    cpSync(join(dir2, 'tiny-seed1'), join(dir3, 'tiny-seed1'), { recursive: true });
    const failed = twoAtOnce(dir3);
    expect(failed.status, failed.stderr).toBe(1);
    expect(failed.stderr).toMatch(/\[seed 1\] lamer: \[E_EXISTS\] .*tiny-seed1 already holds a finished run/);
    expect(failed.stderr).toContain('[train] seed 1 exited with status 1; stopping the other seeds (they save what completed)');
    expect(failed.stdout).not.toContain('across 2 seeds');
  }, 900_000);

  it('--jobs: Ctrl-C stops every seed after saving what completed, and --resume finishes them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-jobs-int-'));
    const config = tinyJobFile(dir, { train: { iterations: 40, checkpointEvery: 1 } });
    const args = [join(root, 'bin', 'lamer.js'), 'train', '--config', config, '--seeds', '0-2', '--jobs', '2'];
    // As a terminal's Ctrl-C: SIGINT to the whole process group, once both running seeds are training.
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let err = '';
    let sent = false;
    child.stderr.on('data', (d) => {
      err += d;
      if (/\[seed 0\] \[lamer\] iter 2\/40/.test(err) && /\[seed 1\] \[lamer\] iter 2\/40/.test(err) && !sent) {
        sent = true;
        process.kill(-child.pid!, 'SIGINT');
      }
    });
    const code = await new Promise<number | null>((ok) => child.on('close', (c) => ok(c)));
    expect(code, err).toBe(130);
    // Each running seed stopped by its own handler (once signalled), the third never started.
    for (const s of [0, 1]) expect(err).toContain(`[seed ${s}] lamer train: interrupted; \`lamer train --resume\``);
    expect(err).not.toContain('[seed 2]');
    expect(err).toMatch(/lamer train: interrupted; `lamer train --resume` with the same options continues each seed where it stopped\n$/);
    const resumed = spawnSync(process.execPath, [...args, '--resume', '--quiet'], { cwd: root, encoding: 'utf8', timeout: 400_000 });
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('across 3 runs (t, 2 d.o.f.)');
  }, 900_000);

  it('refuses a malformed seed list and a compare without folders', async () => {
    expect((await captured(() => trainCommand.run(['--seeds', '3-1']))).code).toBe(2);
    const jobs: [string[], RegExp][] = [
      [['--jobs', '2'], /--jobs runs seeds side by side: pass --seeds too/],
      [['--seeds', '0-1', '--jobs', '0'], /--jobs expects a number of processes from 1 to 64, found "0"/],
      [['--seeds', '0-1', '--jobs', '2', '--nproc', '2'], /--jobs runs seeds side by side and --nproc one run as several ranks/],
    ];
    for (const [args, message] of jobs) {
      const r = await captured(() => trainCommand.run(args));
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toMatch(message);
    }
    expect((await captured(() => compareCommand.run([]))).code).toBe(2);
    const missing = await captured(() => compareCommand.run([join(tmpdir(), 'no-such-run-folder')]).catch((e) => (e.code === 'E_ARG' ? 3 : 4)));
    expect(missing.code).toBe(3);
  });
});
