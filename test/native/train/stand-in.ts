// A light stand-in for the model runtime, for tests of the training loop that need no model: a scripted player whose
// randomness depends on one trained number, saved to and restored from `theta.json` in a checkpoint.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedPolicy } from '../../../src/rollout/scripted.js';
import type { PolicyRuntime, UpdateBatch } from '../../../src/train/runtime.js';

export class StandInRuntime implements PolicyRuntime {
  theta = 0;
  client() {
    const noise = 1 / (1 + Math.exp(this.theta));
    return scriptedPolicy({ noise, seed: Math.round(this.theta * 1e6) });
  }
  async update(batch: UpdateBatch) {
    let s = 0;
    for (const a of batch.advantages) s += a;
    this.theta += 0.1 + 0.01 * (s / Math.max(1, batch.advantages.length));
    return { loss: -this.theta, clipFraction: 0, approxKl: 0, entropy: 1, gradNorm: 1, steps: 1, skipped: 0, tokens: 10 };
  }
  async supervised() {
    return { loss: 1, tokens: 5 };
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
