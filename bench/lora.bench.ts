// LoRA figures, measured side by side in one run:
//   - bytes held for training on the Qwen3-0.6B shape on the CPU (fp32), full training vs LoRA r = 16 on every linear
//     layer: parameters, gradients (at the update) and AdamW state as the optimizer counts them (Optimizer.memory),
//     and the process's resident memory after one step, each variant in a child process of its own;
//   - generation with the adapter applied unmerged (each adapted projection adds B (A x), the default) and from merged
//     copies W + scale B A (model.lora.merged), against the same model without an adapter, on the small preset, b32
//     greedy, alternated rounds, medians.
// Run alone: `npx tsx bench/lora.bench.ts`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Engine } from '../src/engine/index.js';
import { Policy } from '../src/model/policy.js';
import { presetCheckpoint } from '../src/model/presets.js';
import { Optimizer } from '../src/train/optimizer.js';
import { qwen3_0_6bConfig } from './decode-ops.js';
import type { Bench, BenchResult } from './run.js';

const MB = 2 ** 20;

function rssBytes(): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

interface MemoryFigures {
  parameters: number;
  trainable: number;
  trainableCount: number;
  gradients: number;
  optimizerState: number;
  rss: number;
}

/** In a child process: one SFT step of 2 rows x 48 tokens on the Qwen3-0.6B shape, then the bytes held. */
async function memoryChild(lora: boolean): Promise<MemoryFigures> {
  await using policy = await Policy.init(qwen3_0_6bConfig(), { seed: 1 });
  if (lora) await policy.addLora({ r: 16, alpha: 32, dropout: 0, targets: 'all-linear', seed: 2 });
  using opt = Optimizer.create(policy, { lr: 1e-5 });
  const ids = (n: number, k: number) => Array.from({ length: n }, (_, i) => 5 + ((i * 7919 + k * 104729) % 150000));
  await opt.sftStep([
    { prompt: ids(32, 1), response: ids(16, 2) },
    { prompt: ids(32, 3), response: ids(16, 4) },
  ]);
  return { ...(await opt.memory()), rss: rssBytes() };
}

function childMemory(lora: boolean): MemoryFigures {
  const out = execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--memory', lora ? 'lora' : 'full'], {
    encoding: 'utf8',
    env: { ...process.env, MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' },
    maxBuffer: 1 << 20,
  });
  return JSON.parse(/MEMORY (\{.*\})/.exec(out)![1]) as MemoryFigures;
}

async function memory(): Promise<BenchResult[]> {
  const full = childMemory(false);
  const lora = childMemory(true);
  const rows: BenchResult[] = [];
  for (const [label, m] of [
    ['full', full],
    ['LoRA r16 all-linear', lora],
  ] as const) {
    rows.push(
      { name: `Qwen3-0.6B shape (CPU fp32), ${label}: trainable parameters`, value: m.trainableCount / 1e6, unit: 'M' },
      { name: `Qwen3-0.6B shape (CPU fp32), ${label}: parameter bytes`, value: m.parameters / MB, unit: 'MiB' },
      { name: `Qwen3-0.6B shape (CPU fp32), ${label}: gradient bytes`, value: m.gradients / MB, unit: 'MiB' },
      { name: `Qwen3-0.6B shape (CPU fp32), ${label}: AdamW state bytes`, value: m.optimizerState / MB, unit: 'MiB' },
      {
        name: `Qwen3-0.6B shape (CPU fp32), ${label}: parameters + gradients + state`,
        value: (m.parameters + m.gradients + m.optimizerState) / MB,
        unit: 'MiB',
      },
      { name: `Qwen3-0.6B shape (CPU fp32), ${label}: resident memory after one step`, value: m.rss / MB, unit: 'MiB' },
    );
  }
  rows.push({
    name: 'Qwen3-0.6B shape (CPU fp32): full / LoRA, parameters + gradients + state',
    value: (full.parameters + full.gradients + full.optimizerState) / (lora.parameters + lora.gradients + lora.optimizerState),
    unit: 'x',
  });
  return rows;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function generation(): Promise<BenchResult[]> {
  const preset = await presetCheckpoint('small');
  await using plain = await Policy.init(preset.config, { seed: 0, assets: preset.assets });
  await using adapted = await Policy.init(preset.config, { seed: 0, assets: preset.assets });
  await adapted.addLora({ r: 16, alpha: 32, dropout: 0, targets: 'all-linear', seed: 1 });
  await using merged = await Policy.init(preset.config, { seed: 0, assets: preset.assets });
  await merged.addLora({ r: 16, alpha: 32, dropout: 0, targets: 'all-linear', seed: 1 });
  await merged.setAdapterMerged(true);
  const vocab = preset.config.vocabSize;
  const prompts = Array.from({ length: 32 }, (_, i) => Array.from({ length: 128 }, (_, j) => 5 + ((i * 131 + j * 17) % (vocab - 5))));
  const NEW = 64;
  const time = async (policy: Policy): Promise<number> => {
    await using engine = new Engine(policy, { slots: 32 });
    const t0 = performance.now();
    await Promise.all(prompts.map((p) => engine.generate({ promptIds: p, maxNewTokens: NEW, temperature: 0, stopIds: [] })));
    return (performance.now() - t0) / 1000;
  };
  await time(plain);
  await time(adapted);
  await time(merged);
  const a: number[] = [];
  const b: number[] = [];
  const c: number[] = [];
  for (let round = 0; round < 5; round++) {
    a.push(await time(plain));
    b.push(await time(adapted));
    c.push(await time(merged));
  }
  const tokens = prompts.length * NEW;
  return [
    { name: 'small b32 p128 n64 greedy, no adapter', value: tokens / median(a), unit: 'tokens/s' },
    { name: 'small b32 p128 n64 greedy, LoRA r16 all-linear unmerged', value: tokens / median(b), unit: 'tokens/s' },
    { name: 'small b32 p128 n64 greedy, LoRA r16 all-linear merged copies', value: tokens / median(c), unit: 'tokens/s' },
    { name: 'small b32 p128 n64 greedy, unmerged / no adapter (time)', value: median(b) / median(a), unit: 'x' },
    { name: 'small b32 p128 n64 greedy, merged / no adapter (time)', value: median(c) / median(a), unit: 'x' },
  ];
}

export const benches: Bench[] = [
  { name: 'LoRA memory, Qwen3-0.6B shape on the CPU', unit: 'MiB', run: memory },
  { name: 'LoRA generation, unmerged and merged adapter vs none', unit: 'tokens/s', run: generation },
];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const i = process.argv.indexOf('--memory');
  const only = process.argv.indexOf('--only');
  if (only >= 0) {
    const b = benches.find((x) => x.name.includes(process.argv[only + 1]))!;
    const r = await b.run();
    for (const row of typeof r === 'number' ? [{ name: b.name, value: r, unit: b.unit }] : r)
      console.log(`${row.name.padEnd(78)} ${row.value.toFixed(3).padStart(12)}  ${row.unit}`);
  } else if (i >= 0) {
    console.log(`MEMORY ${JSON.stringify(await memoryChild(process.argv[i + 1] === 'lora'))}`);
  } else {
    for (const b of benches) {
      const r = await b.run();
      for (const row of typeof r === 'number' ? [{ name: b.name, value: r, unit: b.unit }] : r) {
        console.log(`${row.name.padEnd(78)} ${row.value.toFixed(3).padStart(12)}  ${row.unit}`);
      }
    }
  }
}
