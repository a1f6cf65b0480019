// Model benches: checkpoint load time and resident memory for a ~100 MB fp32 checkpoint (memory-mapped, so the
// weights are file-backed pages, not a second anonymous copy), against a load that converts to bf16 (which must
// copy); and forward throughput (log-probs, tokens/s) of the `small` preset, beside transformers on the same model. Loads run in a fresh child process each,
// so one measurement's pages and allocator state do not flatter the next.
//
//   npx tsx bench/model.bench.ts            prints the figures
//   npx tsx bench/model.bench.ts --measure-load DIR float32|bfloat16   (internal: one load, JSON on stdout)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseModelConfig } from '../src/model/config.js';
import { Policy } from '../src/model/policy.js';
import { presetCheckpoint } from '../src/model/presets.js';
import type { Bench, BenchResult } from './run.js';

const thisFile = fileURLToPath(import.meta.url);
const root = join(dirname(thisFile), '..');
const python = join(root, '.venv', 'bin', 'python');

/** RssAnon / RssFile of this process in MB (Linux /proc). */
function rss(): { anon: number; file: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { anon: kb('RssAnon') / 1024, file: kb('RssFile') / 1024 };
}

/** A ~100 MB fp32 Qwen3-architecture checkpoint (24.6M parameters), written once per run. */
let hundredMb: string | undefined;
async function checkpoint100MB(): Promise<string> {
  if (hundredMb) return hundredMb;
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-100mb-'));
  const config = parseModelConfig({
    model_type: 'qwen3',
    vocab_size: 8192,
    hidden_size: 512,
    intermediate_size: 1536,
    num_hidden_layers: 6,
    num_attention_heads: 8,
    num_key_value_heads: 4,
    head_dim: 64,
    rms_norm_eps: 1e-6,
    rope_theta: 1e6,
    tie_word_embeddings: false,
    dtype: 'float32',
    eos_token_id: 2,
  });
  const policy = await Policy.init(config, { seed: 1 });
  await policy.save(dir);
  policy.dispose();
  hundredMb = dir;
  return dir;
}

function checkpointMB(dir: string): number {
  return (
    readdirSync(dir)
      .filter((f) => f.endsWith('.safetensors'))
      .reduce((s, f) => s + statSync(join(dir, f)).size, 0) /
    2 ** 20
  );
}

interface LoadMeasure {
  loadMs: number;
  afterLoad: { anon: number; file: number };
  afterForward: { anon: number; file: number };
}

/** One load + one forward in this (fresh) process; memory figures are deltas from before the load. */
async function measureLoad(dir: string, dtype: 'float32' | 'bfloat16'): Promise<LoadMeasure> {
  // Load the addon and warm up torch first, so its own startup is not counted as the checkpoint's.
  const warm = await Policy.init(
    parseModelConfig({
      model_type: 'qwen3',
      vocab_size: 8,
      hidden_size: 8,
      intermediate_size: 8,
      num_hidden_layers: 1,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      head_dim: 4,
      eos_token_id: 0,
    }),
    { seed: 0 },
  );
  await warm.logprobs([[1, 2, 3]]);
  warm.dispose();
  const before = rss();
  const t0 = performance.now();
  const policy = await Policy.load(dir, { dtype });
  const loadMs = performance.now() - t0;
  const afterLoad = rss();
  await policy.logprobs([[1, 2, 3, 4, 5, 6, 7, 8]]);
  const afterForward = rss();
  policy.dispose();
  const delta = (a: { anon: number; file: number }) => ({ anon: a.anon - before.anon, file: a.file - before.file });
  return { loadMs, afterLoad: delta(afterLoad), afterForward: delta(afterForward) };
}

function loadInChild(dir: string, dtype: string): LoadMeasure {
  const r = spawnSync(process.execPath, ['--import', 'tsx', thisFile, '--measure-load', dir, dtype], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`load measurement failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as LoadMeasure;
}

async function loadBench(): Promise<BenchResult[]> {
  const dir = await checkpoint100MB();
  const size = checkpointMB(dir);
  const out: BenchResult[] = [{ name: 'checkpoint size (fp32 safetensors)', value: size, unit: 'MB' }];
  for (const dtype of ['float32', 'bfloat16'] as const) {
    const runs = [0, 1, 2].map(() => loadInChild(dir, dtype));
    const best = runs.reduce((a, b) => (b.loadMs < a.loadMs ? b : a));
    const label = dtype === 'float32' ? 'fp32 mmap' : 'bf16 convert';
    out.push(
      { name: `load ${label}: time (best of 3)`, value: best.loadMs, unit: 'ms' },
      { name: `load ${label}: anonymous RSS after load`, value: best.afterLoad.anon, unit: 'MB' },
      { name: `load ${label}: anonymous RSS after a forward`, value: best.afterForward.anon, unit: 'MB' },
      { name: `load ${label}: file-backed RSS after a forward`, value: best.afterForward.file, unit: 'MB' },
    );
  }
  return out;
}

async function forwardBench(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-small-'));
  const { config, assets } = await presetCheckpoint('small');
  const init = await Policy.init(config, { seed: 2, assets });
  await init.save(dir);
  init.dispose();
  await using policy = await Policy.load(dir);
  const out: BenchResult[] = [];
  for (const [batch, len] of [
    [1, 128],
    [8, 256],
  ] as const) {
    const seqs = Array.from({ length: batch }, (_, b) => Array.from({ length: len }, (_, t) => (b * 31 + t * 7) % config.vocabSize));
    await policy.logprobs(seqs); // warm-up
    let tokens = 0;
    const t0 = performance.now();
    do {
      await policy.logprobs(seqs);
      tokens += batch * len;
    } while (performance.now() - t0 < 1500);
    out.push({ name: `small preset log-probs, batch ${batch} x ${len} tokens`, value: tokens / ((performance.now() - t0) / 1000), unit: 'tokens/s' });
    // transformers on the same checkpoint and inputs, when the project's Python reference environment exists.
    if (existsSync(python)) {
      const r = spawnSync(python, [join(root, 'scripts', 'py', 'bench_forward.py'), '--model', dir, '--batch', String(batch), '--len', String(len)], {
        encoding: 'utf8',
      });
      if (r.status === 0) {
        const ref = JSON.parse(r.stdout.trim().split('\n').pop()!) as { tokens_per_s: number };
        out.push({ name: `  transformers, same model and inputs`, value: ref.tokens_per_s, unit: 'tokens/s' });
      }
    }
  }
  return out;
}

export const benches: Bench[] = [
  { name: 'model: load ~100 MB checkpoint (fresh process each)', unit: 'mixed', run: loadBench },
  { name: 'model: forward throughput', unit: 'tokens/s', run: forwardBench },
];

const argv = process.argv.slice(2);
if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  if (argv[0] === '--measure-load') {
    if (!existsSync(argv[1])) throw new Error(`no checkpoint at ${argv[1]}`);
    console.log(JSON.stringify(await measureLoad(argv[1], argv[2] as 'float32' | 'bfloat16')));
  } else {
    for (const b of benches) {
      const r = await b.run();
      for (const x of Array.isArray(r) ? r : [{ name: b.name, value: r, unit: b.unit }]) {
        console.log(`${x.name.padEnd(60)} ${x.value.toFixed(x.value >= 100 ? 0 : 2).padStart(10)} ${x.unit}`);
      }
    }
  }
}
