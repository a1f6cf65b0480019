// What a resumed run checks in the checkpoint it continues, over a stand-in model runtime (the advantages run in the
// addon): the trainer state (trainer.json) read by one coded reader, its iteration within the run and the checkpoint's
// own; the model the config describes (the base's content, the LoRA settings) and the checkpoint's files against what
// was recorded when it was saved, with `force` (start over) the only way past a mismatch; an evaluation an interrupt
// cut short is run by the resumed run; a comparison job resumed after a method ended keeps that method's result.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEnv } from '../../../src/envs/registry.js';
import { LamerError, hasCode } from '../../../src/errors.js';
import { Trainer } from '../../../src/train/trainer.js';
import { runJob } from '../../../src/train/job.js';
import { rescoreJob } from '../../../src/train/rescore.js';
import { readTrainerState, STATE_FILE } from '../../../src/train/trainer-state.js';
import { validateConfig, type TrainerConfigInput } from '../../../src/train/config.js';
import type { EvalEvent, TrainerEvent } from '../../../src/train/events.js';
import { StandInRuntime } from './stand-in.js';

function config(runsDir: string, extra: Partial<TrainerConfigInput> = {}): TrainerConfigInput {
  return {
    name: 'run',
    runsDir,
    method: 'lamer',
    env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2, maxTurns: 3 } },
    model: { promptStyle: 'compact', device: 'cpu' },
    trial: { episodes: 2 },
    rollout: { tasksPerIteration: 2, groupSize: 2 },
    train: { iterations: 4, evalEvery: 2, checkpointEvery: 1 },
    eval: { tasks: 3 },
    sft: { trials: 0 },
    ...extra,
  };
}

const quiet = { runtime: async () => new StandInRuntime(), progress: false, log: () => {} };

async function collect(trainer: Trainer, opts: Parameters<Trainer['run']>[0] = {}): Promise<TrainerEvent[]> {
  const out: TrainerEvent[] = [];
  for await (const e of trainer.run(opts)) out.push(e);
  return out;
}

/** The error a promise rejects with. */
async function failure(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('expected a failure');
}

const metricRows = (runDir: string) =>
  readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as TrainerEvent);

/** A run stopped after iteration 2 (checkpoints 1 and 2); returns its folder. */
async function stoppedRun(runsDir: string, extra: Partial<TrainerConfigInput> = {}): Promise<string> {
  await collect(new Trainer(config(runsDir, extra), quiet), { untilIteration: 2 });
  return join(runsDir, 'run');
}

const ckpt2 = (runDir: string) => join(runDir, 'checkpoints', 'ckpt-000002');

function editState(runDir: string, edit: (s: Record<string, unknown>) => void, ckpt = ckpt2(runDir)): void {
  const path = join(ckpt, STATE_FILE);
  const state = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  edit(state);
  writeFileSync(path, JSON.stringify(state));
}

describe('an interrupt during an evaluation', () => {
  it('the resumed run evaluates the iteration whose evaluation was cut short, once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-eval-interrupt-'));
    const controller = new AbortController();
    let armed = false;
    const env = (evaluation: boolean) => {
      // Iteration 2 has completed and its evaluation (evalEvery 2) is playing its first task: stop here.
      if (evaluation && armed) controller.abort(new LamerError('E_INTERRUPTED', 'interrupted by the test'));
      return createEnv('minesweeper', { rows: 4, cols: 4, mines: 2, maxTurns: 3 });
    };
    const trainer = new Trainer(config(dir), { ...quiet, env });
    const first: TrainerEvent[] = [];
    const stopped = await failure(
      (async () => {
        for await (const e of trainer.run({ signal: controller.signal })) {
          first.push(e);
          if (e.type === 'iteration' && e.iteration === 2) armed = true;
        }
      })(),
    );
    expect(hasCode(stopped, 'E_INTERRUPTED'), String(stopped)).toBe(true);
    expect(first.filter((e) => e.type === 'eval')).toEqual([]);
    armed = false;
    const resumed = await collect(new Trainer(config(dir), { ...quiet, env }), { resume: true });
    expect(resumed.filter((e) => e.type === 'eval').map((e) => (e as EvalEvent).iteration)).toEqual([2, 4]);
    expect(resumed.filter((e) => e.type === 'iteration').map((e) => (e as { iteration: number }).iteration)).toEqual([3, 4]);
    // The run's record holds each iteration and each evaluation once.
    const rows = metricRows(join(dir, 'run'));
    expect(rows.filter((e) => e.type === 'eval').map((e) => (e as EvalEvent).iteration)).toEqual([2, 4]);
    expect(rows.filter((e) => e.type === 'iteration').map((e) => (e as { iteration: number }).iteration)).toEqual([1, 2, 3, 4]);
  });

  it('interrupted again during the resumed evaluation, the next resume still evaluates it, and the record holds it once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-eval-interrupt-twice-'));
    let stopAt: 'first' | 'resumed' | null = 'first';
    let controller = new AbortController();
    let armed = false;
    const env = (evaluation: boolean) => {
      if (evaluation && armed) controller.abort(new LamerError('E_INTERRUPTED', 'interrupted by the test'));
      return createEnv('minesweeper', { rows: 4, cols: 4, mines: 2, maxTurns: 3 });
    };
    const runUntilStopped = async (resume: boolean) =>
      failure(
        (async () => {
          for await (const e of new Trainer(config(dir), { ...quiet, env }).run({ signal: controller.signal, resume })) {
            if (stopAt === 'first' && e.type === 'iteration' && e.iteration === 2) armed = true;
            if (stopAt === 'resumed' && e.type === 'log') armed = true; // "resumed from ...": the pending evaluation comes next
          }
        })(),
      );
    expect((await runUntilStopped(false)).code).toBe('E_INTERRUPTED');
    stopAt = 'resumed';
    armed = false;
    controller = new AbortController();
    expect((await runUntilStopped(true)).code).toBe('E_INTERRUPTED');
    armed = false;
    stopAt = null;
    const resumed = await collect(new Trainer(config(dir), { ...quiet, env }), { resume: true });
    expect(resumed.filter((e) => e.type === 'eval').map((e) => (e as EvalEvent).iteration)).toEqual([2, 4]);
    const rows = metricRows(join(dir, 'run'));
    expect(rows.filter((e) => e.type === 'eval').map((e) => (e as EvalEvent).iteration)).toEqual([2, 4]);
  });

  it('a comparison job resumed after one method finished keeps that method in its results', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-job-resume-'));
    const job = validateConfig({ ...config(dir, { train: { iterations: 2, evalEvery: 0, checkpointEvery: 1 } }), name: 'job', compare: ['lamer', 'gigpo'] });
    const controller = new AbortController();
    const stopped = await failure(
      runJob(job, {
        ...quiet,
        signal: controller.signal,
        onEvent: (e, method) => {
          if (method === 'gigpo' && e.type === 'iteration' && e.iteration === 1) controller.abort(new LamerError('E_INTERRUPTED', 'test'));
        },
      }),
    );
    expect(stopped.code).toBe('E_INTERRUPTED');
    const resumed = await runJob(job, { ...quiet, resume: true });
    expect(resumed.results.map((r) => r.method)).toEqual(['lamer', 'gigpo', 'random', 'random-memory']);
    const saved = JSON.parse(readFileSync(join(dir, 'job', 'eval.json'), 'utf8')) as { method: string }[];
    expect(saved.map((r) => r.method)).toEqual(['lamer', 'gigpo', 'random', 'random-memory']);
  });
});

describe('the trainer state of a resumed checkpoint', () => {
  it('a missing or broken trainer.json is a coded error naming the file', async () => {
    const runDir = await stoppedRun(mkdtempSync(join(tmpdir(), 'lamer-state-')));
    const path = join(ckpt2(runDir), STATE_FILE);
    const kept = readFileSync(path, 'utf8');
    rmSync(path);
    let e = await failure(collect(new Trainer(config(join(runDir, '..')), quiet), { resume: true }));
    expect(e.code, String(e)).toBe('E_CHECKPOINT');
    expect(e.message).toContain(path);
    writeFileSync(path, '{"iteration": 2,');
    e = await failure(collect(new Trainer(config(join(runDir, '..')), quiet), { resume: true }));
    expect(e.code, String(e)).toBe('E_CHECKPOINT');
    expect(e.message).toContain(path);
    expect(e.message).toMatch(/not valid JSON/);
    writeFileSync(path, kept);
    const resumed = await collect(new Trainer(config(join(runDir, '..')), quiet), { resume: true });
    expect(resumed.filter((x) => x.type === 'iteration').map((x) => (x as { iteration: number }).iteration)).toEqual([3, 4]);
  });

  it('an iteration past the run, another than the checkpoint folder says, or not a count is refused', async () => {
    const runsDir = mkdtempSync(join(tmpdir(), 'lamer-state-iter-'));
    const runDir = await stoppedRun(runsDir);
    const path = join(ckpt2(runDir), STATE_FILE);
    const kept = readFileSync(path, 'utf8');
    const cases: [unknown, RegExp][] = [
      [9, /iteration 9.*ckpt-000002 holds iteration 2/],
      [1, /iteration 1.*ckpt-000002 holds iteration 2/],
      [2.5, /iteration.*2\.5/],
      [-2, /iteration.*-2/],
      ['2', /iteration.*"2"/],
      [1e9, /iteration/],
    ];
    for (const [iteration, message] of cases) {
      writeFileSync(path, kept);
      editState(runDir, (s) => (s.iteration = iteration));
      const e = await failure(collect(new Trainer(config(runsDir), quiet), { resume: true }));
      expect(e.code, `${JSON.stringify(iteration)}: ${String(e)}`).toBe('E_CHECKPOINT');
      expect(e.message, String(iteration)).toMatch(message);
      expect(e.message).toContain(path);
    }
    // The run ends earlier than the checkpoint: refused, not recorded as finished with nothing trained.
    writeFileSync(path, kept);
    let e = await failure(collect(new Trainer(config(runsDir, { train: { iterations: 1, evalEvery: 2, checkpointEvery: 1 } }), quiet), { resume: true }));
    expect(e.code, String(e)).toBe('E_CHECKPOINT');
    expect(e.message).toMatch(/iteration 2 is past the run's end \(train\.iterations is 1\)/);
    // A checkpoint of iteration 9 in a run of 4.
    const nine = join(runDir, 'checkpoints', 'ckpt-000009');
    renameSync(ckpt2(runDir), nine);
    writeFileSync(join(runDir, 'checkpoints', 'latest'), 'ckpt-000009\n');
    editState(runDir, (s) => (s.iteration = 9), nine);
    e = await failure(collect(new Trainer(config(runsDir), quiet), { resume: true }));
    expect(e.code, String(e)).toBe('E_CHECKPOINT');
    expect(e.message).toMatch(/iteration 9 is past the run's end \(train\.iterations is 4\)/);
    expect(metricRows(runDir).filter((x) => x.type === 'iteration')).toHaveLength(2);
  });

  it('re-scoring reads the checkpoint state with the same reader', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-rescore-state-'));
    const job = validateConfig({ ...config(dir, { train: { iterations: 1, evalEvery: 0, checkpointEvery: 1 } }), name: 'job', compare: ['lamer'] });
    await runJob(job, quiet);
    const state = join(dir, 'job', 'lamer', 'checkpoints', 'ckpt-000001', STATE_FILE);
    expect(readTrainerState(join(dir, 'job', 'lamer', 'checkpoints', 'ckpt-000001')).iteration).toBe(1);
    writeFileSync(state, 'not json');
    const e = await failure(rescoreJob(join(dir, 'job'), { out: join(dir, 'rescored'), runtime: quiet.runtime, progress: false, log: () => {} }));
    expect(e.code, String(e)).toBe('E_CHECKPOINT');
    expect(e.message).toContain(state);
  });
});

describe('the model a resumed run continues', () => {
  it('a changed LoRA rank is refused with the field and both hashes; force starts over', async () => {
    const runsDir = mkdtempSync(join(tmpdir(), 'lamer-resume-lora-'));
    await stoppedRun(runsDir, { model: { promptStyle: 'compact', device: 'cpu', lora: { r: 8 } } });
    const changed = config(runsDir, { model: { promptStyle: 'compact', device: 'cpu', lora: { r: 16 } } });
    const e = await failure(collect(new Trainer(changed, quiet), { resume: true }));
    expect(e.code, String(e)).toBe('E_CONFIG');
    expect(e.message).toMatch(/model\.lora\.r: 16 in the config, 8 when/);
    expect(e.message).toMatch(/sha256 [0-9a-f]{12}.*sha256 [0-9a-f]{12}/);
    expect(e.message).toMatch(/--force/);
    // Through a job as the CLI runs it: --resume refused, --force replaces the run.
    await expect(runJob(validateConfig(changed), { ...quiet, resume: true })).rejects.toThrow(/model\.lora\.r/);
    const forced = await runJob(validateConfig(changed), { ...quiet, force: true });
    expect(forced.results).toHaveLength(1);
    // The same settings resume.
    const same = await collect(new Trainer(changed, quiet), { resume: true });
    expect(same.some((x) => x.type === 'log' && /resumed from/.test(x.message))).toBe(true);
  });

  it('a base whose content changed is refused with model.path and both hashes', async () => {
    const runsDir = mkdtempSync(join(tmpdir(), 'lamer-resume-base-'));
    const base = join(runsDir, 'base');
    mkdirSync(base);
    writeFileSync(join(base, 'config.json'), '{"model_type": "qwen3"}');
    writeFileSync(join(base, 'model.safetensors'), 'weights v1');
    const withBase = { model: { promptStyle: 'compact' as const, device: 'cpu', path: base } };
    await stoppedRun(runsDir, withBase);
    writeFileSync(join(base, 'model.safetensors'), 'weights v2');
    const e = await failure(collect(new Trainer(config(runsDir, withBase), quiet), { resume: true }));
    expect(e.code, String(e)).toBe('E_CONFIG');
    expect(e.message).toContain('model.path');
    expect(e.message).toContain(base);
    expect(e.message).toMatch(/sha256 [0-9a-f]{12}.*sha256 [0-9a-f]{12}/);
    // Moved, with the same content: resumes.
    writeFileSync(join(base, 'model.safetensors'), 'weights v1');
    const resumed = await collect(new Trainer(config(runsDir, withBase), quiet), { resume: true });
    expect(resumed.some((x) => x.type === 'iteration')).toBe(true);
  });

  it('a checkpoint file that changed after it was saved is refused with its name and both hashes', async () => {
    const runsDir = mkdtempSync(join(tmpdir(), 'lamer-resume-files-'));
    const runDir = await stoppedRun(runsDir);
    writeFileSync(join(ckpt2(runDir), 'theta.json'), '5');
    const e = await failure(collect(new Trainer(config(runsDir), quiet), { resume: true }));
    expect(e.code, String(e)).toBe('E_CHECKPOINT');
    expect(e.message).toContain(join(ckpt2(runDir), 'theta.json'));
    expect(e.message).toMatch(/sha256 [0-9a-f]{12}.*sha256 [0-9a-f]{12}/);
    // A state that records no model (an edited or foreign trainer.json) is refused too.
    editState(runDir, (s) => delete s.model);
    const missing = await failure(collect(new Trainer(config(runsDir), quiet), { resume: true }));
    expect(missing.code, String(missing)).toBe('E_CHECKPOINT');
    expect(missing.message).toMatch(/records no model/);
  });
});
