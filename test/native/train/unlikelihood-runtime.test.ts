// The warm start's unlikelihood rows through the native runtime (sft.unlikelihood): a demonstration row with refused
// moves beside it trains one more scored token per refused move, and lowers the refused move's probability below
// what imitation alone leaves it at, where imitation of a like prompt (one cell apart) pushes the model to copy it.
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { validateConfig } from '../../../src/train/config.js';
import { createNativeRuntime } from '../../../src/train/native-runtime.js';
import { Policy } from '../../../src/model/policy.js';
import { tinyNativeConfig } from './helpers.js';
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
