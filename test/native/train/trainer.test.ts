// The training loop over a light stand-in runtime: a scripted player whose randomness depends on one trained
// number, so rollouts depend on the training state and a resumed run can be compared with an uninterrupted one.
import { describe, expect, it } from 'vitest';
import { withoutTimings } from '../../helpers/index.js';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptedPolicy } from '../../../src/rollout/scripted.js';
import { createEnv } from '../../../src/envs/registry.js';
import { TRANSCRIPTS_FILE, Trainer } from '../../../src/train/trainer.js';
import { runJob } from '../../../src/train/job.js';
import { rescoreJob } from '../../../src/train/rescore.js';
import { latestCheckpoint } from '../../../src/train/checkpoint.js';
import { validateConfig } from '../../../src/train/config.js';
import { codeVersion } from '../../../src/train/code-version.js';
import type { PolicyRuntime, UpdateBatch } from '../../../src/train/runtime.js';
import type { TrainerConfigInput } from '../../../src/train/config.js';
import type { IterationEvent, TrainerEvent } from '../../../src/train/events.js';
import { collect } from './helpers.js';

class StandInRuntime implements PolicyRuntime {
  theta = 0;
  supervisedSteps = 0;
  /** The responses of each supervised batch. */
  readonly supervisedResponses: string[][] = [];
  constructor(private readonly failAt: number[] = []) {}
  #updates = 0;
  /** Prompt and response tokens of each update batch. */
  readonly batchTokens: { prompt: number; response: number }[] = [];
  client() {
    const noise = 1 / (1 + Math.exp(this.theta)); // trained number -> how often the player moves at random
    return scriptedPolicy({ noise, seed: Math.round(this.theta * 1e6) });
  }
  async update(batch: UpdateBatch) {
    this.#updates++;
    const count = (rows: Int32Array[]) => rows.reduce((n, r) => n + r.length, 0);
    this.batchTokens.push({ prompt: count(batch.promptIds), response: count(batch.responseIds) });
    const broken = this.failAt.includes(this.#updates);
    let s = 0;
    for (const a of batch.advantages) s += a;
    if (!broken) this.theta += 0.1 + 0.01 * (s / Math.max(1, batch.advantages.length));
    return {
      loss: broken ? NaN : -this.theta,
      clipFraction: 0,
      approxKl: 0,
      entropy: 1,
      gradNorm: 1,
      steps: broken ? 0 : 1,
      skipped: broken ? 1 : 0,
      tokens: 10,
    };
  }
  async supervised(batch: { responses: string[] }) {
    this.supervisedSteps++;
    this.supervisedResponses.push(batch.responses.slice());
    return { loss: 1 / this.supervisedSteps, tokens: 5 };
  }
  async save(dir: string) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'theta.json'), JSON.stringify(this.theta));
  }
  async restore(dir: string) {
    this.theta = JSON.parse(readFileSync(join(dir, 'theta.json'), 'utf8')) as number;
  }
  async dispose() {}
}

function config(runsDir: string, extra: Partial<TrainerConfigInput> = {}): TrainerConfigInput {
  return {
    name: 'test',
    runsDir,
    method: 'lamer',
    env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2 } },
    model: { promptStyle: 'compact' },
    rollout: { tasksPerIteration: 3, groupSize: 2 },
    train: { iterations: 4, evalEvery: 2, checkpointEvery: 1 },
    eval: { tasks: 4 },
    ...extra,
  };
}

const stable = (e: IterationEvent) => withoutTimings(e);

describe('Trainer loop', () => {
  it('runs iterations, evaluates every evalEvery, checkpoints, and logs metrics.jsonl', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-trainer-'));
    const rt = new StandInRuntime();
    const logged: string[] = [];
    const events = await collect(new Trainer(config(dir), { runtime: async () => rt, progress: false, log: (l) => logged.push(l) }));
    const its = events.filter((e): e is IterationEvent => e.type === 'iteration');
    expect(its.map((e) => e.iteration)).toEqual([1, 2, 3, 4]);
    // LaMer at K = 2, N = 3: 3 tasks x 2 trials; rows include reflections.
    expect(its[0].rows).toBeGreaterThan(0);
    // Token counts are those of the batch the update received.
    expect(its.map((e) => ({ prompt: e.promptTokens, response: e.tokens }))).toEqual(rt.batchTokens);
    expect(its[0].promptTokens).toBeGreaterThan(its[0].tokens);
    // The stand-in's reflections are the scripted expert's, which state the facts right; the count reaches the log.
    const checks = its.map((e) => e.reflectionChecks);
    expect(checks.every((c) => c !== undefined && c.checked > 0 && c.correct === c.checked)).toBe(true);
    expect(logged.filter((l) => l.includes(`reflections right ${checks[0]!.correct} of ${checks[0]!.checked} (100.0%)`)).length).toBeGreaterThan(0);
    expect(events.filter((e) => e.type === 'eval').map((e) => (e as { iteration: number }).iteration)).toEqual([2, 4]);
    expect(events.filter((e) => e.type === 'checkpoint')).toHaveLength(4);
    const lines = readFileSync(join(dir, 'test', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(lines.length).toBe(events.length);
    expect(rt.theta).toBeGreaterThan(0.39);
    // The run folder keeps the latest evaluation's transcripts: one line per held-out task, from iteration 4.
    const evalEvent = events.filter((e) => e.type === 'eval').at(-1) as { tasks: number; firstWin: number[] };
    const trials = readFileSync(join(dir, 'test', TRANSCRIPTS_FILE), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(trials).toHaveLength(evalEvent.tasks);
    expect(trials.every((t) => t.method === 'lamer' && t.iteration === 4 && t.episodes.length > 0)).toBe(true);
    expect(trials.map((t) => t.wonEpisode)).toEqual(evalEvent.firstWin);
  });

  it('a method without reflections reports no reflection checks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-trainer-gigpo-'));
    const logged: string[] = [];
    const events = await collect(
      new Trainer(config(dir, { method: 'gigpo', train: { iterations: 1, evalEvery: 0, checkpointEvery: 0 } }), {
        runtime: async () => new StandInRuntime(),
        progress: false,
        log: (l) => logged.push(l),
      }),
    );
    const its = events.filter((e): e is IterationEvent => e.type === 'iteration');
    expect(its).toHaveLength(1);
    expect(its[0].reflectionChecks).toBeUndefined();
    expect(logged.some((l) => l.includes('[gigpo] iter 1/1') && !l.includes('reflections right'))).toBe(true);
  });

  it('a resumed run produces the same metrics as an uninterrupted one', async () => {
    const a = mkdtempSync(join(tmpdir(), 'lamer-trainer-a-'));
    const full = await collect(new Trainer(config(a), { runtime: async () => new StandInRuntime(), progress: false, log: () => {} }));
    const b = mkdtempSync(join(tmpdir(), 'lamer-trainer-b-'));
    await collect(new Trainer(config(b), { runtime: async () => new StandInRuntime(), progress: false, log: () => {} }), { untilIteration: 2 });
    const resumed = await collect(new Trainer(config(b), { runtime: async () => new StandInRuntime(), progress: false, log: () => {} }), { resume: true });
    expect(resumed[0]).toMatchObject({ type: 'log', message: expect.stringContaining('resumed') });
    const pick = (evs: TrainerEvent[]) => evs.filter((e): e is IterationEvent => e.type === 'iteration').map(stable);
    expect(pick(resumed)).toEqual(pick(full).slice(2));
    const evals = (evs: TrainerEvent[]) => evs.filter((e) => e.type === 'eval').map(withoutTimings);
    expect(evals(resumed)).toEqual(evals(full).slice(1));
    // The resumed run's metrics file holds the whole run once.
    const lines = readFileSync(join(b, 'test', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as TrainerEvent);
    expect(pick(lines)).toEqual(pick(full));
  });

  it('a non-finite loss skips the step and says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-trainer-nan-'));
    const rt = new StandInRuntime([2]);
    const events = await collect(
      new Trainer(config(dir, { train: { iterations: 3, evalEvery: 0, checkpointEvery: 0 } }), { runtime: async () => rt, progress: false, log: () => {} }),
    );
    const warn = events.find((e) => e.type === 'log' && e.level === 'warn');
    expect(warn).toMatchObject({ message: expect.stringMatching(/iteration 2: 1 mini-batch step\(s\) skipped: non-finite/) });
    const it2 = events.find((e) => e.type === 'iteration' && e.iteration === 2) as IterationEvent;
    expect(it2.skipped).toBe(true);
    expect(rt.theta).toBeCloseTo(0.2, 1);
  });

  it('warm-starts with supervised steps on demonstrations before RL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-trainer-sft-'));
    const rt = new StandInRuntime();
    const events = await collect(
      new Trainer(config(dir, { sft: { trials: 8, steps: 5, batchRows: 4 }, train: { iterations: 1, evalEvery: 0, checkpointEvery: 0 } }), {
        runtime: async () => rt,
        progress: false,
        log: () => {},
      }),
    );
    expect(rt.supervisedSteps).toBe(5);
    expect(events[0]).toMatchObject({ type: 'log', message: expect.stringContaining('warm start: 5 supervised steps') });
  });

  it('trains on the reflection rows alone for sft.reflectSteps steps, then on all rows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-trainer-sft2-'));
    const rt = new StandInRuntime();
    const sft = { trials: 32, steps: 4, reflectSteps: 3, batchRows: 8 };
    await collect(
      new Trainer(config(dir, { sft, train: { iterations: 1, evalEvery: 0, checkpointEvery: 0 } }), {
        runtime: async () => rt,
        progress: false,
        log: () => {},
      }),
    );
    expect(rt.supervisedSteps).toBe(7);
    const reflections = (batch: string[]) => batch.filter((r) => r.startsWith('<remark>')).length;
    for (const batch of rt.supervisedResponses.slice(0, 3)) expect(reflections(batch)).toBe(8);
    const mixed = rt.supervisedResponses.slice(3).flat();
    expect(reflections(mixed)).toBeLessThan(mixed.length / 2);
  });

  it('ends the reflection-only phase once the mean loss of its last 10 steps reaches sft.reflectUntilLoss', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-trainer-sft3-'));
    const rt = new StandInRuntime(); // supervised loss of step n is 1/n
    const logs: string[] = [];
    const sft = { trials: 32, steps: 4, reflectSteps: 40, reflectUntilLoss: 0.17, batchRows: 8 };
    await collect(
      new Trainer(config(dir, { sft, train: { iterations: 1, evalEvery: 0, checkpointEvery: 0 } }), {
        runtime: async () => rt,
        progress: false,
        log: (m) => logs.push(m),
      }),
    );
    // mean(1/(n-9) .. 1/n): n = 11 gives 0.202, n = 12 gives 0.160
    expect(rt.supervisedSteps).toBe(12 + 4);
    const reflections = (batch: string[]) => batch.filter((r) => r.startsWith('<remark>')).length;
    expect(rt.supervisedResponses.slice(0, 12).every((b) => reflections(b) === b.length)).toBe(true);
    expect(
      rt.supervisedResponses
        .slice(12)
        .flat()
        .every((r) => r.startsWith('<remark>')),
    ).toBe(false);
    expect(logs.join('\n')).toContain('after 12 of 40 steps');
  });

  it('trains on a custom environment given as an option', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-trainer-custom-'));
    let made = 0;
    const env = () => {
      made++;
      return createEnv('minesweeper', { rows: 4, cols: 4, mines: 2 });
    };
    const cfg = { ...config(dir, { train: { iterations: 1, evalEvery: 0, checkpointEvery: 0 } }), env: { name: 'custom' as const } };
    const events = await collect(new Trainer(cfg, { runtime: async () => new StandInRuntime(), env, progress: false, log: () => {} }));
    expect(events.filter((e) => e.type === 'iteration')).toHaveLength(1);
    expect(made).toBeGreaterThan(0);
    await expect(collect(new Trainer(cfg, { runtime: async () => new StandInRuntime(), progress: false, log: () => {} }))).rejects.toThrow(/custom/);
  });

  it('prompting baselines only evaluate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-trainer-react-'));
    const events = await collect(new Trainer(config(dir, { method: 'react' }), { runtime: async () => new StandInRuntime(), progress: false, log: () => {} }));
    expect(events.map((e) => e.type)).toEqual(['eval']);
    expect((events[0] as { passAtK: number[] }).passAtK).toHaveLength(3);
  });

  it('a comparison job adds the chance rows, which load no model', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-job-chance-'));
    const made: string[] = [];
    const { results, table } = await runJob(
      validateConfig(config(dir, { compare: ['lamer', 'react'], train: { iterations: 1, evalEvery: 0, checkpointEvery: 1 } })),
      {
        runtime: async (c) => {
          made.push(c.method);
          return new StandInRuntime();
        },
        progress: false,
        log: () => {},
      },
    );
    expect(results.map((r) => r.method)).toEqual(['lamer', 'react', 'random', 'random-memory']);
    expect(made).toEqual(['lamer', 'react']);
    for (const r of results) expect(r.firstWin).toHaveLength(4);
    expect(table).toContain('lamer - random-memory pass@3');
  });

  it('a comparison runs named variants of a method from the one warm start, each under its name with its fields set', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-job-variants-'));
    const made: Array<{ method: string; name: string; path: string | undefined; gammaTraj: number; memory: string }> = [];
    const cfg = validateConfig(
      config(dir, {
        compare: [
          'lamer',
          { name: 'lamer-traj0', method: 'lamer', set: { 'advantage.gammaTraj': 0 } },
          { name: 'lamer-both', method: 'lamer', set: { 'trial.memory': 'history_and_reflection' } },
          'gigpo',
          { name: 'gigpo+reflect', method: 'reflexion', from: 'gigpo' },
        ],
        train: { iterations: 1, evalEvery: 0, checkpointEvery: 1 },
        sft: { trials: 4, steps: 2, batchRows: 4 },
      }),
    );
    const { results, table } = await runJob(cfg, {
      runtime: async (c) => {
        made.push({ method: c.method, name: c.name, path: c.model.path, gammaTraj: c.advantage.gammaTraj, memory: c.trial.memory });
        return new StandInRuntime();
      },
      progress: false,
      log: () => {},
    });
    expect(results.map((r) => r.method)).toEqual(['lamer', 'lamer-traj0', 'lamer-both', 'gigpo', 'gigpo+reflect', 'random', 'random-memory']);
    expect(results.map((r) => r.variantOf)).toEqual([undefined, 'lamer', 'lamer', undefined, 'reflexion', undefined, undefined]);
    expect(table).toContain('lamer - lamer-traj0 pass@3');
    // The warm start's runtime, then each entry's, all three from the same saved warm start.
    const warm = join(dir, 'test', 'warm-start');
    expect(made.slice(1)).toEqual([
      { method: 'lamer', name: join('test', 'lamer'), path: warm, gammaTraj: cfg.advantage.gammaTraj, memory: cfg.trial.memory },
      { method: 'lamer', name: join('test', 'lamer-traj0'), path: warm, gammaTraj: 0, memory: cfg.trial.memory },
      { method: 'lamer', name: join('test', 'lamer-both'), path: warm, gammaTraj: cfg.advantage.gammaTraj, memory: 'history_and_reflection' },
      { method: 'gigpo', name: join('test', 'gigpo'), path: warm, gammaTraj: cfg.advantage.gammaTraj, memory: cfg.trial.memory },
      // GiGPO's policy in LaMer's trial: its own final checkpoint, evaluated with reflections.
      {
        method: 'reflexion',
        name: join('test', 'gigpo+reflect'),
        path: latestCheckpoint(join(dir, 'test', 'gigpo', 'checkpoints')),
        gammaTraj: cfg.advantage.gammaTraj,
        memory: cfg.trial.memory,
      },
    ]);
    expect(made.at(-1)?.path).toMatch(/gigpo\/checkpoints\/ckpt-\d+$/);
    // Each run folder's config.json records what it ran; eval.json the variant's name and method.
    const written = JSON.parse(readFileSync(join(dir, 'test', 'lamer-traj0', 'config.json'), 'utf8')) as { advantage: { gammaTraj: number } };
    expect(written.advantage.gammaTraj).toBe(0);
    const evalJson = JSON.parse(readFileSync(join(dir, 'test', 'eval.json'), 'utf8')) as Array<{ method: string; variantOf?: string }>;
    expect(evalJson[1]).toMatchObject({ method: 'lamer-traj0', variantOf: 'lamer' });

    // Re-scoring the job evaluates each variant's own last checkpoint, under its name.
    const paths: Array<{ name: string; path: string | undefined }> = [];
    const rescored = await rescoreJob(join(dir, 'test'), {
      out: join(dir, 'rescored'),
      tasks: 4,
      runtime: async (c) => {
        paths.push({ name: c.name, path: c.model.path });
        return new StandInRuntime();
      },
      progress: false,
      log: () => {},
    });
    expect(rescored.results.map((r) => r.method)).toEqual(['lamer', 'lamer-traj0', 'lamer-both', 'gigpo', 'gigpo+reflect', 'random', 'random-memory']);
    expect(rescored.results[2].variantOf).toBe('lamer');
    expect(paths.map((p) => p.path?.split('/').slice(-3, -1).join('/'))).toEqual([
      'lamer/checkpoints',
      'lamer-traj0/checkpoints',
      'lamer-both/checkpoints',
      'gigpo/checkpoints',
      'gigpo/checkpoints',
    ]);
  });

  it('a variant evaluated on harder tasks is compared only with the entries of its own tasks, and labelled as such', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-job-harder-'));
    const cfg = validateConfig(
      config(dir, {
        compare: [
          'lamer',
          'gigpo',
          { name: 'lamer-hard', method: 'reflexion', from: 'lamer', set: { 'env.evalOptions': { mines: 4 } } },
          { name: 'gigpo-hard', method: 'react', from: 'gigpo', set: { 'env.evalOptions': { mines: 4 } } },
        ],
        train: { iterations: 1, evalEvery: 0, checkpointEvery: 1 },
      }),
    );
    const { results, comparisons } = await runJob(cfg, { runtime: async () => new StandInRuntime(), progress: false, log: () => {} });
    const hash = (m: string) => results.find((r) => r.method === m)!.taskSet!.hash;
    expect(hash('lamer-hard')).toBe(hash('gigpo-hard'));
    expect(hash('lamer-hard')).not.toBe(hash('lamer'));
    expect(comparisons.map((c) => `${c.a} - ${c.b}`)).toEqual(['lamer - gigpo', 'lamer - random', 'lamer - random-memory', 'lamer-hard - gigpo-hard']);
    const written = JSON.parse(readFileSync(join(dir, 'test', 'gigpo-hard', 'config.json'), 'utf8')) as { env: { evalOptions: { mines: number } } };
    expect(written.env.evalOptions.mines).toBe(4);
  });

  it('refuses variants that repeat a name, take a method name, set a shared field or an invalid value', () => {
    const bad = (compare: unknown[]) => () => validateConfig(config(mkdtempSync(join(tmpdir(), 'lamer-bad-variant-')), { compare } as never));
    expect(bad(['lamer', { name: 'x', method: 'lamer' }, { name: 'x', method: 'gigpo' }])).toThrow(/'x' is listed twice/);
    expect(bad([{ name: 'gigpo', method: 'lamer' }])).toThrow(/named as a method/);
    expect(bad([{ name: 'lamer-s', method: 'lamer', set: { seed: 3 } }])).toThrow(/sets 'seed', which every entry of a comparison shares/);
    expect(bad([{ name: 'lamer-w', method: 'lamer', set: { 'sft.steps': 3 } }])).toThrow(/sets 'sft.steps'/);
    expect(bad([{ name: 'lamer-e', method: 'lamer', set: { 'eval.tasks': 3 } }])).toThrow(/sets 'eval.tasks'/);
    expect(bad([{ name: 'lamer-g', method: 'lamer', set: { 'advantage.gammaTraj': 'high' } }])).toThrow(/variant 'lamer-g'.*advantage.gammaTraj/);
    expect(bad([{ name: 'Lamer G', method: 'lamer' }])).toThrow(/lowercase/);
    expect(bad(['gigpo', { name: 'gigpo-again', method: 'lamer', from: 'gigpo' }])).toThrow(/must be a frozen one/);
    expect(bad([{ name: 'gigpo+reflect', method: 'reflexion', from: 'gigpo' }, 'gigpo'])).toThrow(/not a trained entry listed before it/);
    expect(bad(['react', { name: 'react+reflect', method: 'reflexion', from: 'react' }])).toThrow(/not a trained entry/);
  });

  it('a comparison of prompting baselines alone still warm-starts when the config asks for one, and evaluates from it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-job-reflexion-'));
    const made: Array<{ method: string; path: string | undefined }> = [];
    const runtimes: StandInRuntime[] = [];
    const cfg = validateConfig(config(dir, { compare: ['reflexion'], sft: { trials: 4, steps: 2, batchRows: 4 } }));
    const { results } = await runJob(cfg, {
      runtime: async (c) => {
        made.push({ method: c.method, path: c.model.path });
        const r = new StandInRuntime();
        runtimes.push(r);
        return r;
      },
      progress: false,
      log: () => {},
    });
    expect(results.map((r) => r.method)).toEqual(['reflexion', 'random', 'random-memory']);
    // The first runtime is the warm start's (it trains); reflexion then loads what it saved.
    expect(runtimes[0].supervisedSteps).toBe(2);
    expect(made.at(-1)).toEqual({ method: 'reflexion', path: join(dir, 'test', 'warm-start') });
  });

  it('a run records its code (git commit) and what its environments read in config.json (provenance), and logs it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-provenance-'));
    const lamerSource = join(import.meta.dirname, '..', '..', 'envs', 'fixtures', 'lamer');
    const lines: string[] = [];
    const cfg = config(dir, {
      method: 'lamer',
      model: { promptStyle: 'paper' },
      env: { name: 'minesweeper', options: { fidelity: 'paper', lamerSource }, evalOptions: { fidelity: 'lamer' } },
      train: { iterations: 1, evalEvery: 0, checkpointEvery: 1 },
    });
    const trainer = new Trainer(validateConfig(cfg), { runtime: async () => new StandInRuntime(), progress: false, log: (l) => lines.push(l) });
    await collect(trainer);
    const written = JSON.parse(readFileSync(join(trainer.runDir, 'config.json'), 'utf8')) as { provenance: Record<string, Record<string, unknown>> };
    const file = join(lamerSource, 'agent_system', 'environments', 'minesweeper', 'prompt.py');
    const prompts = { file, sha256: createHash('sha256').update(readFileSync(file)).digest('hex') };
    // The code that made the run: this checkout's commit (and whether tracked files differed from it).
    expect(written.provenance).toEqual({
      code: codeVersion(),
      train: { fidelity: 'paper', paperPrompts: prompts },
      eval: { fidelity: 'lamer', paperPrompts: prompts },
    });
    expect(written.provenance.code.commit).toBe(execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim());
    // The record reads back as a config; a run's prompts were LaMer's templates.
    expect(validateConfig(written).model.promptStyle).toBe('paper');
    expect(lines.find((l) => l.includes('env minesweeper:'))).toBe(
      `[lamer] env minesweeper: fidelity "paper", paperPrompts.file ${JSON.stringify(file)}, paperPrompts.sha256 ${prompts.sha256.slice(0, 12)}; ` +
        `at evaluation fidelity "lamer", paperPrompts.file ${JSON.stringify(file)}, paperPrompts.sha256 ${prompts.sha256.slice(0, 12)}`,
    );
  });
});
