// A warm start cut short and resumed (sft.checkpointEvery, `--resume`) takes the steps one never cut would have taken:
// the same losses and bit for bit the same weights, whether it stopped by signal (saving where it stood) in any phase,
// during a round of the model's own trials, or by a crash (continuing from its last periodic save). Measured against the
// same warm start run through once: a WebShop warm start with reflection-only steps, all rows, and two rounds of the
// model's own trials, as configs/webshop-cpu.yaml has them, small.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateConfig, type TrainerConfig } from '../../../src/train/config.js';
import { createNativeRuntime } from '../../../src/train/native-runtime.js';
import type { PolicyRuntime } from '../../../src/train/runtime.js';
import { WARM_START_SAVES, warmStart } from '../../../src/train/warm-start.js';
import { hasCode, LamerError } from '../../../src/errors.js';
import { runJob } from '../../../src/train/job.js';
import { removeTempDirs, tempDir } from '../../helpers/index.js';
import { collect, tinyJob, tinyNativeConfig } from './helpers.js';
import { Trainer } from '../../../src/train/trainer.js';

afterAll(() => removeTempDirs());

const config = (runsDir: string, sft: Record<string, unknown> = {}): TrainerConfig =>
  validateConfig({
    name: 'ws',
    runsDir,
    model: { init: { preset: 'tiny', tokenizer: 'compact-webshop', seed: 0 }, promptStyle: 'compact' },
    env: { name: 'webshop', options: { maxTurns: 4 } },
    trial: { episodes: 2, markRefused: true },
    rollout: { groupSize: 2, maxResponseTokens: 24 },
    sft: {
      trials: 16,
      trialsPerTask: 1,
      reflectSteps: 4,
      steps: 10,
      batchRows: 8,
      unlikelihood: 1,
      mistakeTrials: 4,
      mistakeSteps: 5,
      mistakeRounds: 2,
      checkpointEvery: 3,
      ...sft,
    },
  });

/** The steps of the warm start above: 4 on reflections, 10 on all rows, 5 after each of two rounds of trials. */
const STEPS = 24;

interface Outcome {
  losses: number[];
  weights: Buffer;
}

/**
 * Runs the warm start in `runsDir` on a fresh runtime. `stopAfter`: abort (as SIGINT does) once that many supervised
 * steps of this process completed, or when the model's own trials first sample (`'trials'`); `crashAt`: that step
 * throws. Returns the losses and the weights, or the error it stopped with.
 */
async function run(
  runsDir: string,
  opts: { resume?: boolean; stopAfter?: number | 'trials'; crashAt?: number; sft?: Record<string, unknown> } = {},
): Promise<Outcome | Error> {
  const c = config(runsDir, opts.sft);
  const runtime = await createNativeRuntime(c, join(runsDir, 'ws'));
  const controller = new AbortController();
  let steps = 0;
  const wrapped: PolicyRuntime = {
    save: (dir) => runtime.save(dir),
    restore: (dir) => runtime.restore(dir),
    saveSupervised: (dir) => runtime.saveSupervised!(dir),
    restoreSupervised: (dir) => runtime.restoreSupervised!(dir),
    resetCaches: () => runtime.resetCaches?.(),
    update: (batch, c) => runtime.update(batch, c),
    dispose: () => runtime.dispose(),
    supervised: async (batch, c) => {
      if (++steps === opts.crashAt) throw new Error('crash');
      const out = await runtime.supervised(batch, c);
      if (steps === opts.stopAfter) controller.abort(new Error('stopped'));
      return out;
    },
    client: () => {
      if (opts.stopAfter === 'trials') controller.abort(new Error('stopped'));
      return runtime.client();
    },
  };
  try {
    const losses = await warmStart(c, wrapped, {
      silent: true,
      signal: controller.signal,
      checkpointDir: join(runsDir, 'ws', WARM_START_SAVES),
      resume: opts.resume,
    });
    await runtime.save(join(runsDir, 'out'));
    return { losses, weights: readFileSync(join(runsDir, 'out', 'model.safetensors')) };
  } catch (e) {
    return e as Error;
  } finally {
    await runtime.dispose();
  }
}

const savedState = (runsDir: string) =>
  JSON.parse(readFileSync(join(runsDir, 'ws', WARM_START_SAVES, 'warm-start.json'), 'utf8')) as {
    phase: number;
    step: number;
    played: boolean;
    losses: number[];
    settings: { sft: Record<string, unknown> };
  };

describe('a warm start resumed from its saves (sft.checkpointEvery)', () => {
  let whole: Outcome;
  it('runs through once: the reference', async () => {
    const out = await run(tempDir('ws-whole'));
    expect(out).not.toBeInstanceOf(Error);
    whole = out as Outcome;
    expect(whole.losses.length).toBe(STEPS);
  }, 300_000);

  // Stops: in the reflection-only phase, in the phase on all rows, at the end of the phase on all rows (the save
  // between phases), in the model's first round of trials, and in the steps after the second round.
  const stops: [string, number | 'trials', { phase: number; step: number; played: boolean }][] = [
    ['the reflection-only phase', 2, { phase: 0, step: 2, played: false }],
    ['the phase on all rows', 9, { phase: 1, step: 5, played: false }],
    ["the phase on all rows' end", 14, { phase: 2, step: 0, played: false }],
    ["the model's own trials", 'trials', { phase: 2, step: 0, played: false }],
    ['the steps after the second round of trials', 21, { phase: 3, step: 2, played: true }],
  ];
  for (const [where, stopAfter, at] of stops) {
    it(`stopped by signal in ${where}, saves where it stood and resumes to the same weights`, async () => {
      const dir = tempDir('ws-stop');
      const stopped = await run(dir, { stopAfter });
      expect(stopped).toBeInstanceOf(Error);
      expect((stopped as Error).message).toMatch(/stopped/);
      const state = savedState(dir);
      expect({ phase: state.phase, step: state.step, played: state.played }).toEqual(at);
      const resumed = await run(dir, { resume: true });
      expect(resumed).not.toBeInstanceOf(Error);
      expect((resumed as Outcome).losses).toEqual(whole.losses);
      expect((resumed as Outcome).weights.equals(whole.weights)).toBe(true);
    }, 300_000);
  }

  it('after a crash, resumes from the last periodic save to the same weights; the saves hold the finished state', async () => {
    const dir = tempDir('ws-crash');
    const crashed = await run(dir, { crashAt: 8 });
    expect((crashed as Error).message).toBe('crash');
    expect(savedState(dir)).toMatchObject({ phase: 1, step: 2 }); // steps 4 + 2 = 6: the last multiple of 3
    expect(savedState(dir).losses.length).toBe(6);
    const resumed = (await run(dir, { resume: true })) as Outcome;
    expect(resumed.losses).toEqual(whole.losses);
    expect(resumed.weights.equals(whole.weights)).toBe(true);
    // The finished warm start is saved too (the caller removes the folder once it saved the weights elsewhere), and a
    // resume from it takes no step.
    expect(savedState(dir).losses.length).toBe(STEPS);
    const again = (await run(dir, { resume: true, crashAt: 1 })) as Outcome;
    expect(again.losses).toEqual(whole.losses);
    expect(again.weights.equals(whole.weights)).toBe(true);
  }, 300_000);

  it('refuses to resume under other settings, naming the field; sft.checkpointEvery 0 saves nothing', async () => {
    const dir = tempDir('ws-other');
    await run(dir, { stopAfter: 2 });
    // sft.swapValues came after warm starts were saved without it: at its default it is left out of the settings, so
    // that those resume.
    expect(Object.keys(savedState(dir).settings.sft)).not.toContain('swapValues');
    expect(Object.keys(savedState(dir).settings.sft)).toContain('swapIds');
    const other = await run(dir, { resume: true, sft: { lr: 5e-4 } });
    expect(hasCode(other, 'E_CONFIG')).toBe(true);
    expect((other as Error).message).toMatch(/sft\.lr differs/);
    // Another save interval is the same warm start.
    const resumed = (await run(dir, { resume: true, sft: { checkpointEvery: 7 } })) as Outcome;
    expect(resumed.losses).toEqual(whole.losses);
    const none = tempDir('ws-none');
    await run(none, { stopAfter: 2, sft: { checkpointEvery: 0 } });
    expect(existsSync(join(none, 'ws', WARM_START_SAVES))).toBe(false);
  }, 300_000);
});

/** A native runtime factory whose runtimes abort `controller` (as SIGINT does) after `n` supervised steps in all. */
function stoppingAfter(n: number) {
  const controller = new AbortController();
  let steps = 0;
  const stopping = async (c: TrainerConfig, runDir: string) => {
    const runtime = await createNativeRuntime(c, runDir);
    const supervised = runtime.supervised.bind(runtime);
    runtime.supervised = async (batch, cfg) => {
      const out = await supervised(batch, cfg);
      if (++steps === n) controller.abort(new LamerError('E_INTERRUPTED', 'interrupted by the test'));
      return out;
    };
    return runtime;
  };
  return { controller, stopping };
}

describe('a comparison job stopped in its warm start', () => {
  /** The tiny MineSweeper job with a 12-step warm start saved every 4 steps. */
  const job = (dir: string) => validateConfig(tinyJob(dir, { sft: { steps: 12, checkpointEvery: 4 } }));

  it('refuses to start over it without --resume, and resumes to the results and warm start of a job never stopped', async () => {
    const whole = tempDir('job-whole');
    const reference = await runJob(job(whole), { runtime: createNativeRuntime, progress: false, log: () => {} });
    const dir = tempDir('job-stop');
    const { controller, stopping } = stoppingAfter(6);
    const stopped = await runJob(job(dir), { runtime: stopping, progress: false, log: () => {}, signal: controller.signal }).catch((e: unknown) => e);
    expect(hasCode(stopped, 'E_INTERRUPTED'), String(stopped)).toBe(true);
    const saves = join(dir, 'tiny', WARM_START_SAVES);
    expect(JSON.parse(readFileSync(join(saves, 'warm-start.json'), 'utf8')).losses.length).toBe(6);
    const again = await runJob(job(dir), { runtime: createNativeRuntime, progress: false, log: () => {} }).catch((e: unknown) => e);
    expect(hasCode(again, 'E_EXISTS'), String(again)).toBe(true);
    const lines: string[] = [];
    const resumed = await runJob(job(dir), { runtime: createNativeRuntime, progress: false, log: (l) => lines.push(l), resume: true });
    expect(lines.join('\n')).toMatch(/\[sft\] resumed from .*: 6 steps done/);
    expect(resumed.table).toBe(reference.table);
    expect(
      readFileSync(join(dir, 'tiny', 'warm-start', 'model.safetensors')).equals(readFileSync(join(whole, 'tiny', 'warm-start', 'model.safetensors'))),
    ).toBe(true);
    expect(existsSync(saves)).toBe(false); // gone once the warm start is saved
  }, 300_000);
});

describe('a single run stopped in its warm start', () => {
  const single = (dir: string) =>
    validateConfig({
      ...tinyNativeConfig('one', dir),
      train: { iterations: 1, evalEvery: 0, checkpointEvery: 1 },
      eval: { tasks: 2 },
      sft: { trials: 4, steps: 12, reflectSteps: 0, batchRows: 4, checkpointEvery: 4 },
    });
  const weights = (dir: string) => readFileSync(join(dir, 'one', 'checkpoints', 'ckpt-000001', 'model.safetensors'));

  it('resumes with --resume to the first checkpoint of a run never stopped, whose save removes the warm-start saves', async () => {
    const whole = tempDir('one-whole');
    await collect(new Trainer(single(whole), { runtime: createNativeRuntime, progress: false, log: () => {} }));
    const dir = tempDir('one-stop');
    const { controller, stopping } = stoppingAfter(5);
    const stopped = await collect(new Trainer(single(dir), { runtime: stopping, progress: false, log: () => {} }), { signal: controller.signal }).catch(
      (e: unknown) => e,
    );
    expect(hasCode(stopped, 'E_INTERRUPTED'), String(stopped)).toBe(true);
    expect(existsSync(join(dir, 'one', WARM_START_SAVES, 'warm-start.json'))).toBe(true);
    await collect(new Trainer(single(dir), { runtime: createNativeRuntime, progress: false, log: () => {} }), { resume: true });
    expect(weights(dir).equals(weights(whole))).toBe(true);
    expect(existsSync(join(dir, 'one', WARM_START_SAVES))).toBe(false);
  }, 300_000);
});
