// Train-step figures, measured side by side in one run:
//   - training tokens/s of one PPO step (forward + backward + clip + AdamW) on the `small` preset, batch 16 x 256
//     (128 prompt + 128 response tokens a row), this project vs transformers + torch.optim.AdamW on the same
//     checkpoint (scripts/py/train_reference.py: same loss, logits only at response positions);
//   - peak extra host memory of log-probs + entropy with gradient over a 151,936-token vocabulary, chunked vs plain
//     autograd over whole logits (peak RSS above the level before the call; /proc/self/clear_refs resets the peak);
//   - peak memory of one train step on the small preset with and without gradient checkpointing;
//   - the policy update of one default-job iteration (tiny preset, 432 rows of about 150 + 6 tokens, mini-batches of
//     64 rows): the iteration staged once in native memory and stepped by row index (what the trainer runs) against
//     rows packed for every mini-batch (Optimizer.trainStep), alternated, medians; time per trained token.
//   - the policy updates of the default job as a real run recorded them (bench/fixtures/default-updates, written with
//     LAMER_RECORD_UPDATES; LAMER_BENCH_UPDATES=DIR reads another job's, LAMER_BENCH_TOKENIZER its tokenizer or LAMER_BENCH_MODEL its checkpoint), each through the update as the trainer runs it
//     (staged, mini-batches of 64 rows in a seeded order) with train.sharePrefix off and on, alternated, medians; the
//     tokens the forwards computed per row each way; and each update's rows as one prefix tree (counted: the fewest
//     tokens any order of rows into mini-batches could compute), the tokens of each row after the last one it shares
//     with any other row (what no sharing avoids) and the prompts' common end among them (the chat template's).
// Run alone: `LAMER_BUILD_DIR=build-train npx tsx bench/train.bench.ts`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseModelConfig } from '../src/model/config.js';
import { buildCompactTokenizer, compactTokenizerWith, type CompactTokenizerFiles, type CompactVocabulary } from '../src/model/compact-tokenizer.js';
import { Policy } from '../src/model/policy.js';
import { TextTokenizer } from '../src/model/tokenizer.js';
import '../src/envs/index.js'; // the environments provide their compact vocabularies (compact-webshop)
import { presetCheckpoint, type TokenizerChoice } from '../src/model/presets.js';
import { Optimizer } from '../src/train/optimizer.js';
import { trainBatch, type TrainRow } from '../src/train/batch.js';
import { readUpdateRecord } from '../src/train/update-record.js';
import { Rng } from '../src/util/rng.js';
import type { Bench, BenchResult, Emit, Note } from './run.js';
import { sharedPrefixBatch, sharePrefixOffOn } from './util.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const python = join(root, '.venv', 'bin', 'python');
const ROWS = 16;
const PROMPT = 128;
const RESPONSE = 128;
const TIMED_STEPS = 3;

function lcg(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function benchRows(vocab: number, rows: number, prompt: number, response: number, seed = 1): TrainRow[] {
  const r = lcg(seed);
  const ids = (n: number) => Array.from({ length: n }, () => Math.floor(r() * vocab));
  return Array.from({ length: rows }, (_, i) => ({ prompt: ids(prompt), response: ids(response), advantage: (i % 2 ? -1 : 1) * (0.5 + r()) }));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function trainThroughput(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-train-'));
  try {
    const preset = await presetCheckpoint('small');
    const init = await Policy.init(preset.config, { seed: 0, assets: preset.assets });
    await init.save(join(dir, 'model'));
    init.dispose();
    const rows = benchRows(preset.config.vocabSize, ROWS, PROMPT, RESPONSE);
    const tokens = ROWS * (PROMPT + RESPONSE);
    const settings = { lr: 1e-6, weightDecay: 0.01, gradClip: 1.0 };

    const ours = async (): Promise<number[]> => {
      await using policy = await Policy.load(join(dir, 'model'));
      using opt = Optimizer.create(policy, settings);
      const times: number[] = [];
      for (let s = 0; s < TIMED_STEPS + 1; s++) {
        const t0 = performance.now();
        await opt.trainStep(rows, { microBatchTokens: tokens, entropyCoef: 0.001 });
        if (s > 0) times.push((performance.now() - t0) / 1000);
      }
      return times;
    };
    const theirs = (): number[] => {
      writeFileSync(
        join(dir, 'in.json'),
        JSON.stringify({
          objective: 'policy',
          rows: rows.map((r) => ({ prompt: r.prompt, response: r.response, advantage: r.advantage })),
          steps: TIMED_STEPS,
          warmup_steps: 1,
          lr: settings.lr,
          weight_decay: settings.weightDecay,
          grad_clip: settings.gradClip,
          entropy_coef: 0.001,
        }),
      );
      execFileSync(
        python,
        [join(root, 'scripts', 'py', 'train_reference.py'), '--model', join(dir, 'model'), '--input', join(dir, 'in.json'), '--out', join(dir, 'out.json')],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error', HF_HUB_OFFLINE: '1' },
        },
      );
      return (JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')) as { seconds: number[] }).seconds;
    };
    // Without the Python reference (scripts/pyenv.sh makes .venv), only this project's figure.
    if (!existsSync(python)) return [{ name: 'train step small 16x256 (lamer)', value: tokens / median(await ours()), unit: 'tokens/s' }];
    // Interleaved (ours, theirs, ours, theirs, ...) so load from elsewhere on the machine hits both sides alike.
    const a: number[] = [];
    const b: number[] = [];
    for (let round = 0; round < 3; round++) {
      a.push(...(await ours()));
      b.push(...theirs());
    }
    const oursRate = tokens / median(a);
    const theirRate = tokens / median(b);
    return [
      { name: 'train step small 16x256 (lamer)', value: oursRate, unit: 'tokens/s' },
      { name: 'train step small 16x256 (transformers)', value: theirRate, unit: 'tokens/s' },
      { name: 'train step small 16x256 lamer/transformers', value: oursRate / theirRate, unit: 'x' },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function status(field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'));
  if (!m) throw new Error(`/proc/self/status has no ${field}`);
  return Number(m[1]) * 1024;
}

const VOCAB = 151936;
const MEMORY_ROWS = 8;
const MEMORY_RESPONSE = 128; // 1024 scored tokens

/** In a child process (fresh heap): peak RSS above the level just before one forward + backward of log-probs and
 * entropy over a 151,936-token vocabulary. */
async function logprobPeakChild(chunked: boolean): Promise<number> {
  const config = parseModelConfig({
    model_type: 'qwen3',
    vocab_size: VOCAB,
    hidden_size: 64,
    intermediate_size: 128,
    num_hidden_layers: 1,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 16,
    tie_word_embeddings: true,
    dtype: 'float32',
  });
  await using policy = await Policy.init(config, { seed: 1, std: 0.02 });
  using opt = Optimizer.create(policy);
  const rows = benchRows(VOCAB, MEMORY_ROWS, 16, MEMORY_RESPONSE, 7);
  const once = async (r: TrainRow[]) => {
    const out = await opt.lossAndGrad(r, { chunked, entropyCoef: 0.001 });
    for (const t of Object.values(out.grads ?? {})) t.dispose();
  };
  await once(benchRows(VOCAB, 1, 4, 4, 3)); // warm-up: thread pools, first allocations
  writeFileSync('/proc/self/clear_refs', '5'); // resets VmHWM to the current RSS
  const base = status('VmRSS');
  await once(rows);
  return status('VmHWM') - base;
}

/** In a child process: peak RSS above the level before one PPO step (forward, backward, AdamW) on the small preset,
 * 16 x 256 tokens, with or without gradient checkpointing. */
async function stepPeakChild(checkpointing: boolean): Promise<number> {
  const preset = await presetCheckpoint('small');
  await using policy = await Policy.init(preset.config, { seed: 0, assets: preset.assets });
  using opt = Optimizer.create(policy, { lr: 1e-6 });
  const rows = benchRows(preset.config.vocabSize, ROWS, PROMPT, RESPONSE);
  // Warm-up on a small batch: allocates the AdamW state, so the figure is the step's activations.
  await opt.trainStep(benchRows(preset.config.vocabSize, 2, 4, 4, 5), { gradientCheckpointing: checkpointing });
  writeFileSync('/proc/self/clear_refs', '5');
  const base = status('VmRSS');
  await opt.trainStep(rows, { microBatchTokens: ROWS * (PROMPT + RESPONSE), gradientCheckpointing: checkpointing });
  return status('VmHWM') - base;
}

function childPeak(flag: string, variant: string): number {
  const out = execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), flag, variant], {
    encoding: 'utf8',
    // Every large block mmapped and returned on free, so RSS follows what is live.
    env: { ...process.env, MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' },
  });
  return Number(/peak (\d+)/.exec(out)![1]);
}

async function checkpointingMemory(): Promise<BenchResult[]> {
  if (!existsSync('/proc/self/clear_refs')) throw new Error('needs Linux /proc/self/clear_refs to measure peak memory');
  const MB = 1024 * 1024;
  return [
    { name: 'train step small 16x256 peak, no checkpointing', value: childPeak('--step-peak', 'off') / MB, unit: 'MB peak' },
    { name: 'train step small 16x256 peak, gradient checkpointing', value: childPeak('--step-peak', 'on') / MB, unit: 'MB peak' },
  ];
}

async function logprobMemory(): Promise<BenchResult[]> {
  if (!existsSync('/proc/self/clear_refs')) throw new Error('needs Linux /proc/self/clear_refs to measure peak memory');
  const MB = 1024 * 1024;
  const measure = (variant: 'chunked' | 'full'): number => childPeak('--logprob-peak', variant);
  const chunked = measure('chunked');
  const full = measure('full');
  const scored = MEMORY_ROWS * MEMORY_RESPONSE;
  return [
    { name: 'logprob+entropy+grad 1024 tok x 151936 vocab, chunked', value: chunked / MB, unit: 'MB peak' },
    { name: 'logprob+entropy+grad 1024 tok x 151936 vocab, whole logits', value: full / MB, unit: 'MB peak' },
    { name: '  (one fp32 logits copy of that size)', value: (scored * VOCAB * 4) / MB, unit: 'MB' },
  ];
}

const UPDATE_ROWS = 432;
const UPDATE_MINI_BATCH = 64;
const UPDATE_ROUNDS = 5;

/** One default-job-sized policy update both ways, alternated in one run. */
async function updatePaths(): Promise<BenchResult[]> {
  const preset = await presetCheckpoint('tiny');
  const r = lcg(5);
  const ids = (n: number) => Int32Array.from({ length: n }, () => Math.floor(r() * preset.config.vocabSize));
  const promptIds = Array.from({ length: UPDATE_ROWS }, () => ids(140 + Math.floor(r() * 20)));
  const responseIds = Array.from({ length: UPDATE_ROWS }, () => ids(4 + Math.floor(r() * 5)));
  const advantages = Float32Array.from({ length: UPDATE_ROWS }, () => 2 * r() - 1);
  const oldLogprobs = responseIds.map((resp) => Float32Array.from(resp, () => -1 - r()));
  const tokens = responseIds.reduce((s, x) => s + x.length, 0);
  const order = Array.from({ length: UPDATE_ROWS }, (_, i) => i);
  const options = { microBatchTokens: 4096, entropyCoef: 0.001 };
  await using a = await Policy.init(preset.config, { seed: 0, assets: preset.assets });
  await using b = await Policy.init(preset.config, { seed: 0, assets: preset.assets });
  using optA = Optimizer.create(a, { lr: 1e-5 });
  using optB = Optimizer.create(b, { lr: 1e-5 });
  // Before: the rows of each mini-batch packed in JS and copied into the addon, step by step.
  const perMiniBatch = async (): Promise<number> => {
    const t0 = performance.now();
    for (let s = 0; s < UPDATE_ROWS; s += UPDATE_MINI_BATCH) {
      const rows: TrainRow[] = order
        .slice(s, s + UPDATE_MINI_BATCH)
        .map((i) => ({ prompt: promptIds[i], response: responseIds[i], advantage: advantages[i], oldLogprobs: oldLogprobs[i] }));
      await optA.trainStep(rows, options);
    }
    return (performance.now() - t0) / 1000;
  };
  // Now: the iteration's columns built and staged once; every step names its rows.
  const staged = async (): Promise<number> => {
    const t0 = performance.now();
    const { batch } = trainBatch({ promptIds, responseIds, advantages, oldLogprobs });
    await optB.stage(batch);
    for (let s = 0; s < UPDATE_ROWS; s += UPDATE_MINI_BATCH) await optB.stagedStep(Int32Array.from(order.slice(s, s + UPDATE_MINI_BATCH)), options);
    return (performance.now() - t0) / 1000;
  };
  await perMiniBatch();
  await staged();
  const before: number[] = [];
  const after: number[] = [];
  for (let round = 0; round < UPDATE_ROUNDS; round++) {
    before.push(await perMiniBatch());
    after.push(await staged());
  }
  const us = (s: number) => (s / tokens) * 1e6;
  return [
    { name: 'update tiny 432 rows, rows packed per mini-batch', value: us(median(before)), unit: 'us/token' },
    { name: 'update tiny 432 rows, staged once (trainer)', value: us(median(after)), unit: 'us/token' },
    { name: 'update tiny 432 rows staged/per-mini-batch', value: median(after) / median(before), unit: 'x (time)' },
  ];
}

const RECORDED_UPDATES = join(root, 'bench', 'fixtures', 'default-updates');
const SHARE_ROUNDS = Number(process.env.LAMER_BENCH_ROUNDS ?? 5);

/**
 * Tokens a forward computes when every row of `rows` shares every prefix it has with another (the distinct prefixes of
 * the rows' token ids: the nodes of their prefix tree). Over a whole update it bounds what sharing within mini-batches
 * can reach, whatever rows the mini-batches hold.
 */
function prefixTreeTokens(rows: readonly (readonly number[])[]): number {
  type Trie = Map<number, Trie>;
  const root: Trie = new Map();
  let nodes = 0;
  for (const row of rows) {
    let node = root;
    for (const t of row) {
      let next = node.get(t);
      if (next === undefined) {
        next = new Map();
        node.set(t, next);
        nodes++;
      }
      node = next;
    }
  }
  return nodes;
}

/** Length of the longest common prefix of two rows' token ids. */
function commonPrefix(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/**
 * For each of `rows`, how many of its first tokens it shares with some other row (its longest common prefix with its
 * neighbours in sorted order). What follows them no sharing of prefixes can avoid computing, however rows are grouped.
 */
function sharedLengths(rows: readonly (readonly number[])[]): number[] {
  const order = rows.map((_, i) => i);
  order.sort((i, j) => {
    const [a, b] = [rows[i], rows[j]];
    const n = commonPrefix(a, b);
    if (n < a.length && n < b.length) return a[n] - b[n];
    return a.length - b.length;
  });
  // Each neighbouring pair's common prefix, computed once, counts for both of its rows.
  const shared = new Array<number>(rows.length).fill(0);
  for (let k = 1; k < order.length; k++) {
    const n = commonPrefix(rows[order[k - 1]], rows[order[k]]);
    shared[order[k - 1]] = Math.max(shared[order[k - 1]], n);
    shared[order[k]] = n;
  }
  return shared;
}

/** Tokens at the end of every prompt of `prompts` (the chat template's close of the user turn and open of the answer). */
function commonEnd(prompts: readonly ArrayLike<number>[]): number {
  if (prompts.length === 0) return 0;
  const first = prompts[0];
  let n = 0;
  while (n < first.length && prompts.every((p) => n < p.length && p[p.length - 1 - n] === first[first.length - 1 - n])) n++;
  return n;
}

/** The default job's recorded updates, with sharing off and on, alternated in one run. */
/** The recorded updates in `dir` (`<method>-update-<n>.json.gz`, in name order); none is an error. */
function readRecordedUpdates(dir: string): ReturnType<typeof readUpdateRecord>[] {
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json.gz'))
        .sort()
    : [];
  if (files.length === 0) throw new Error(`no recorded updates in ${dir}; record a job's with LAMER_RECORD_UPDATES=DIR`);
  return files.map((f) => readUpdateRecord(join(dir, f)));
}

async function sharedPrefixUpdate(_emit?: Emit, note?: Note): Promise<BenchResult[]> {
  const dir = process.env.LAMER_BENCH_UPDATES ?? RECORDED_UPDATES;
  const records = readRecordedUpdates(dir);
  note?.(`${records.length} recorded updates from ${dir}: ${records.map((r) => `${r.method} ${r.batch.promptIds.length}`).join(', ')} rows`);
  // The tiny preset with the recording job's tokenizer (LAMER_BENCH_TOKENIZER, default `compact`, the default job's;
  // lr 0, so the weights' values do not matter), or a checkpoint of that job (LAMER_BENCH_MODEL=DIR).
  const modelDir = process.env.LAMER_BENCH_MODEL;
  const preset = async () => presetCheckpoint('tiny', (process.env.LAMER_BENCH_TOKENIZER ?? 'compact') as TokenizerChoice);
  await using policy = modelDir !== undefined ? await Policy.load(modelDir) : await preset().then((p) => Policy.init(p.config, { seed: 0, assets: p.assets }));
  const highest = Math.max(...records.flatMap((r) => [...r.batch.promptIds, ...r.batch.responseIds].map((ids) => Math.max(...ids))));
  if (highest >= policy.config.vocabSize) {
    throw new Error(
      `the recorded updates hold token id ${highest}, past the model's vocabulary of ${policy.config.vocabSize}: set LAMER_BENCH_TOKENIZER to the recording job's tokenizer (e.g. compact-webshop) or LAMER_BENCH_MODEL to a checkpoint of that job`,
    );
  }
  // The default job's update settings (configs/default.yaml), learning rate 0 so every round trains the same weights.
  const options = { microBatchTokens: 4096, entropyCoef: 0.001, temperature: 1, lr: 0 };
  const methods = [...new Set(records.map((r) => r.method))].sort();
  // One method's recorded updates, each staged and stepped in mini-batches of 64 rows in a seeded order.
  const run = async (method: string, sharePrefix: boolean) => {
    let seconds = 0;
    let computed = 0;
    let rows = 0;
    let tokens = 0;
    for (const { batch: record } of records.filter((r) => r.method === method)) {
      using opt = Optimizer.create(policy, { lr: 1e-4 });
      const t0 = performance.now();
      const { batch, rows: kept } = trainBatch(record);
      await opt.stage(batch);
      const order = kept.map((_, j) => j);
      new Rng(7).shuffle(order);
      for (let s = 0; s < order.length; s += 64) {
        const m = await opt.stagedStep(Int32Array.from(order.slice(s, s + 64)), { ...options, sharePrefix });
        computed += m.computedTokens;
        tokens += m.tokens;
      }
      seconds += (performance.now() - t0) / 1000;
      rows += kept.length;
      for (const j of kept) tokens += record.promptIds[j].length;
    }
    return { seconds, computed, rows, tokens };
  };
  const out: BenchResult[] = [];
  for (const method of methods) {
    const updates = records.filter((r) => r.method === method).length;
    // The most any order of rows into mini-batches could share: each recorded update's rows as one prefix tree.
    // Of those, what follows each row's last shared token, and the prompts' common end inside it.
    let treeTokens = 0;
    let treeRows = 0;
    let unshared = 0;
    let ends = 0;
    for (const { batch: record } of records.filter((r) => r.method === method)) {
      const { rows: kept } = trainBatch(record);
      const rows = kept.map((j) => [...record.promptIds[j], ...record.responseIds[j]]);
      treeTokens += prefixTreeTokens(rows);
      const end = commonEnd(kept.map((j) => record.promptIds[j]));
      sharedLengths(rows).forEach((shared, k) => {
        const promptLength = record.promptIds[kept[k]].length;
        unshared += rows[k].length - shared;
        ends += Math.min(end, Math.max(0, promptLength - shared));
      });
      treeRows += kept.length;
    }
    await run(method, false);
    await run(method, true);
    const off: number[] = [];
    const on: number[] = [];
    let last = { off: await run(method, false), on: await run(method, true) };
    for (let round = 0; round < SHARE_ROUNDS; round++) {
      if (round > 0) last = { off: await run(method, false), on: await run(method, true) };
      off.push(last.off.seconds);
      on.push(last.on.seconds);
    }
    out.push(
      { name: `${method} update (recorded), sharePrefix off`, value: median(off) / updates, unit: 's/update' },
      { name: `${method} update (recorded), sharePrefix on`, value: median(on) / updates, unit: 's/update' },
      { name: `${method} update off/on`, value: median(off) / median(on), unit: 'x (speed-up)' },
      { name: `  ${method} tokens per row (prompt + response)`, value: last.off.tokens / last.off.rows, unit: 'tokens/row' },
      { name: `  ${method} tokens computed per row, off (padding included)`, value: last.off.computed / last.off.rows, unit: 'tokens/row' },
      { name: `  ${method} tokens computed per row, on`, value: last.on.computed / last.on.rows, unit: 'tokens/row' },
      { name: `  ${method} tokens per row, each update's rows as one prefix tree (no order does better)`, value: treeTokens / treeRows, unit: 'tokens/row' },
      { name: `  ${method} tokens per row after its last one shared with any row`, value: unshared / treeRows, unit: 'tokens/row' },
      { name: `  ${method} of them in the prompts' common end (chat template)`, value: ends / treeRows, unit: 'tokens/row' },
    );
  }
  return out;
}

/**
 * A compact vocabulary with one token for each MineSweeper board symbol and its space, the row separator, the compact
 * prompt's field words and the chat template's `user`, `assistant` and blank line (not a tokenizer a config names: the
 * default job's model was selected and confirmed with the base `compact` one).
 */
const BOARD_CELL_VOCABULARY: CompactVocabulary = {
  pieces: [
    ...['?', '.', 'F', '*', ...'12345678'].flatMap((s) => [` ${s}`, s]),
    ...[' /', ' |', ' ;', ' T', ' R', '\n\n'],
    ...['mine', 'acts', 'now', 'act', 'mem', 'note', 'fail', 'init', 'end', 'remark', 'safe', 'none', 'Game', 'over', 'user', 'assistant'].flatMap((w) => [
      ` ${w}`,
      w,
    ]),
  ],
};

/**
 * Counted, not timed: the default job's recorded rows as they are and re-encoded with a tokenizer that spends one token
 * on each board cell and template word. Fewer tokens a row would make every update cheaper; what sharing can save of
 * them is the question: the prefix-tree bound and the tokens after each row's last shared one, each way.
 */
async function sharedPrefixTokenizer(_emit?: Emit, note?: Note): Promise<BenchResult[]> {
  const records = readRecordedUpdates(RECORDED_UPDATES);
  const load = (files: CompactTokenizerFiles) => new TextTokenizer(JSON.parse(files['tokenizer.json']), JSON.parse(files['tokenizer_config.json']));
  const base = load(buildCompactTokenizer('compact'));
  const cells = load(compactTokenizerWith(BOARD_CELL_VOCABULARY));
  const out: BenchResult[] = [];
  for (const method of [...new Set(records.map((r) => r.method))].sort()) {
    for (const [label, encode] of [
      ['compact', (ids: number[]) => ids],
      [
        'board-cell',
        (ids: number[]) => {
          const text = base.decode(ids);
          const again = cells.encode(text);
          if (cells.decode(again) !== text) throw new Error(`the board-cell tokenizer does not give back ${JSON.stringify(text)}`);
          return again;
        },
      ],
    ] as const) {
      let [rowCount, tokens, tree, unshared, shuffled] = [0, 0, 0, 0, 0];
      for (const { batch: record } of records.filter((r) => r.method === method)) {
        const { rows: kept } = trainBatch(record);
        const rows = kept.map((j) => encode([...record.promptIds[j], ...record.responseIds[j]]));
        rowCount += rows.length;
        tokens += rows.reduce((sum, r) => sum + r.length, 0);
        tree += prefixTreeTokens(rows);
        sharedLengths(rows).forEach((shared, k) => (unshared += rows[k].length - shared));
        // The trainer's mini-batches: 64 rows in a seeded order, each its own prefix tree.
        const order = rows.map((_, k) => k);
        new Rng(7).shuffle(order);
        for (let b = 0; b < order.length; b += 64) shuffled += prefixTreeTokens(order.slice(b, b + 64).map((k) => rows[k]));
      }
      out.push(
        { name: `${method}, ${label} tokenizer: tokens per row`, value: tokens / rowCount, unit: 'tokens/row' },
        { name: `  in mini-batches of 64 (the trainer's), shared`, value: shuffled / rowCount, unit: 'tokens/row' },
        { name: `  each update's rows as one prefix tree`, value: tree / rowCount, unit: 'tokens/row' },
        { name: `  after each row's last shared token`, value: unshared / rowCount, unit: 'tokens/row' },
        { name: `  the most sharing can save (tokens per row / one prefix tree)`, value: tokens / tree, unit: 'x' },
      );
    }
  }
  note?.(`${records.length} recorded updates from ${RECORDED_UPDATES}, each row's text re-encoded (and checked to decode to the same text)`);
  return out;
}

/**
 * Where sharing pays on the CPU: the default job's model (tiny preset, compact tokenizer) or the small one on 16 rows whose prompts
 * share their first 1,024 tokens (as rules and a task would), then 128 tokens of their own and 16 response tokens, one
 * micro-batch, train.sharePrefix off and on alternated after a warm-up step each, medians of 5. Random token ids: the
 * step's cost does not depend on them.
 */
async function sharedPrefixLongPrompt(name: 'tiny' | 'small'): Promise<BenchResult[]> {
  const preset = await presetCheckpoint(name);
  await using policy = await Policy.init(preset.config, { seed: 0, assets: preset.assets });
  using opt = Optimizer.create(policy, { lr: 1e-4 });
  const [rows, shared, own, response] = [16, 1024, 128, 16];
  const batch = sharedPrefixBatch(lcg(shared), policy.config.vocabSize, { rows, shared, own, response });
  const { off, on, computed } = await sharePrefixOffOn(opt, batch, { entropyCoef: 0, lr: 0 }, 5);
  const label = `${name}, ${rows} rows of ${shared} shared + ${own} own prompt + ${response} response tokens`;
  return [
    { name: `${label}, sharePrefix off`, value: median(off), unit: 's/step' },
    { name: `${label}, sharePrefix on`, value: median(on), unit: 's/step' },
    { name: `${label}, off/on`, value: median(off) / median(on), unit: 'x (speed-up)' },
    { name: `  tokens computed per row, off`, value: computed.off / rows, unit: 'tokens/row' },
    { name: `  tokens computed per row, on`, value: computed.on / rows, unit: 'tokens/row' },
  ];
}

export const benches: Bench[] = [
  { name: 'default-job update, shared prefixes off vs on', unit: 's/update', run: sharedPrefixUpdate },
  { name: 'default-job rows, shared prefixes under a board-cell tokenizer (counted)', unit: 'tokens/row', run: sharedPrefixTokenizer },
  { name: 'update on rows sharing a long prompt prefix, tiny, shared prefixes off vs on', unit: 's/step', run: () => sharedPrefixLongPrompt('tiny') },
  { name: 'update on rows sharing a long prompt prefix, small, shared prefixes off vs on', unit: 's/step', run: () => sharedPrefixLongPrompt('small') },
  { name: 'policy update of one default-job iteration, staged vs packed per mini-batch', unit: 'us/token', run: updatePaths },
  { name: 'train step small 16x256 vs transformers', unit: 'tokens/s', run: trainThroughput },
  { name: 'log-prob peak memory, 151936 vocab', unit: 'MB', run: logprobMemory },
  { name: 'train step peak memory, gradient checkpointing', unit: 'MB', run: checkpointingMemory },
];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const i = process.argv.indexOf('--logprob-peak');
  const j = process.argv.indexOf('--step-peak');
  if (i >= 0) {
    console.log(`peak ${await logprobPeakChild(process.argv[i + 1] === 'chunked')}`);
  } else if (j >= 0) {
    console.log(`peak ${await stepPeakChild(process.argv[j + 1] === 'on')}`);
  } else {
    for (const b of benches) {
      const r = await b.run();
      for (const row of typeof r === 'number' ? [{ name: b.name, value: r, unit: b.unit }] : r) {
        console.log(`${row.name.padEnd(64)} ${row.value.toFixed(2).padStart(12)}  ${row.unit}`);
      }
    }
  }
}
