// The KL loss (loss.kl) with the native runtime: the reference is the weights RL started from. A run that
// warm-starts in place writes those weights to `reference/` in its run folder, a resumed run reuses them, and a run
// that starts from the configured model compares with that model without writing a copy.
import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Trainer } from '../../../src/train/trainer.js';
import type { TrainerConfigInput } from '../../../src/train/config.js';
import { createNativeRuntime, REFERENCE_DIR } from '../../../src/train/native-runtime.js';
import type { IterationEvent, TrainerEvent } from '../../../src/train/events.js';
import { collect, tinyNativeConfig } from './helpers.js';
import { Policy } from '../../../src/model/policy.js';
import { presetCheckpoint } from '../../../src/model/presets.js';

function config(runsDir: string, extra: Partial<TrainerConfigInput> = {}): TrainerConfigInput {
  return {
    ...tinyNativeConfig('kl', runsDir),
    loss: { kl: { type: 'low_var_kl', coef: 0.1 } },
    train: { iterations: 2, evalEvery: 0, checkpointEvery: 1 },
    eval: { tasks: 2 },
    ...extra,
  };
}

const options = { runtime: createNativeRuntime, progress: false, log: () => {} };
const iterations = (evs: TrainerEvent[]) => evs.filter((e): e is IterationEvent => e.type === 'iteration');

/** Log-probs of one fixed answer under a policy: tells two sets of weights apart. */
async function fingerprint(policy: Policy): Promise<number[]> {
  const [lp] = await policy.logprobs({ prompts: ['mine T1 | now: ? ? ? ? / ? ? ? ? / ? ? ? ? / ? ? ? ? | act:'], completions: ['<action>(1, 1)</action>'] });
  policy.dispose();
  return Array.from(lp);
}

describe('KL loss with the native runtime', () => {
  it('a warm-started run trains against the weights after its warm start, kept in reference/ and reused on resume', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-kl-'));
    const cfg = config(dir, { sft: { trials: 8, steps: 3, batchRows: 4 } });
    const first = await collect(new Trainer(cfg, options), { untilIteration: 1 });
    expect(iterations(first).map((e) => Number.isFinite(e.loss))).toEqual([true]);
    const ref = join(dir, 'kl', REFERENCE_DIR);
    expect(existsSync(join(ref, 'model.safetensors'))).toBe(true);
    const written = statSync(join(ref, 'model.safetensors')).mtimeMs;
    // The reference is the warm-started model, not the preset it started from.
    const preset = await presetCheckpoint('tiny', 'compact');
    const init = await fingerprint(await Policy.init(preset.config, { seed: 4, assets: preset.assets }));
    const saved = await fingerprint(await Policy.load(ref));
    expect(saved.some((v, i) => Math.abs(v - init[i]) > 1e-3)).toBe(true);

    const resumed = await collect(new Trainer(cfg, options), { resume: true });
    expect(iterations(resumed).map((e) => e.iteration)).toEqual([2]);
    expect(Number.isFinite(iterations(resumed)[0].loss)).toBe(true);
    expect(statSync(join(ref, 'model.safetensors')).mtimeMs).toBe(written);
  }, 300_000);

  it('a run from the configured model compares with that model and writes no copy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-kl-'));
    const events = await collect(new Trainer(config(dir, { train: { iterations: 1, evalEvery: 0, checkpointEvery: 0 } }), options));
    expect(iterations(events).map((e) => Number.isFinite(e.loss))).toEqual([true]);
    expect(existsSync(join(dir, 'kl', REFERENCE_DIR))).toBe(false);
  }, 300_000);
});
