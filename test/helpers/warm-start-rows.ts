// The warm start's WebShop rows as a recording runtime sees them, for the tests of the row swaps (sft.swapIds,
// sft.swapValues): a tiny config with refused moves beside the demonstrations, and the batches its warm start would train on.
import { validateConfig, type TrainerConfig } from '../../src/train/config.js';
import { warmStart } from '../../src/train/warm-start.js';
import type { PolicyRuntime, SupervisedBatch } from '../../src/train/runtime.js';

/** A tiny WebShop warm start (or another environment's, which the swaps refuse) with `sft` merged in. */
export const swapConfig = (options: { maxTurns: number; steps: number; sft: Record<string, number> }, envName = 'webshop'): TrainerConfig =>
  validateConfig({
    name: 'swap',
    model: { init: { preset: 'tiny', tokenizer: 'compact-webshop', seed: 0 }, promptStyle: 'compact' },
    env: envName === 'webshop' ? { name: 'webshop', options: { maxTurns: options.maxTurns } } : { name: envName },
    trial: { episodes: 2, markRefused: true },
    rollout: { groupSize: 2 },
    sft: {
      trials: 12,
      trialsPerTask: 1,
      reflectSteps: 0,
      steps: options.steps,
      batchRows: 8,
      unlikelihood: 1,
      refusedMoves: 0.5,
      checkpointEvery: 0,
      ...options.sft,
    },
  });

/** The batches a warm start trains on, recorded by a runtime that does not train. */
export async function warmStartBatches(config: TrainerConfig): Promise<SupervisedBatch[]> {
  const seen: SupervisedBatch[] = [];
  const runtime = {
    supervised: async (batch: SupervisedBatch) => {
      seen.push(structuredClone(batch));
      return { loss: 1, tokens: 1 };
    },
  } as unknown as PolicyRuntime;
  await warmStart(config, runtime, { silent: true });
  return seen;
}
