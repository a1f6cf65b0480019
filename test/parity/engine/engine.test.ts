// The generation engine against transformers' checkpoints and generate(): greedy decoding with the KV cache equals
// greedy decoding by repeated full forwards (no cache) and transformers' generate(); sampled log-probs equal the
// model's own log-prob computation; seeded sampling does not depend on the batch; stop ids end sequences; requests
// joining mid-decode disturb nobody. The checkpoints are written by transformers (scripts/py/make_checkpoint.py).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Policy } from '../../../src/model/policy.js';
import { Engine, type EngineRequest, type EngineResult } from '../../../src/engine/index.js';
import { hasCode } from '../../../src/errors.js';
import { parityPython, Oracle, python } from '../python.js';
import { greedyByFullForwards } from '../../native/engine/full-forwards.js';
import { maxAbsDiff, randomIds, rng, root, tempDir } from '../../helpers/index.js';

const py = parityPython();

/** Prompt ids above the special ids 0-3. */
const randomPrompt = (r: () => number, n: number, vocab: number) => randomIds(r, n, vocab, 4);

/** transformers' greedy generate of each prompt alone (test/parity/engine/hf_generate.py). */
function hfGreedy(model: string, prompts: number[][], maxNew: number): number[][] {
  const dir = tempDir('hfgen');
  writeFileSync(join(dir, 'in.json'), JSON.stringify({ prompts, max_new_tokens: maxNew, mode: 'alone', stop: true }));
  execFileSync(
    python,
    [join(root, 'test', 'parity', 'engine', 'hf_generate.py'), '--model', model, '--input', join(dir, 'in.json'), '--out', join(dir, 'out.json')],
    {
      env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error', HF_HUB_OFFLINE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return (JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')) as { tokens: number[][] }).tokens;
}

const ARCHS = [
  {
    name: 'qwen3 (tied, q/k norms, head_dim*heads != hidden)',
    args: ['--arch', 'qwen3', '--tied', '--hidden', '48', '--heads', '4', '--kv-heads', '2', '--head-dim', '16'],
  },
  { name: 'qwen2 (q/k/v biases)', args: ['--arch', 'qwen2', '--hidden', '48', '--heads', '4', '--kv-heads', '2', '--head-dim', '12'] },
  {
    name: 'llama (llama3 RoPE scaling, GQA 4/1)',
    args: ['--arch', 'llama', '--llama3-rope', '--hidden', '48', '--heads', '4', '--kv-heads', '1', '--head-dim', '12', '--rope-theta', '500000'],
  },
];

describe.skipIf(!py.ok)(`greedy decoding with the KV cache${py.ok ? '' : ` (skipped: ${py.reason})`}`, () => {
  let oracle: Oracle;
  beforeAll(() => {
    oracle = new Oracle();
  });
  afterAll(() => oracle?.close());

  for (const [a, arch] of ARCHS.entries()) {
    it(`${arch.name}: equals repeated full forwards and transformers' generate, token for token, in a staggered batch`, async () => {
      const dir = await oracle.makeCheckpoint([...arch.args, '--seed', String(a + 3), '--layers', '3']);
      await using policy = await Policy.load(dir);
      const r = rng(100 + a);
      const prompts = [7, 1, 15, 3, 11].map((n) => randomPrompt(r, n, policy.config.vocabSize));
      const maxNew = 24;
      const stopIds = policy.stopIds;
      await using engine = new Engine(policy, { slots: 4 });
      // Three requests start together, two join a few steps later (one after a slot frees: slots = 4).
      const results: Promise<EngineResult>[] = prompts.slice(0, 3).map((p) => engine.generate({ promptIds: p, maxNewTokens: maxNew, temperature: 0 }));
      await new Promise((res) => setTimeout(res, 5));
      for (const p of prompts.slice(3)) results.push(engine.generate({ promptIds: p, maxNewTokens: maxNew, temperature: 0 }));
      const ours = (await Promise.all(results)).map((x) => Array.from(x.tokens));
      const full: number[][] = [];
      for (const p of prompts) full.push(await greedyByFullForwards(policy, p, maxNew, stopIds));
      expect(ours).toEqual(full);
      expect(ours).toEqual(hfGreedy(dir, prompts, maxNew));
      expect(ours.some((t) => t.length > 4)).toBe(true);
    });
  }

  it('long and short requests joining in waves and leaving mid-batch still decode as full forwards do', async () => {
    // Rows leave from the middle of the batch (free slots below the highest live one are computed and ignored, then
    // refilled by later joins), later prompts are wider than the live rows, and later requests are longer than the
    // slots' first capacity (the cache grows once, with rows live): a misplaced or stale row would change its tokens.
    const dir = await oracle.makeCheckpoint([...ARCHS[0].args, '--seed', '21', '--layers', '2']);
    await using policy = await Policy.load(dir);
    const r = rng(77);
    const waves = [0, 1, 2, 3].map((w) =>
      Array.from({ length: 5 }, () => ({
        prompt: randomPrompt(r, 1 + Math.floor(r() * (40 + 60 * w)), policy.config.vocabSize),
        maxNew: 1 + Math.floor(r() * 110),
      })),
    );
    await using engine = new Engine(policy, { slots: 7, stepsPerCall: 1, prefixCacheBytes: 0 });
    // Each wave is submitted when the longest request of the one before has streamed 3 tokens, so waves overlap
    // whatever the machine's speed.
    const results: Promise<EngineResult>[] = [];
    const submitted = new Promise<void>((done) => {
      const submit = (w: number): void => {
        if (w === waves.length) return done();
        const lead = waves[w].reduce((b, q, i, all) => (q.maxNew > all[b].maxNew ? i : b), 0);
        let streamed = 0;
        for (const [i, q] of waves[w].entries()) {
          const onTokens = (t: Int32Array): void => {
            streamed += t.length;
            if (streamed >= 3 && streamed - t.length < 3) submit(w + 1);
          };
          results.push(engine.generate({ promptIds: q.prompt, maxNewTokens: q.maxNew, temperature: 0, stopIds: [], ...(i === lead ? { onTokens } : {}) }));
        }
      };
      submit(0);
    });
    await submitted;
    const ours = (await Promise.all(results)).map((x) => Array.from(x.tokens));
    const requests = waves.flat();
    for (const [i, q] of requests.entries()) {
      expect(ours[i], `request ${i}`).toEqual(await greedyByFullForwards(policy, q.prompt, q.maxNew, []));
    }
    expect(engine.stats().peakActive).toBeGreaterThanOrEqual(6);
    const longest = Math.max(...requests.map((q) => q.prompt.length + q.maxNew));
    const firstWave = Math.max(...waves[0].map((q) => q.prompt.length + q.maxNew));
    expect(firstWave).toBeLessThanOrEqual(256);
    expect(longest).toBeGreaterThan(256);
    expect(engine.stats().slotCapacity).toBeGreaterThanOrEqual(longest);
    expect(waves.every((w) => Math.max(...w.map((q) => q.maxNew)) >= 3)).toBe(true);
  });
});

describe.skipIf(!py.ok)('sampling, batching, stops', () => {
  let oracle: Oracle;
  let policy: Policy;
  const V = 96;
  beforeAll(async () => {
    oracle = new Oracle();
    const dir = await oracle.makeCheckpoint([...ARCHS[0].args, '--seed', '9']);
    policy = await Policy.load(dir);
  });
  afterAll(() => {
    oracle?.close();
    policy?.dispose();
  });

  const base = (prompt: number[], seed: number, extra: Partial<EngineRequest> = {}): EngineRequest => ({
    promptIds: prompt,
    maxNewTokens: 32,
    temperature: 1,
    stopIds: [],
    seed,
    ...extra,
  });

  it('a fixed seed reproduces the tokens; another seed gives others', async () => {
    const prompt = randomPrompt(rng(1), 6, V);
    await using engine = new Engine(policy);
    const a = await engine.generate(base(prompt, 42));
    const b = await engine.generate(base(prompt, 42));
    const c = await engine.generate(base(prompt, 43));
    expect(Array.from(b.tokens)).toEqual(Array.from(a.tokens));
    expect(Array.from(c.tokens)).not.toEqual(Array.from(a.tokens));
    expect(a.tokens.length).toBe(32);
    expect(a.finishReason).toBe('length');
  });

  it('a request samples the same tokens alone and in a busy batch that others join and leave', async () => {
    const r = rng(2);
    const target = base(randomPrompt(r, 9, V), 7, { maxNewTokens: 40, temperature: 0.8, topP: 0.9, topK: 30 });
    let alone: EngineResult;
    {
      await using engine = new Engine(policy);
      alone = await engine.generate(target);
    }
    for (const stepsPerCall of [1, 5]) {
      await using engine = new Engine(policy, { slots: 7, stepsPerCall });
      const others: Promise<EngineResult>[] = [];
      for (let i = 0; i < 4; i++) {
        others.push(engine.generate(base(randomPrompt(r, 1 + Math.floor(r() * 20), V), 100 + i, { maxNewTokens: 5 + i * 7, temperature: 1.2 })));
      }
      const mine = engine.generate(target);
      await new Promise((res) => setTimeout(res, 3));
      for (let i = 0; i < 6; i++) {
        others.push(engine.generate(base(randomPrompt(r, 1 + Math.floor(r() * 30), V), 200 + i, { maxNewTokens: 3 + i * 5, topK: 4 })));
      }
      // Greedy rows too: every kind of sampling shares the batch's steps.
      others.push(engine.generate(base(randomPrompt(r, 4, V), 300, { maxNewTokens: 25, temperature: 0 })));
      const got = await mine;
      await Promise.all(others);
      expect(Array.from(got.tokens)).toEqual(Array.from(alone.tokens));
      expect(maxAbsDiff([got.logprobs], [alone.logprobs])).toBeLessThan(1e-4);
      expect(engine.stats().peakActive).toBeGreaterThan(1);
    }
  });

  it('a request that arrives mid-decode joins at once and does not disturb the others', async () => {
    const r = rng(3);
    const reqA = base(randomPrompt(r, 5, V), 11, { maxNewTokens: 60 });
    const reqB = base(randomPrompt(r, 12, V), 12, { maxNewTokens: 20 });
    const alone: EngineResult[] = [];
    {
      await using engine = new Engine(policy);
      alone.push(await engine.generate(reqA), await engine.generate(reqB));
    }
    await using engine = new Engine(policy, { stepsPerCall: 1 });
    const events: string[] = [];
    let bStarted: Promise<EngineResult> | undefined;
    let aTokens = 0;
    const a = engine.generate({
      ...reqA,
      onTokens: (t) => {
        aTokens += t.length;
        events.push(`A${aTokens}`);
        if (aTokens >= 10 && !bStarted) bStarted = engine.generate({ ...reqB, onTokens: () => events.push('B') });
      },
    });
    const ra = await a;
    const rb = await bStarted!;
    expect(Array.from(ra.tokens)).toEqual(Array.from(alone[0].tokens));
    expect(Array.from(rb.tokens)).toEqual(Array.from(alone[1].tokens));
    // B decoded while A was still decoding, from the step right after it was submitted.
    // The step after B's submission: B's first token (prefill), then A's and B's decode tokens of that step.
    const firstB = events.indexOf('B');
    expect(events.slice(firstB - 1, firstB + 3)).toEqual(['A10', 'B', 'A11', 'B']);
    expect(events.lastIndexOf('B')).toBeLessThan(events.indexOf('A60'));
  });

  it('stop ids end a sequence (the stop token is the last one returned)', async () => {
    const prompt = randomPrompt(rng(4), 4, V);
    await using engine = new Engine(policy);
    const free = await engine.generate(base(prompt, 5));
    const stopAt = 6;
    const stopId = free.tokens[stopAt];
    const first = Array.from(free.tokens).indexOf(stopId);
    const stopped = await engine.generate(base(prompt, 5, { stopIds: [stopId] }));
    expect(stopped.finishReason).toBe('stop');
    expect(stopped.stoppedBy).toEqual({ tokenId: stopId });
    expect(Array.from(stopped.tokens)).toEqual(Array.from(free.tokens.subarray(0, first + 1)));
    // The policy's own stop ids are the default.
    const byDefault = await engine.generate({ promptIds: prompt, maxNewTokens: 200, temperature: 1, seed: 3 });
    if (byDefault.finishReason === 'stop') expect(policy.stopIds).toContain(byDefault.tokens[byDefault.tokens.length - 1]);
  });

  it('sampled log-probs equal the model log-prob computation of the same tokens within 1e-4 (fp32)', async () => {
    const r = rng(6);
    await using engine = new Engine(policy, { slots: 8 });
    const settings = [
      { temperature: 1, topP: 1, topK: 0 },
      { temperature: 0.7, topP: 0.8, topK: 20 },
      { temperature: 1.5, topP: 0.9, topK: 0 },
    ];
    for (const s of settings) {
      const prompts = [3, 14, 8, 1].map((n) => randomPrompt(r, n, V));
      const results = await Promise.all(prompts.map((p, i) => engine.generate(base(p, 50 + i, { ...s, maxNewTokens: 25 }))));
      const ref = await policy.logprobs({ prompts, completions: results.map((x) => x.tokens) }, { temperature: s.temperature });
      expect(
        maxAbsDiff(
          results.map((x) => x.logprobs),
          ref,
        ),
      ).toBeLessThan(1e-4);
    }
  });

  it('bounds the batch by slots and by the token budget, and still serves every request', async () => {
    const r = rng(8);
    await using engine = new Engine(policy, { slots: 3, tokenBudget: 100 });
    const reqs = Array.from({ length: 10 }, (_, i) => base(randomPrompt(r, 5 + i, V), i, { maxNewTokens: 20 }));
    const out = await Promise.all(reqs.map((q) => engine.generate(q)));
    expect(out.every((o) => o.tokens.length === 20)).toBe(true);
    expect(engine.stats().peakActive).toBeLessThanOrEqual(3);
    const tight = new Engine(policy, { slots: 8, tokenBudget: 60 });
    try {
      await Promise.all(reqs.slice(0, 6).map((q) => tight.generate(q)));
      // Each request reserves 25..30 tokens: at most 2 fit in 60.
      expect(tight.stats().peakActive).toBe(2);
      await expect(tight.generate(base(randomPrompt(r, 50, V), 1, { maxNewTokens: 20 }))).rejects.toSatisfy((e: unknown) => hasCode(e, 'E_ARG'));
    } finally {
      tight.dispose();
    }
  });

  it('an aborted request rejects and frees its slot; the others finish unchanged', async () => {
    const r = rng(9);
    const keep = base(randomPrompt(r, 7, V), 1, { maxNewTokens: 30 });
    let alone: EngineResult;
    {
      await using engine = new Engine(policy);
      alone = await engine.generate(keep);
    }
    await using engine = new Engine(policy);
    const controller = new AbortController();
    let n = 0;
    const doomed = engine.generate({
      ...base(randomPrompt(r, 4, V), 2, { maxNewTokens: 200 }),
      signal: controller.signal,
      onTokens: (t) => {
        n += t.length;
        if (n >= 5) controller.abort();
      },
    });
    const kept = engine.generate(keep);
    await expect(doomed).rejects.toMatchObject({ name: 'AbortError' });
    expect(Array.from((await kept).tokens)).toEqual(Array.from(alone.tokens));
    expect(engine.active).toBe(0);
  });

  it('rejects bad requests with E_ARG', async () => {
    await using engine = new Engine(policy);
    for (const bad of [
      { promptIds: [], maxNewTokens: 3 },
      { promptIds: [1, V], maxNewTokens: 3 },
      { promptIds: [1], maxNewTokens: 0 },
      { promptIds: [1], maxNewTokens: 2, topP: 0 },
      { promptIds: [1], maxNewTokens: 2, temperature: -1 },
      { promptIds: [1], maxNewTokens: 2, seed: 1.5 },
    ]) {
      await expect(engine.generate(bad)).rejects.toSatisfy((e: unknown) => hasCode(e, 'E_ARG'));
    }
  });
});
