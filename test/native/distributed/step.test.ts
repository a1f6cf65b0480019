// The data-parallel train step over c10d Gloo: 2 ranks, each with its share of one global mini-batch, take the same
// step as one process given all the rows (loss, metrics and every parameter after a policy and a supervised step,
// within 1e-5 relative), for every aggregation mode.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSingle, startRanks, type RankResult } from './ranks.js';

const script = 'test/native/distributed/child-step.ts';

interface Out {
  loss: number;
  entropy: number;
  gradNorm: number;
  tokens: number;
  rows: number;
  sftLoss: number;
  params: Record<string, number[]>;
}

function ok(r: RankResult): void {
  if (r.code !== 0) throw new Error(`rank ${r.rank} exited ${r.code ?? r.signal}: ${r.stderr.slice(-2000)}`);
}

function maxRelDiff(a: Record<string, number[]>, b: Record<string, number[]>): number {
  let m = 0;
  for (const [name, x] of Object.entries(a)) {
    const y = b[name];
    expect(y?.length, name).toBe(x.length);
    for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i] - y[i]) / Math.max(1e-3, Math.abs(y[i])));
  }
  return m;
}

describe('data-parallel train step (2 Gloo ranks vs 1 process)', () => {
  for (const aggregation of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum']) {
    it(`equals one process given the whole mini-batch (${aggregation})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'lamer-dist-step-'));
      const ranks = await startRanks(2, script, (rank) => [join(dir, `rank${rank}.json`), aggregation]);
      const single = await runSingle(script, [join(dir, 'single.json'), aggregation]);
      const results = await ranks.done;
      results.forEach(ok);
      ok(single);
      const one = JSON.parse(readFileSync(join(dir, 'single.json'), 'utf8')) as Out;
      const r0 = JSON.parse(readFileSync(join(dir, 'rank0.json'), 'utf8')) as Out;
      const r1 = JSON.parse(readFileSync(join(dir, 'rank1.json'), 'utf8')) as Out;
      for (const r of [r0, r1]) {
        expect(r.rows).toBe(9);
        expect(r.tokens).toBe(one.tokens);
        expect(Math.abs(r.loss - one.loss) / Math.abs(one.loss)).toBeLessThan(1e-5);
        expect(Math.abs(r.entropy - one.entropy) / Math.abs(one.entropy)).toBeLessThan(1e-5);
        expect(Math.abs(r.gradNorm - one.gradNorm) / Math.abs(one.gradNorm)).toBeLessThan(1e-5);
        expect(Math.abs(r.sftLoss - one.sftLoss) / Math.abs(one.sftLoss)).toBeLessThan(1e-5);
        expect(maxRelDiff(r.params, one.params)).toBeLessThan(1e-5);
      }
      // The ranks hold the very same parameters (the same reduced gradients, the same AdamW step).
      expect(maxRelDiff(r0.params, r1.params)).toBe(0);
    }, 120_000);
  }

  it('with a LoRA adapter: the adapter trains as in one process, the base stays as it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-dist-lora-'));
    const ranks = await startRanks(2, script, (rank) => [join(dir, `rank${rank}.json`), 'token-mean', 'lora']);
    const single = await runSingle(script, [join(dir, 'single.json'), 'token-mean', 'lora']);
    const frozen = await runSingle(script, [join(dir, 'base.json'), 'token-mean']);
    (await ranks.done).forEach(ok);
    ok(single);
    ok(frozen);
    const one = JSON.parse(readFileSync(join(dir, 'single.json'), 'utf8')) as Out;
    const r0 = JSON.parse(readFileSync(join(dir, 'rank0.json'), 'utf8')) as Out;
    const r1 = JSON.parse(readFileSync(join(dir, 'rank1.json'), 'utf8')) as Out;
    const adapter = (o: Out) => Object.fromEntries(Object.entries(o.params).filter(([k]) => k.includes('lora_')));
    const base = (o: Out) => Object.fromEntries(Object.entries(o.params).filter(([k]) => !k.includes('lora_')));
    expect(Object.keys(adapter(one)).length).toBe(2 * 3 * 2);
    for (const r of [r0, r1]) {
      expect(Math.abs(r.loss - one.loss) / Math.abs(one.loss)).toBeLessThan(1e-5);
      expect(maxRelDiff(adapter(r), adapter(one))).toBeLessThan(1e-5);
    }
    expect(maxRelDiff(adapter(r0), adapter(r1))).toBe(0);
    // The base after the steps is the untouched model (the run without LoRA moved it).
    const initial = JSON.parse(readFileSync(join(dir, 'base.json'), 'utf8')) as Out;
    expect(maxRelDiff(base(one), initial.params)).toBeGreaterThan(1e-4);
    await (async () => {
      const { tinyPolicy, snapshot } = await import('../train/step-helpers.js');
      const fresh = await tinyPolicy(11, {}, 'float64');
      const start = Object.fromEntries([...snapshot(fresh)].map(([k, v]) => [k, Array.from(v)]));
      fresh.dispose();
      expect(maxRelDiff(base(r0), start)).toBe(0);
      expect(maxRelDiff(base(one), start)).toBe(0);
    })();
  }, 120_000);
});
