// The project-local Python (torch + transformers) that the parity tests (test/parity/) use as their independent
// reference. scripts/pyenv.sh creates it; globalSetup (setup-python.ts) runs it once before the workers start, and
// parityPython() here runs it too when a file is run on its own. Where it cannot be created a parity test skips with
// the reason, except under CI, where the test file fails instead (parityPython), so CI cannot pass without them.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { root, tempDir } from '../helpers/index.js';

export const python = join(root, '.venv', 'bin', 'python');

export interface PythonStatus {
  ok: boolean;
  /** Why the reference is unavailable (pip could not install), shown in skipped tests. */
  reason: string;
}

let status: PythonStatus | undefined;

/** Creates .venv if needed; never throws: a failure is returned (parityPython decides between a skip and a failure). */
export function ensurePython(): PythonStatus {
  if (status) return status;
  const r = spawnSync('bash', [join(root, 'scripts', 'pyenv.sh')], { encoding: 'utf8', timeout: 900_000 });
  status =
    r.status === 0 && existsSync(python)
      ? { ok: true, reason: '' }
      : {
          ok: false,
          reason: `scripts/pyenv.sh could not create the Python reference environment (exit ${r.status}): ${(r.stderr || r.stdout || '').trim().slice(-600)}`,
        };
  return status;
}

/** Whether `env` is a CI run's: CI set to anything but '', '0' or 'false' (as CI services set it, and .ci/run). */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.CI ?? '').trim().toLowerCase();
  return v !== '' && v !== '0' && v !== 'false';
}

/**
 * The reference environment for a parity test file, called at the file's top: `ok`, or the reason it is missing, for
 * the file's tests to skip with. Under CI (isCi) a missing environment throws instead, failing the file with the
 * reason and what to do, so a CI run cannot pass with its parity tests skipped.
 */
export function parityPython(status: PythonStatus = ensurePython(), env: NodeJS.ProcessEnv = process.env): PythonStatus {
  if (status.ok || !isCi(env)) return status;
  throw new Error(
    `the parity tests (test/parity/) need the Python reference environment (.venv with torch, transformers, peft and tensorboard), and ${status.reason}. ` +
      `Under CI (CI=${env.CI}) that is a failure, not a skip: give the machine a package index pip can reach, or create .venv with scripts/pyenv.sh before the tests.`,
  );
}

/**
 * One long-lived scripts/py/oracle.py process per test file: torch and transformers are imported once, then each
 * request (make a checkpoint, compute a reference, apply a chat template) costs only its own work.
 */
export class Oracle {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #waiting: { resolve: (v: unknown) => void; reject: (e: Error) => void }[] = [];
  #buffer = '';
  #stderr = '';

  constructor() {
    this.#child = spawn(python, [join(root, 'scripts', 'py', 'oracle.py')], {
      env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error', HF_HUB_OFFLINE: '1', TOKENIZERS_PARALLELISM: 'false' },
    });
    this.#child.stdout.setEncoding('utf8');
    this.#child.stdout.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let nl: number;
      while ((nl = this.#buffer.indexOf('\n')) >= 0) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        const w = this.#waiting.shift();
        if (!w) continue;
        const reply = JSON.parse(line) as { ok: boolean; result?: unknown; error?: string };
        if (reply.ok) w.resolve(reply.result);
        else w.reject(new Error(`oracle: ${reply.error}`));
      }
    });
    this.#child.stderr.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString()).slice(-4000);
    });
    this.#child.on('exit', (code) => {
      for (const w of this.#waiting.splice(0)) w.reject(new Error(`oracle exited (${code}): ${this.#stderr}`));
    });
  }

  request<T>(req: Record<string, unknown>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({ resolve: resolve as (v: unknown) => void, reject });
      this.#child.stdin.write(`${JSON.stringify(req)}\n`);
    });
  }

  /** A tiny random checkpoint written by transformers' save_pretrained (scripts/py/make_checkpoint.py). */
  async makeCheckpoint(args: string[]): Promise<string> {
    const dir = tempDir('ckpt');
    await this.request({ op: 'make', args: ['--out', dir, ...args] });
    return dir;
  }

  /** transformers' log-probs (and logits) of each sequence run alone, in float32. */
  reference(modelDir: string, sequences: number[][], options: { starts?: number[]; temperature?: number; logits?: boolean } = {}): Promise<Reference> {
    return this.request<Reference>({
      op: 'reference',
      model: modelDir,
      request: { sequences, starts: options.starts ?? sequences.map(() => 1), temperature: options.temperature ?? 1, logits: options.logits ?? false },
    });
  }

  close(): void {
    this.#child.stdin.end();
  }
}

export interface Reference {
  logprobs: number[][];
  logits: number[][][];
}
