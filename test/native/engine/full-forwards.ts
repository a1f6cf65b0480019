// The engine's independent reference: greedy decoding by a full forward over the whole sequence for every new token
// (no KV cache of any kind).
import type { Policy } from '../../../src/model/policy.js';

export async function greedyByFullForwards(policy: Policy, prompt: number[], maxNew: number, stopIds: readonly number[] = []): Promise<number[]> {
  const seq = [...prompt];
  const out: number[] = [];
  const V = policy.config.vocabSize;
  for (let i = 0; i < maxNew; i++) {
    using logits = await policy.logits([seq]);
    const row = (logits.data as Float32Array).subarray((seq.length - 1) * V, seq.length * V);
    let best = 0;
    for (let j = 1; j < V; j++) if (row[j] > row[best]) best = j;
    out.push(best);
    seq.push(best);
    if (stopIds.includes(best)) break;
  }
  return out;
}
