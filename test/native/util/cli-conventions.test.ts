// The `lamer` command's conventions, run as a user runs it (bin/lamer.js in a child process): --version, usage errors
// on stderr with exit 2 and a suggestion for a typo, output into a closed pipe ending quietly, and SIGINT during
// training exiting 130 with the completed iterations checkpointed, so --resume goes on from them; a second SIGINT ending
// the process by the signal itself, and --resume taking over the lock it leaves.
import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { tinyNativeConfig } from '../train/helpers.js';
import { root } from '../../helpers/index.js';

const bin = join(root, 'bin', 'lamer.js');

/** A YAML config of the tiny native GiGPO run (test/native/train/helpers.ts), with `train` and `maxTurns` the caller's. */
function tinyYaml(dir: string, train: { iterations: number; checkpointEvery: number }, maxTurns = 2): string {
  const path = join(dir, 'tiny.yaml');
  const base = tinyNativeConfig('tiny', dir);
  writeFileSync(
    path,
    stringify({
      ...base,
      method: 'gigpo',
      env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2, maxTurns } },
      trial: { episodes: 1 },
      train: { ...train, evalEvery: 0 },
      eval: { tasks: 2 },
      sft: { trials: 0 },
    }),
  );
  return path;
}

function lamer(args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('lamer command-line conventions', () => {
  it('--version prints the package version', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const r = lamer(['--version']);
    expect(r.code).toBe(0);
    expect(r.out.trim()).toBe(`lamer ${pkg.version}`);
  });

  it('a mistyped command or option: exit 2, the error and a suggestion on stderr, nothing on stdout', () => {
    const command = lamer(['trian']);
    expect(command.code).toBe(2);
    expect(command.out).toBe('');
    expect(command.err).toContain("unknown command 'trian'; did you mean 'train'?");
    const option = lamer(['train', '--resum']);
    expect(option.code).toBe(2);
    expect(option.out).toBe('');
    expect(option.err).toContain("did you mean '--resume'?");
    const doctor = lamer(['doctor', '--bogus']);
    expect(doctor.code).toBe(2);
    expect(doctor.err).toContain("Unknown option '--bogus'");
    // Values that parse as numbers but are not what the option takes.
    const seed = lamer(['init-model', '--preset', 'tiny', '--out', join(tmpdir(), 'never-written'), '--seed', '1e300']);
    expect(seed.code).toBe(2);
    expect(seed.err).toContain('--seed in [0, 2^53)');
    const topK = lamer(['generate', '--model', 'x', '--prompt', 'y', '--top-k=-5']);
    expect(topK.code).toBe(2);
    expect(topK.err).toContain("--top-k must be an integer >= 0 (0 keeps all), found '-5'");
  });

  it('output into a closed pipe ends the command quietly (exit 0, no stack trace)', async () => {
    const child = spawn(process.execPath, [bin, 'help'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the reader is gone before the command writes
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(err).not.toContain('EPIPE');
    expect(code).toBe(0);
  });

  it('a second SIGINT during training ends the process by the signal (no exit, no static destructors); --resume takes over', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-sigint2-'));
    const config = tinyYaml(dir, { iterations: 200, checkpointEvery: 1 }, 3);
    const child = spawn(process.execPath, [bin, 'train', '--config', config, '--quiet'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    let sent = 0;
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (sent === 0 && /iter 3\/200/.test(err)) {
        sent = 1;
        child.kill('SIGINT');
      } else if (sent === 1 && err.includes('send it again to quit at once')) {
        sent = 2; // while the first signal's step is still being abandoned: mid rollout or update
        child.kill('SIGINT');
      }
    });
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
    expect(sent).toBe(2);
    // process.exit() here ran libtorch's static destructors under a thread still in backward (a SIGSEGV in 1 of 4).
    expect({ code, signal }, err).toEqual({ code: null, signal: 'SIGINT' });
    expect(existsSync(join(dir, 'tiny', '.lock'))).toBe(true);
    const saved = Math.max(
      ...readdirSync(join(dir, 'tiny', 'checkpoints'))
        .filter((n) => /^ckpt-\d+$/.test(n))
        .map((n) => Number(n.slice(5))),
    );
    const resumed = lamer(['train', '--config', config, '--quiet', '--resume', '--set', `train.iterations=${saved + 1}`]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toContain(`iter ${saved + 1}/${saved + 1}`);
  });

  it('SIGINT during training: exit 130, the completed iterations checkpointed, --resume finishes the run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-sigint-'));
    const config = tinyYaml(dir, { iterations: 200, checkpointEvery: 0 }, 3);
    const child = spawn(process.execPath, [bin, 'train', '--config', config, '--quiet'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    let sent = false;
    const interrupted = new Promise<void>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (!sent && /iter 2\/200/.test(err)) {
          sent = true; // once: a second signal quits at once
          child.kill('SIGINT');
          resolve();
        }
      });
    });
    const code = new Promise<number | null>((resolve) => child.on('close', resolve));
    await interrupted;
    expect(await code).toBe(130);
    expect(err, err).toContain('--resume');
    const checkpoints = readdirSync(join(dir, 'tiny', 'checkpoints')).filter((n) => /^ckpt-\d+$/.test(n));
    expect(checkpoints.length).toBe(1);
    const saved = Number(checkpoints[0].slice(5));
    expect(saved).toBeGreaterThanOrEqual(2);
    // The metrics hold the saved iterations; --resume continues after them (cut short here with --set).
    const resumed = lamer(['train', '--config', config, '--quiet', '--resume', '--set', `train.iterations=${saved + 1}`]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toContain(`iter ${saved + 1}/${saved + 1}`);
    // `lamer eval --model` on the run's checkpoint takes the run's own config (its 4x4 board, 3 turns), unless --config.
    const ckpt = join(
      dir,
      'tiny',
      'checkpoints',
      readdirSync(join(dir, 'tiny', 'checkpoints'))
        .filter((n) => /^ckpt-\d+$/.test(n))
        .sort()
        .at(-1)!,
    );
    const metrics = readFileSync(join(dir, 'tiny', 'metrics.jsonl'), 'utf8');
    const own = lamer(['eval', '--model', ckpt, '--tasks', '2', '--quiet']);
    expect(own.code, own.err).toBe(0);
    expect(own.err).toContain(`config ${join(dir, 'tiny', 'config.json')} (the run's own, beside the checkpoint)`);
    expect(own.out).toMatch(/^gigpo\s+minesweeper\s+2\s/m); // the run's method, not the default config's
    const told = lamer(['eval', '--model', ckpt, '--tasks', '2', '--config', config, '--quiet', '--method', 'zero-shot']);
    expect(told.code, told.err).toBe(0);
    expect(told.err).toContain(`config ${config}\n`);
    expect(readFileSync(join(dir, 'tiny', 'metrics.jsonl'), 'utf8')).toBe(metrics);
  }, 120_000);
});

describe('temporary files of interrupted writes', () => {
  it('a run removes those a killed process left (folders and files) when it starts, and leaves none when it ends', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-leftovers-'));
    // A pid that is not running: the kernel's limit is far below it.
    const dead = 4_194_303 + 1000;
    const run = join(dir, 'tiny');
    mkdirSync(join(run, 'checkpoints', `.ckpt-000002.tmp-${dead}`), { recursive: true });
    writeFileSync(join(run, 'checkpoints', `.ckpt-000002.tmp-${dead}`, 'model.safetensors'), 'partial');
    writeFileSync(join(run, `config.json.tmp-${dead}-1700000000000`), '{');
    // A write in flight of a live process (pid 1, always running) is left alone.
    writeFileSync(join(run, 'metrics.jsonl.tmp-1-1700000000000'), '');
    const config = tinyYaml(dir, { iterations: 2, checkpointEvery: 1 });
    const r = lamer(['train', '--config', config, '--quiet']);
    expect(r.code, r.err).toBe(0);
    const all = (d: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [e.name, ...all(join(d, e.name))] : [e.name]));
    const leftovers = all(run).filter((n) => /\.tmp-\d+/.test(n));
    expect(leftovers).toEqual(['metrics.jsonl.tmp-1-1700000000000']);
    expect(readdirSync(join(run, 'checkpoints')).filter((n) => /^ckpt-\d+$/.test(n)).length).toBeGreaterThan(0);
  }, 60_000);
});

describe('run folders are never overwritten', () => {
  it('a reused name is refused and the first run is unchanged; --resume on a finished run changes nothing; --name and --force', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-names-'));
    const config = tinyYaml(dir, { iterations: 1, checkpointEvery: 1 });
    const snapshot = (d: string): Record<string, string> =>
      Object.fromEntries(
        readdirSync(d, { withFileTypes: true, recursive: true })
          .filter((e) => e.isFile())
          .map((e) => {
            const p = join(e.parentPath, e.name);
            return [p, readFileSync(p).toString('base64')];
          }),
      );
    const first = lamer(['train', '--config', config, '--quiet']);
    expect(first.code, first.err).toBe(0);
    const before = snapshot(join(dir, 'tiny'));
    const again = lamer(['train', '--config', config, '--quiet']);
    expect(again.code).toBe(1);
    expect(again.err).toContain('[E_EXISTS]');
    expect(again.err).toMatch(/--resume.*--name NAME.*--force/);
    expect(snapshot(join(dir, 'tiny'))).toEqual(before);
    const resumed = lamer(['train', '--config', config, '--quiet', '--resume']);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toContain('has finished already');
    expect(snapshot(join(dir, 'tiny'))).toEqual(before);
    const named = lamer(['train', '--config', config, '--quiet', '--name', 'tiny-2']);
    expect(named.code, named.err).toBe(0);
    expect(readdirSync(join(dir, 'tiny-2'))).toContain('eval.json');
    const forced = lamer(['train', '--config', config, '--quiet', '--force']);
    expect(forced.code, forced.err).toBe(0);
    expect(lamer(['train', '--config', config, '--resume', '--force']).code).toBe(2);
  }, 120_000);
});
