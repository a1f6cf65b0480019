// Generation engine benches on the `small` preset (hidden 256, 4 layers, 4/2 heads, head_dim 64), side by side in one
// run: batch 32, prompts of 128 tokens, 64 new tokens each, greedy, no stop ids (every row generates all 64):
//   - the engine (KV cache, continuous batching),
//   - the same decoding without a KV cache (a full forward over every sequence for each new token),
//   - transformers' generate() on the same checkpoint and prompts (the project's .venv Python, when available).
// And slot occupancy when 64 requests of mixed prompt and response lengths arrive over time into 32 slots.
//
// With CUDA (the addon built with it and a GPU visible), GPU entries too, one bench each ('engine: GPU 0.6b-b32
// engine', 'engine: GPU standard', 'engine: GPU attention', 'engine: GPU 0.6b-b32 transformers', and the same two for
// 0.6b-b128 and 4b-b64; --filter picks some, 'A|B' several):
// random checkpoints of the Qwen3-0.6B shape at batch 32 and 128 and of the Qwen3-4B shape at batch 64 (written by
// transformers, bf16), prompts of 128 tokens, 128 new tokens, greedy, no stop ids: the engine with CUDA graphs, the
// engine eager (cudaGraphs: false), and transformers' generate() with its static cache (compiled; CUDA graphs) and
// eager (dynamic cache), on the same checkpoint and prompts in the same run, with the ratios; and nano-vLLM's
// small-engine workload (256 sequences of random 100-1,024 prompt and output tokens) on the 0.6B shape. Each row is
// handed to the runner as it is measured (`--rows FILE` keeps it even if the run is killed later). The transformers
// side needs a Python with CUDA torch and transformers (the project's .venv, else python3 on PATH); without one the
// engine rows are still measured and stderr says why the others are missing. Without a GPU these benches skip.
//
//   npm run bench -- --filter engine
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Policy } from '../src/model/policy.js';
import { presetCheckpoint } from '../src/model/presets.js';
import { Engine, type EngineResult, type EngineStats } from '../src/engine/index.js';
import { addon } from '../src/native/addon.js';
import type { BenchResult, Emit, Note } from './run.js';
import { decodeStepOps, qwen3_0_6bConfig, randomPolicy } from './decode-ops.js';
import { gpuTarget, type GpuShape, type GpuTarget } from './gpu.js';
import { findPython, type PythonChoice } from './python.js';
import { BenchSkipped, printNote, printRow } from './util.js';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const python = join(root, '.venv', 'bin', 'python');
const BATCH = 32;
const PROMPT = 128;
const NEW = 64;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Setup {
  dir: string;
  policy: Policy;
  prompts: number[][];
}

let setup: Promise<Setup> | undefined;
function small(): Promise<Setup> {
  setup ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-bench-engine-'));
    const { config, assets } = await presetCheckpoint('small');
    const init = await Policy.init(config, { seed: 1, assets });
    await init.save(dir);
    init.dispose();
    const policy = await Policy.load(dir);
    const r = rng(12);
    const V = policy.config.vocabSize;
    const prompts = Array.from({ length: BATCH }, () => Array.from({ length: PROMPT }, () => 3 + Math.floor(r() * (V - 3))));
    return { dir, policy, prompts };
  })();
  return setup;
}

async function engineRun(
  policy: Policy,
  prompts: number[][],
  options: { stepsPerCall?: number; maxNew?: number; slots?: number; cudaGraphs?: boolean } = {},
): Promise<{ seconds: number; tokens: number[][]; decodeStepSeconds: number; graphSteps: number; graphs: number; graphNodes: number; captureMs: number }> {
  await using engine = new Engine(policy, { slots: options.slots ?? BATCH, stepsPerCall: options.stepsPerCall, cudaGraphs: options.cudaGraphs });
  const maxNewTokens = options.maxNew ?? NEW;
  // Every graph this run replays, captured before the clock starts (nothing on the CPU).
  const columns = Math.max(...prompts.map((p) => p.length)) + maxNewTokens;
  const { ms: captureMs, graphs: precaptured } = await engine.precapture({ columns, temperature: 0 });
  // Time of the first native call's results (the prompt forward and one decode step) and of each later arrival.
  let first = NaN;
  const onTokens = (): void => {
    if (Number.isNaN(first)) first = performance.now();
  };
  const t0 = performance.now();
  const out: EngineResult[] = await Promise.all(prompts.map((p) => engine.generate({ promptIds: p, maxNewTokens, temperature: 0, stopIds: [], onTokens })));
  const end = performance.now();
  const seconds = (end - t0) / 1000;
  // Tokens 3..NEW come from NEW - 2 decode steps after the first call.
  const decodeStepSeconds = (end - first) / 1000 / Math.max(1, maxNewTokens - 2);
  const stats = engine.stats();
  if (stats.graphError) process.stderr.write(`engine bench: ${stats.graphError}\n`);
  if (stats.graphs !== precaptured) throw new Error(`engine bench: ${stats.graphs - precaptured} graphs were captured inside the timed region`);
  return {
    seconds,
    tokens: out.map((o) => Array.from(o.tokens)),
    decodeStepSeconds,
    graphSteps: stats.graphSteps,
    graphs: stats.graphs,
    graphNodes: stats.graphNodes,
    captureMs,
  };
}

/** Greedy decoding without a cache: each new token costs a forward over the whole (left-padded) batch. */
async function noCacheRun(policy: Policy, prompts: number[][]): Promise<{ seconds: number; tokens: number[][] }> {
  const seqs = prompts.map((p) => [...p]);
  const V = policy.config.vocabSize;
  const t0 = performance.now();
  for (let step = 0; step < NEW; step++) {
    using logits = await policy.logits(seqs);
    const T = seqs[0].length;
    const data = logits.data as Float32Array;
    for (let b = 0; b < seqs.length; b++) {
      const row = data.subarray((b * T + T - 1) * V, (b * T + T) * V);
      let best = 0;
      for (let j = 1; j < V; j++) if (row[j] > row[best]) best = j;
      seqs[b].push(best);
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, tokens: seqs.map((s) => s.slice(PROMPT)) };
}

const saidMissing = new Set<string>();
/** Says once per interpreter, on stderr, why the transformers rows are missing. */
function missingPython(py: string): void {
  if (saidMissing.has(py)) return;
  saidMissing.add(py);
  process.stderr.write(`engine bench: no transformers rows: ${py} does not exist (scripts/pyenv.sh creates the project's .venv)\n`);
}

interface TransformersTiming {
  seconds: number;
  prefillSeconds: number;
  decodeStepSeconds: number;
  tokens: number[][];
  newTokens: number;
}

function transformersRun(
  dir: string,
  prompts: number[][],
  threads: number,
  extra: {
    python?: string;
    maxNew?: number;
    device?: string;
    dtype?: string;
    cache_implementation?: string;
    warmups?: number;
    repeats?: number;
    timeoutMs?: number;
  } = {},
): TransformersTiming | null {
  const { python: py = python, maxNew = NEW, repeats = 3, timeoutMs, ...rest } = extra;
  if (!existsSync(py)) {
    missingPython(py);
    return null;
  }
  const work = mkdtempSync(join(tmpdir(), 'lamer-bench-hf-'));
  writeFileSync(join(work, 'in.json'), JSON.stringify({ prompts, max_new_tokens: maxNew, mode: 'batch', stop: false, repeats, threads, ...rest }));
  execFileSync(
    py,
    [join(root, 'test', 'parity', 'engine', 'hf_generate.py'), '--model', dir, '--input', join(work, 'in.json'), '--out', join(work, 'out.json')],
    {
      env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error', HF_HUB_OFFLINE: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 2 ** 20,
      ...(timeoutMs ? { timeout: timeoutMs, killSignal: 'SIGKILL' as const } : {}),
    },
  );
  const out = JSON.parse(readFileSync(join(work, 'out.json'), 'utf8')) as {
    seconds: number;
    prefill_seconds: number;
    decode_step_seconds: number;
    tokens: number[][];
    new_tokens: number;
  };
  return {
    seconds: out.seconds,
    prefillSeconds: out.prefill_seconds,
    decodeStepSeconds: out.decode_step_seconds,
    tokens: out.tokens,
    newTokens: out.new_tokens,
  };
}

/** bench/py/plain_generate.py: the plainest generate() of the same workload, to check transformersRun's fairness. */
function plainTransformersRun(dir: string, prompts: number[][], threads: number): { seconds: number; newTokens: number } | null {
  if (!existsSync(python)) {
    missingPython(python);
    return null;
  }
  const work = mkdtempSync(join(tmpdir(), 'lamer-bench-hf-plain-'));
  writeFileSync(join(work, 'prompts.json'), JSON.stringify(prompts));
  const out = execFileSync(python, [join(root, 'bench', 'py', 'plain_generate.py'), dir, join(work, 'prompts.json'), String(threads), String(NEW), '3'], {
    env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error', HF_HUB_OFFLINE: '1' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const r = JSON.parse(out.toString().trim().split('\n').at(-1)!) as { seconds: number; new_tokens: number };
  return { seconds: r.seconds, newTokens: r.new_tokens };
}

function agreement(a: number[][], b: number[][]): number {
  let same = 0;
  let total = 0;
  for (let i = 0; i < a.length; i++) {
    for (let j = 0; j < a[i].length; j++) {
      total++;
      if (a[i][j] === b[i]?.[j]) same++;
    }
  }
  return same / total;
}

// The Python with CUDA torch and transformers for the GPU entries: the project's .venv when it has CUDA, else the
// python3 on PATH (on the project's device machine, the image's own CUDA torch), as an absolute path.
const GPU_PYTHON_CHECK = `
try:
    import torch, transformers
except Exception as e:
    raise SystemExit(f"cannot import torch and transformers ({type(e).__name__}: {e})")
if not torch.cuda.is_available():
    raise SystemExit(f"torch {torch.__version__} sees no GPU")
`;
let gpuPythonChoice: PythonChoice | undefined;
export function gpuPython(): PythonChoice {
  gpuPythonChoice ??= findPython([python, 'python3'], GPU_PYTHON_CHECK);
  return gpuPythonChoice;
}

/** A random model of `shape` where the GPU benches run (bench/gpu.ts); on a GPU with a GPU Python, written by
 * transformers (gpu_checkpoint.py, bf16) so that transformers can decode the same checkpoint, else made by the addon
 * (no transformers rows then, and `note` says why). */
async function gpuModel(t: GpuTarget, shape: GpuShape, note: Note): Promise<{ policy: Policy; dir: string | null }> {
  const options = { device: t.device, dtype: t.dtype, paramDtype: t.dtype };
  const { python: py, reason } = t.smoke ? { python: null, reason: 'a smoke run on the CPU' } : gpuPython();
  if (!py) {
    note(`no transformers rows: no Python with CUDA torch and transformers (${reason}); the model is made by the addon`);
    return { policy: await Policy.init(t.config(shape), { ...options, seed: 1 }), dir: null };
  }
  let dir = gpuCheckpoints.get(shape);
  if (!dir) {
    dir = mkdtempSync(join(tmpdir(), `lamer-bench-${shape}-`));
    execFileSync(py, [join(root, 'bench', 'py', 'gpu_checkpoint.py'), '--shape', shape, '--out', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    gpuCheckpoints.set(shape, dir);
  }
  return { policy: await Policy.load(dir, options), dir };
}
const gpuCheckpoints = new Map<GpuShape, string>();

interface GpuCaseRun {
  label: string;
  dir: string | null;
  prompts: number[][];
  maxNew: number;
  /** The engine's tokens and wall time with CUDA graphs (best of 3). */
  ours: number[][];
  graphs: number;
}
/** What each shape and batch's engine bench measured, for its transformers bench later: in this process, or in a
 * later one on the same machine (scripts/device-check.sh runs them in different stages), through a file in the
 * temporary folder beside the checkpoint it names. */
const gpuRuns = new Map<string, GpuCaseRun>();
const gpuRunFile = (key: string): string => join(tmpdir(), `lamer-bench-gpu-${key}.json`);
function rememberGpuRun(key: string, run: GpuCaseRun): void {
  gpuRuns.set(key, run);
  writeFileSync(gpuRunFile(key), JSON.stringify(run));
}
function recallGpuRun(key: string): GpuCaseRun | undefined {
  const here = gpuRuns.get(key);
  if (here) return here;
  return existsSync(gpuRunFile(key)) ? (JSON.parse(readFileSync(gpuRunFile(key), 'utf8')) as GpuCaseRun) : undefined;
}

/** The engine with CUDA graphs and eager on one shape and batch, its rows emitted as they are measured; transformers'
 * side of the same case is a bench of its own (gpuTransformersCase), run after the figures that matter more. */
async function gpuEngineCase(shape: GpuShape, realBatch: number, emit: Emit = printRow, note: Note = printNote): Promise<BenchResult[]> {
  const t = gpuTarget();
  const batch = t.size(realBatch, 4);
  const promptLen = t.size(128, 16);
  const maxNew = t.size(128, 8);
  const tokens = batch * maxNew;
  const label = `engine GPU: ${shape} b${batch} p${promptLen} n${maxNew}${t.tag}`;
  const r = rng(batch);
  const { policy, dir } = await gpuModel(t, shape, note);
  const V = policy.config.vocabSize;
  const prompts = Array.from({ length: batch }, () => Array.from({ length: promptLen }, () => 3 + Math.floor(r() * (V - 3))));
  try {
    // A warm-up of each, then the best of 3, alternated; every engine captures its graphs before its clock starts.
    const run = (cudaGraphs: boolean) => engineRun(policy, prompts, { maxNew, slots: batch, cudaGraphs });
    for (const cudaGraphs of [true, false]) await run(cudaGraphs);
    let eager = Infinity;
    let best: Awaited<ReturnType<typeof engineRun>> | undefined;
    for (let i = 0; i < 3; i++) {
      const g = await run(true);
      if (!best || g.seconds < best.seconds) best = g;
      eager = Math.min(eager, (await run(false)).seconds);
    }
    rememberGpuRun(`${shape}-b${realBatch}${t.smoke ? '-smoke' : ''}`, { label, dir, prompts, maxNew, ours: best!.tokens, graphs: best!.seconds });
    emit({ name: `${label}: engine, CUDA graphs`, value: tokens / best!.seconds, unit: 'tokens/s' });
    emit({ name: `${label}: engine, eager`, value: tokens / eager, unit: 'tokens/s' });
    emit({ name: `${label}: engine graphs / eager`, value: eager / best!.seconds, unit: 'x' });
    emit({ name: `${label}: engine, decode step (graphs)`, value: best!.decodeStepSeconds * 1000, unit: 'ms' });
    emit({ name: `${label}: engine, decode steps replayed from graphs`, value: best!.graphSteps, unit: 'steps' });
    emit({ name: `${label}: engine, graphs captured before the timed run`, value: best!.graphs, unit: 'graphs' });
    emit({ name: `${label}: engine, their capture (untimed above)`, value: best!.captureMs, unit: 'ms' });
    emit({ name: `${label}: engine, nodes of the largest graph (kernels and copies of one decode step)`, value: best!.graphNodes, unit: 'nodes' });
  } finally {
    policy.dispose();
  }
  return [];
}

/** transformers' generate() with its static cache (compiled; CUDA graphs), then eager, on the checkpoint and prompts
 * of the same case's engine bench (run earlier in this process), beside the engine's figure. Each side has a time
 * limit (LAMER_BENCH_HF_TIMEOUT seconds, default 150): a compile that runs past it costs that side's rows, not the run. */
async function gpuTransformersCase(shape: GpuShape, realBatch: number, emit: Emit = printRow, note: Note = printNote): Promise<BenchResult[]> {
  const t = gpuTarget();
  const run = recallGpuRun(`${shape}-b${realBatch}${t.smoke ? '-smoke' : ''}`);
  if (!run) throw new BenchSkipped(`the engine side of ${shape} b${realBatch} has not run on this machine (its bench comes first)`);
  if (run.dir && !existsSync(run.dir)) throw new BenchSkipped(`the checkpoint of ${shape} b${realBatch} (${run.dir}) is gone`);
  if (!run.dir) throw new BenchSkipped(t.smoke ? 'a smoke run on the CPU has no transformers side' : `no transformers rows: ${gpuPython().reason}`);
  const tokens = run.prompts.length * run.maxNew;
  const common = { python: gpuPython().python!, maxNew: run.maxNew, device: 'cuda', dtype: 'bfloat16', repeats: 2 };
  const limit = Number(process.env.LAMER_BENCH_HF_TIMEOUT ?? 150) * 1000;
  for (const [name, extra] of [
    ['static cache', { cache_implementation: 'static', warmups: 2 }],
    ['eager', { cache_implementation: 'dynamic', warmups: 1 }],
  ] as const) {
    let hf: TransformersTiming | null;
    const t0 = performance.now();
    try {
      hf = transformersRun(run.dir, run.prompts, 0, { ...common, ...extra, timeoutMs: limit });
    } catch (e) {
      note(`${run.label}: transformers ${name}: no rows (${((performance.now() - t0) / 1000).toFixed(0)} s): ${(e as Error).message.split('\n')[0]}`);
      continue;
    }
    if (!hf) continue;
    if (hf.newTokens !== tokens) throw new Error(`transformers generated ${hf.newTokens} tokens, expected ${tokens}`);
    emit({ name: `${run.label}: transformers generate(), ${name}`, value: tokens / hf.seconds, unit: 'tokens/s' });
    emit({ name: `${run.label}: engine graphs / transformers ${name}`, value: hf.seconds / run.graphs, unit: 'x' });
    emit({ name: `${run.label}: transformers ${name} tokens equal to ours`, value: agreement(run.ours, hf.tokens), unit: 'fraction' });
  }
  return [];
}

// The small-engine workload nano-vLLM reports (its bench.py): 256 sequences, each of a random 100-1,024 prompt tokens
// (ids below 10,000) and a random 100-1,024 output tokens generated to the end (no stop ids), temperature 0.6, on the
// Qwen3-0.6B shape; throughput = output tokens / wall time (after one short warm-up request; graphs captured before).
async function gpuStandard(emit: Emit = printRow, note: Note = printNote): Promise<BenchResult[]> {
  const t = gpuTarget();
  const seqs = t.size(256, 8);
  const [lo, hi] = [t.size(100, 10), t.size(1024, 40)];
  const r = rng(256);
  const int = (a: number, b: number): number => a + Math.floor(r() * (b - a + 1));
  const prompts = Array.from({ length: seqs }, () => Array.from({ length: int(lo, hi) }, () => int(0, Math.min(10000, t.config('qwen3-0.6b').vocabSize - 1))));
  const outputs = prompts.map(() => int(lo, hi));
  const total = outputs.reduce((a, b) => a + b, 0);
  const columns = Math.max(...prompts.map((p, i) => p.length + outputs[i]));
  const label = `engine GPU standard: ${seqs} seqs, ${lo}-${hi} in and out, qwen3-0.6b${t.tag}`;
  const policy = await Policy.init(t.config('qwen3-0.6b'), { device: t.device, dtype: t.dtype, paramDtype: t.dtype, seed: 1 });
  note(`${label}: ${prompts.reduce((a, p) => a + p.length, 0)} prompt and ${total} output tokens`);
  try {
    // With CUDA graphs and the prefix cache (the defaults), the same without the prefix cache (these prompts share no
    // prefix: the cache can only cost, keeping every finished prompt's keys/values), and eager.
    for (const [how, cudaGraphs, prefixCacheBytes] of [
      ['CUDA graphs', true, undefined],
      ['CUDA graphs, prefix cache off', true, 0],
      ['eager', false, undefined],
    ] as const) {
      await using engine = new Engine(policy, { slots: seqs, tokenBudget: seqs * columns, cudaGraphs, prefixCacheBytes });
      const { ms } = await engine.precapture({ columns, temperature: 0.6 });
      await engine.generate({ promptIds: prompts[0].slice(0, lo), maxNewTokens: 16, temperature: 0.6, stopIds: [], seed: 0 });
      const t0 = performance.now();
      const out = await Promise.all(prompts.map((p, i) => engine.generate({ promptIds: p, maxNewTokens: outputs[i], temperature: 0.6, stopIds: [], seed: i })));
      const seconds = (performance.now() - t0) / 1000;
      const generated = out.reduce((a, o) => a + o.tokens.length, 0);
      if (generated !== total) throw new Error(`generated ${generated} tokens, expected ${total}`);
      emit({ name: `${label}: engine, ${how}`, value: total / seconds, unit: 'tokens/s' });
      emit({ name: `${label}: engine, ${how}, wall time`, value: seconds, unit: 's' });
      const stats = engine.stats();
      emit({ name: `${label}: engine, ${how}, mean rows per decode step`, value: stats.rowSteps / Math.max(1, stats.decodeSteps), unit: 'rows' });
      if (cudaGraphs && prefixCacheBytes === undefined) {
        emit({ name: `${label}: graphs captured before the timed run`, value: stats.graphs, unit: 'graphs' });
        emit({ name: `${label}: their capture (untimed)`, value: ms, unit: 'ms' });
      }
    }
  } finally {
    policy.dispose();
  }
  return [];
}

// A decode step's attention alone (lamer::decode_attention over live lengths on CUDA; one layer of the Qwen3-0.6B
// shape: 8 key/value heads of 128, 2 query heads each, caches of 2,048 columns, bf16), for rows that all hold 1,024
// keys and for rows of random 100-1,024 keys: time per call and the bandwidth of the live keys/values it reads (the
// least any attention must read). The kernel is the memory-efficient one in its variable-length form: a 64-row query
// tile of which a decode step fills `groups` rows, and no split over keys, so a long row is read by one block.
async function gpuAttention(emit: Emit = printRow): Promise<BenchResult[]> {
  const t = gpuTarget();
  const [kvHeads, groups, headDim, capacity] = t.smoke ? [2, 2, 16, 64] : [8, 2, 128, 2048];
  const r = rng(7);
  for (const batch of [t.size(32, 2), t.size(128, 4)]) {
    for (const [kind, lengths] of [
      ['every row 1024 keys', Array.from({ length: batch }, () => t.size(1024, 40))],
      ['rows of 100-1024 keys', Array.from({ length: batch }, () => t.size(100, 10) + Math.floor(r() * (t.size(1024, 40) - t.size(100, 10) + 1)))],
    ] as const) {
      const seconds = addon().timeDecodeAttention(t.device, t.dtype, { kvHeads, groups, headDim, capacity, lengths: [...lengths], iters: t.size(200, 5) });
      const bytes = lengths.reduce((a, n) => a + n, 0) * kvHeads * headDim * 2 * (t.dtype === 'float32' ? 4 : 2);
      const label = `engine GPU attention: one layer, b${batch}, ${kind}${t.tag}`;
      emit({ name: `${label}: time per call`, value: seconds * 1e6, unit: 'us' });
      emit({ name: `${label}: live keys/values read per second`, value: bytes / seconds / 1e9, unit: 'GB/s' });
    }
  }
  return [];
}

/** 64 requests of mixed prompt and response lengths arriving in bursts into 32 slots; the engine's stats after. */
async function mixedArrivals(policy: Policy, slotLayout: 'packed' | 'fixed'): Promise<EngineStats & { seconds: number; generated: number }> {
  const V = policy.config.vocabSize;
  const r = rng(99);
  await using engine = new Engine(policy, { slots: 32, slotLayout });
  const t0 = performance.now();
  const pending: Promise<EngineResult>[] = [];
  let reserved = 0;
  for (let i = 0; i < 64; i++) {
    const promptLen = 16 + Math.floor(r() * 240);
    const maxNew = 8 + Math.floor(r() * 120);
    reserved += maxNew;
    const prompt = Array.from({ length: promptLen }, () => 3 + Math.floor(r() * (V - 3)));
    pending.push(engine.generate({ promptIds: prompt, maxNewTokens: maxNew, temperature: 1, stopIds: [], seed: i }));
    // Arrivals: bursts of 1-4 requests, 0-40 ms apart.
    if (r() < 0.6) await new Promise((res) => setTimeout(res, Math.floor(r() * 40)));
  }
  const out = await Promise.all(pending);
  const seconds = (performance.now() - t0) / 1000;
  const generated = out.reduce((a, o) => a + o.tokens.length, 0);
  if (generated !== reserved) throw new Error(`generated ${generated} tokens, expected ${reserved}`);
  return { ...engine.stats(), seconds, generated };
}

export const benches = [
  {
    name: 'engine: ATen operators per decode step, Qwen3-0.6B shape (CPU)',
    unit: 'ops',
    run: async (): Promise<BenchResult[]> => {
      // Random weights of the real shape; the count depends on the layers and the code, not on the values.
      const policy = await randomPolicy(qwen3_0_6bConfig());
      try {
        const ops = await decodeStepOps(policy);
        return [
          { name: 'engine: decode step, ATen operators called by lamer (top level)', value: ops.top, unit: 'ops' },
          { name: 'engine: decode step, of those, views (no kernel)', value: ops.views, unit: 'ops' },
          { name: 'engine: decode step, operators that do work (top level, not views)', value: ops.work, unit: 'ops' },
          { name: 'engine: decode step, leaf operators (where kernels run)', value: ops.leaves, unit: 'ops' },
        ];
      } finally {
        policy.dispose();
      }
    },
  },
  {
    name: 'engine: small b32 p128 n64 greedy tokens/s',
    unit: 'tokens/s',
    run: async (): Promise<BenchResult[]> => {
      const { dir, policy, prompts } = await small();
      const threads = addon().buildInfo().threads;
      const tokens = BATCH * NEW;
      await engineRun(policy, prompts.slice(0, 4)); // warm-up
      // Three rounds, each the engine, the bench's transformers side (test/parity/engine/hf_generate.py, itself best of 3)
      // and the plainest generate() script of the same workload, so that the machine's drift (10-30% here) falls on
      // all three alike; best of each (the minimum is the least disturbed run).
      let best = Infinity;
      let prefill = Infinity;
      let step = NaN;
      let ours: number[][] = [];
      let hf: TransformersTiming | null = null;
      let plain: { seconds: number; newTokens: number } | null = null;
      for (let i = 0; i < 3; i++) {
        prefill = Math.min(prefill, (await engineRun(policy, prompts, { maxNew: 1 })).seconds);
        const r = await engineRun(policy, prompts);
        if (r.seconds < best) {
          best = r.seconds;
          ours = r.tokens;
          step = r.decodeStepSeconds;
        }
        const a = transformersRun(dir, prompts, threads);
        if (a && (!hf || a.seconds < hf.seconds)) hf = a;
        const b = plainTransformersRun(dir, prompts, threads);
        if (b && (!plain || b.seconds < plain.seconds)) plain = b;
      }
      let chunked = await engineRun(policy, prompts, { stepsPerCall: 8 });
      const again = await engineRun(policy, prompts, { stepsPerCall: 8 });
      if (again.seconds < chunked.seconds) chunked = again;
      const noCache = await noCacheRun(policy, prompts);
      const rows: BenchResult[] = [
        { name: `engine: torch threads`, value: threads, unit: 'threads' },
        { name: 'engine: KV cache, 1 step/call (b32 p128 n64)', value: tokens / best, unit: 'tokens/s' },
        { name: 'engine: KV cache, 8 steps/call', value: tokens / chunked.seconds, unit: 'tokens/s' },
        { name: 'engine: KV cache, decode steps only', value: BATCH / step, unit: 'tokens/s' },
        { name: 'engine: KV cache, prompt forward (32 x 128)', value: prefill * 1000, unit: 'ms' },
        { name: 'engine: no KV cache (full forwards)', value: tokens / noCache.seconds, unit: 'tokens/s' },
        { name: 'engine: KV cache / no cache', value: noCache.seconds / best, unit: 'x' },
        { name: 'engine: no-cache tokens equal to KV-cache tokens', value: agreement(ours, noCache.tokens), unit: 'fraction' },
      ];
      if (hf && plain) {
        if (plain.newTokens !== tokens) throw new Error(`plain transformers generated ${plain.newTokens} tokens, expected ${tokens}`);
        rows.push(
          { name: 'engine: transformers, plainest generate() script (no mask, inference_mode)', value: tokens / plain.seconds, unit: 'tokens/s' },
          { name: "engine: the bench's transformers side / that script", value: plain.seconds / hf.seconds, unit: 'x' },
          { name: 'engine: KV cache / that script (end to end)', value: plain.seconds / best, unit: 'x' },
        );
      }
      if (hf) {
        if (hf.newTokens !== tokens) throw new Error(`transformers generated ${hf.newTokens} tokens, expected ${tokens}`);
        rows.push(
          { name: 'engine: transformers generate()', value: tokens / hf.seconds, unit: 'tokens/s' },
          { name: 'engine: transformers generate(), decode steps only', value: BATCH / hf.decodeStepSeconds, unit: 'tokens/s' },
          { name: 'engine: transformers prompt forward (32 x 128)', value: hf.prefillSeconds * 1000, unit: 'ms' },
          { name: 'engine: KV cache / transformers (end to end)', value: hf.seconds / best, unit: 'x' },
          { name: 'engine: KV cache / transformers (decode steps)', value: hf.decodeStepSeconds / step, unit: 'x' },
          { name: 'engine: transformers tokens equal to ours', value: agreement(ours, hf.tokens), unit: 'fraction' },
        );
      }
      return rows;
    },
  },
  {
    name: 'engine: occupancy, 64 mixed requests arriving over time into 32 slots',
    unit: 'fraction',
    run: async (): Promise<BenchResult[]> => {
      const { policy } = await small();
      const packed = await mixedArrivals(policy, 'packed');
      // The same arrivals with the GPU's layout (rows fixed in their slots, rows and width rounded up to powers of
      // two): on the CPU its attention reads that width with a mask, as a GPU would without live-length attention.
      const fixed = await mixedArrivals(policy, 'fixed');
      const mb = (bytes: number, steps: number): number => bytes / steps / 2 ** 20;
      return [
        { name: 'engine: mean slot occupancy (rows per step / 32)', value: packed.rowSteps / (packed.decodeSteps * 32), unit: 'fraction' },
        { name: 'engine: occupancy / demand (rows per step / min(32, waiting+live))', value: packed.rowSteps / packed.demandSteps, unit: 'fraction' },
        { name: 'engine: mixed arrivals throughput', value: packed.generated / packed.seconds, unit: 'tokens/s' },
        { name: 'engine: mixed arrivals decode steps', value: packed.decodeSteps, unit: 'steps' },
        { name: 'engine: mixed arrivals, K/V read per decode step (packed rows, CPU)', value: mb(packed.kvBytesRead, packed.decodeSteps), unit: 'MiB' },
        { name: 'engine: mixed arrivals, K/V of live columns per decode step (packed)', value: mb(packed.kvBytesLive, packed.decodeSteps), unit: 'MiB' },
        { name: 'engine: mixed arrivals, K/V read per decode step (fixed slots, masked width)', value: mb(fixed.kvBytesRead, fixed.decodeSteps), unit: 'MiB' },
        { name: 'engine: mixed arrivals, K/V of live columns per decode step (fixed)', value: mb(fixed.kvBytesLive, fixed.decodeSteps), unit: 'MiB' },
        { name: 'engine: mixed arrivals, fixed slots: masked read / live columns', value: fixed.kvBytesRead / fixed.kvBytesLive, unit: 'x' },
      ];
    },
  },
  // The GPU benches, most important first (scripts/device-check.sh runs them in this order, in stages).
  {
    name: 'engine: GPU 0.6b-b32 engine: Qwen3-0.6B shape, batch 32 (CUDA only)',
    unit: 'tokens/s',
    run: (emit?: Emit, note?: Note) => gpuEngineCase('qwen3-0.6b', 32, emit, note),
  },
  {
    name: 'engine: GPU standard: 256 sequences, random 100-1024 prompt and output tokens, Qwen3-0.6B shape (CUDA only)',
    unit: 'tokens/s',
    run: gpuStandard,
  },
  {
    name: 'engine: GPU attention: decode attention alone, time and bandwidth, Qwen3-0.6B layer shape (CUDA only)',
    unit: 'GB/s',
    run: (emit?: Emit) => gpuAttention(emit),
  },
  {
    name: 'engine: GPU 0.6b-b32 transformers: the same case in transformers generate() (CUDA only)',
    unit: 'tokens/s',
    run: (emit?: Emit, note?: Note) => gpuTransformersCase('qwen3-0.6b', 32, emit, note),
  },
  {
    name: 'engine: GPU 0.6b-b128 engine: Qwen3-0.6B shape, batch 128 (CUDA only)',
    unit: 'tokens/s',
    run: (emit?: Emit, note?: Note) => gpuEngineCase('qwen3-0.6b', 128, emit, note),
  },
  {
    name: 'engine: GPU 4b-b64 engine: Qwen3-4B shape, batch 64 (CUDA only)',
    unit: 'tokens/s',
    run: (emit?: Emit, note?: Note) => gpuEngineCase('qwen3-4b', 64, emit, note),
  },
  {
    name: 'engine: GPU 0.6b-b128 transformers: the same case in transformers generate() (CUDA only)',
    unit: 'tokens/s',
    run: (emit?: Emit, note?: Note) => gpuTransformersCase('qwen3-0.6b', 128, emit, note),
  },
  {
    name: 'engine: GPU 4b-b64 transformers: the same case in transformers generate() (CUDA only)',
    unit: 'tokens/s',
    run: (emit?: Emit, note?: Note) => gpuTransformersCase('qwen3-4b', 64, emit, note),
  },
];
