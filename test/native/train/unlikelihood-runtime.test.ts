// The warm start's unlikelihood rows through the native runtime (sft.unlikelihood): a demonstration row with refused
// moves beside it trains one more scored token per refused move, and lowers the refused move's probability below
// what imitation alone leaves it at, where imitation of a like prompt (one cell apart) pushes the model to copy it.
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { validateConfig } from '../../../src/train/config.js';
import { createNativeRuntime } from '../../../src/train/native-runtime.js';
import { Policy } from '../../../src/model/policy.js';
import { tinyNativeConfig } from './helpers.js';
import { warmStart } from '../../../src/train/warm-start.js';
import { removeTempDirs, tempDir } from '../../helpers/index.js';

const other = 'mine T1 | now: ? ? ? ? / ? ? ? ? / ? ? 1 ? / ? ? ? ? | act:';
const prompt = 'mine T1 | now: ? ? ? ? / ? ? ? ? / ? ? ? ? / ? ? ? ? | act:';
const response = '<action>(1, 1)</action>';
const refused = '<action>(3, 2)</action>';
const contrast = { refused: [refused], admissible: [response, '<action>(1, 2)</action>', '<action>(2, 4)</action>'] };

afterAll(() => removeTempDirs());

/** Trains `steps` supervised steps on the one row; returns the tokens scored by the first step and log p(refused). */
async function train(unlikelihood: number, steps: number): Promise<{ tokens: number; refusedLogprob: number }> {
  const dir = tempDir('unlikelihood');
  const config = validateConfig({ ...tinyNativeConfig('ul', dir), sft: { unlikelihood, lr: 3e-3 } });
  const runtime = await createNativeRuntime(config, join(dir, 'run'));
  let tokens = 0;
  for (let s = 0; s < steps; s++) {
    const out = await runtime.supervised({ prompts: [other, prompt], responses: [refused, response], contrast: [null, contrast] }, config);
    if (s === 0) tokens = out.tokens;
  }
  await runtime.save(join(dir, 'model'));
  await runtime.dispose();
  const policy = await Policy.load(join(dir, 'model'));
  const [lp] = await policy.logprobs({ prompts: [prompt], completions: [refused] });
  policy.dispose();
  return { tokens, refusedLogprob: Array.from(lp).reduce((s, x) => s + x, 0) };
}

describe('unlikelihood rows in the warm start (native runtime)', () => {
  it('add one scored token per refused move, and push the refused move down further than imitation alone', async () => {
    const off = await train(0, 25);
    const on = await train(2, 25);
    expect(on.tokens).toBe(off.tokens + 1);
    // Measured: log p(refused) -2.83 without, -3.39 with weight 2 after 25 steps.
    expect(on.refusedLogprob).toBeLessThan(off.refusedLogprob - 0.3);
  }, 120_000);
});

/** Runs a 150-step WebShop warm start then the model's own 4 trials and 3 steps with `sft`; its losses and own-trials line. */
async function ownTrialsPhase(name: string, sft: Record<string, number>): Promise<{ losses: number[]; own: string; owns: string[] }> {
  const dir = tempDir(name);
  const config = validateConfig({
    name,
    runsDir: dir,
    model: { init: { preset: 'tiny', tokenizer: 'compact-webshop', seed: 0 }, promptStyle: 'compact' },
    env: { name: 'webshop', options: { maxTurns: 4 } },
    trial: { episodes: 2, markRefused: true },
    rollout: { groupSize: 2, maxResponseTokens: 24 },
    sft: { trials: 16, trialsPerTask: 1, steps: 150, reflectSteps: 0, batchRows: 8, mistakeTrials: 4, mistakeSteps: 3, ...sft },
  });
  const runtime = await createNativeRuntime(config, join(dir, 'run'));
  const lines: string[] = [];
  try {
    const losses = await warmStart(config, runtime, { silent: true, log: (l) => lines.push(l) });
    const owns = lines.filter((l) => l.startsWith("[sft] the model's own trials"));
    expect(owns.length, lines.join('\n')).toBe(sft.mistakeRounds ?? 1);
    expect(owns[0], lines.join('\n')).toMatch(/^\[sft\] the model's own trials(?: \(round 1 of \d+\))?: 4 played/);
    return { losses, own: owns[0], owns };
  } finally {
    await runtime.dispose();
  }
}

describe("the warm start's last phase on the model's own refused moves (sft.mistakeTrials)", () => {
  it('runs its steps after the others on the states the model refused, and says how many it found', async () => {
    const { losses, own } = await ownTrialsPhase('mistakes', { unlikelihood: 1 });
    expect(losses.length).toBe(150 + 3);
    // A model 150 steps old refuses most of what it writes: the phase has states to train on.
    const states = Number(/; (\d+) become unlikelihood states/.exec(own)![1]);
    expect(states).toBeGreaterThan(0);
  }, 120_000);

  it("plays a new round of trials with the trained model in each of sft.mistakeRounds, keeping every round's states", async () => {
    const { losses, owns } = await ownTrialsPhase('mistake-rounds', { unlikelihood: 1, mistakeRounds: 2 });
    expect(losses.length).toBe(150 + 2 * 3);
    expect(owns[1]).toMatch(/^\[sft\] the model's own trials \(round 2 of 2\): 4 played/);
    const found = owns.map((l) => Number(/; (\d+) become unlikelihood states/.exec(l)![1]));
    expect(Number(/; (\d+) states from 2 rounds/.exec(owns[1])![1])).toBe(found[0] + found[1]);
  }, 120_000);

  it("trains the demonstrator's move at each refused state when sft.mistakeLabels is set (labels alone, no unlikelihood)", async () => {
    const { losses, own } = await ownTrialsPhase('mistake-labels', { mistakeLabels: 2 });
    expect(losses.length).toBe(150 + 3);
    const [, readable, labelled, rows] = /; (\d+) are readable, (\d+) labelled with the demonstrator's move \((\d+) rows\)/.exec(own)!.map(Number);
    expect(labelled).toBeGreaterThan(0);
    expect(labelled).toBeLessThanOrEqual(readable);
    expect(rows).toBe(2 * labelled);
    expect(losses.slice(150).every((l) => Number.isFinite(l) && l > 0)).toBe(true);
  }, 120_000);
});
