// Train-step throughput on a GPU, for the shapes the published single-GPU anchors use: the Qwen3-0.6B shape with full
// fine-tuning (fp32 master weights and AdamW state, bf16 compute) and the Qwen3-4B shape with a LoRA adapter of rank
// 16 on every linear layer (bf16 base, gradient checkpointing). Random weights (the step's cost does not depend on
// them); 16 rows of 512 prompt + 512 response tokens, one micro-batch of 16,384 tokens; the policy-gradient loss over
// the response tokens with AdamW; one warm-up step, then 3 timed, the median reported as tokens/s of the whole rows
// (prompt + response: every token goes through the forward and backward). Each row is handed to the runner as it is
// measured. And the update on rows that share most of a 2,048-token prompt, with train.sharePrefix off and on.
// bench/gpu.ts: without a GPU these skip; LAMER_BENCH_SMOKE=cpu runs them on the CPU at toy sizes.
//
//   npm run bench -- --filter 'train step: GPU'
import { Policy } from '../src/model/policy.js';
import { Optimizer } from '../src/train/optimizer.js';
import type { TrainRow } from '../src/train/batch.js';
import type { Bench, BenchResult, Emit, Note } from './run.js';
import { gpuTarget, type GpuShape } from './gpu.js';
import { printNote, printRow, sharedPrefixBatch, sharePrefixOffOn } from './util.js';

function lcg(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function trainCase(shape: GpuShape, lora: boolean, emit: Emit = printRow, note: Note = printNote): Promise<BenchResult[]> {
  const t = gpuTarget();
  const rows = t.size(16, 2);
  const [prompt, response] = [t.size(512, 16), t.size(512, 16)];
  const tokens = rows * (prompt + response);
  const checkpointing = lora;
  const label = `train step GPU: ${shape} ${lora ? 'LoRA r16 all-linear' : 'full fine-tuning'}, ${rows} x ${prompt}+${response}${checkpointing ? ', checkpointing' : ''}${t.tag}`;
  const config = t.config(shape);
  // Full fine-tuning keeps fp32 master weights (the CUDA default); a LoRA base is frozen, kept in the compute dtype.
  await using policy = await Policy.init(config, { device: t.device, dtype: t.dtype, paramDtype: lora ? t.dtype : 'float32', seed: 1 });
  if (lora) await policy.addLora({ r: 16, alpha: 32, dropout: 0, targets: 'all-linear', seed: 2 });
  using opt = Optimizer.create(policy, { lr: 1e-6 });
  const r = lcg(tokens);
  const ids = (n: number): number[] => Array.from({ length: n }, () => Math.floor(r() * config.vocabSize));
  const batch: TrainRow[] = Array.from({ length: rows }, (_, i) => ({
    prompt: ids(prompt),
    response: ids(response),
    advantage: (i % 2 ? -1 : 1) * (0.5 + r()),
  }));
  const options = { microBatchTokens: tokens, entropyCoef: 0, gradientCheckpointing: checkpointing };
  const times: number[] = [];
  for (let s = 0; s < 4; s++) {
    const t0 = performance.now();
    await opt.trainStep(batch, options);
    if (s > 0) times.push((performance.now() - t0) / 1000);
    else note(`${label}: warm-up step ${((performance.now() - t0) / 1000).toFixed(2)} s`);
  }
  const mem = await opt.memory();
  const GiB = 2 ** 30;
  emit({ name: `${label}: tokens/s`, value: tokens / median(times), unit: 'tokens/s' });
  emit({ name: `${label}: step`, value: median(times), unit: 's' });
  emit({ name: `${label}: trainable parameters`, value: mem.trainableCount, unit: 'params' });
  emit({ name: `${label}: parameters + optimizer state held`, value: (mem.parameters + mem.optimizerState) / GiB, unit: 'GiB' });
  return [];
}

/**
 * The update on rows that share a long prompt, as the paper's prompts do (the rules and the task, then each row's own
 * turn): 8 rows of a 2,048-token prompt whose first 1,536 tokens all rows share, the last 512 each row's own, and 128
 * response tokens, the Qwen3-0.6B shape fully fine-tuned in one micro-batch; train.sharePrefix off (padded rows) and on
 * (the shared 1,536 computed once), alternated after a warm-up step each, medians of 3.
 */
async function sharedPrefixCase(emit: Emit = printRow, note: Note = printNote): Promise<BenchResult[]> {
  const t = gpuTarget();
  const rows = t.size(8, 4);
  const [shared, own, response] = [t.size(1536, 24), t.size(512, 8), t.size(128, 8)];
  const perRow = shared + own + response;
  const label = `train step GPU: qwen3-0.6b full fine-tuning, ${rows} rows of ${shared} shared + ${own} own prompt + ${response} response tokens${t.tag}`;
  const config = t.config('qwen3-0.6b');
  await using policy = await Policy.init(config, { device: t.device, dtype: t.dtype, paramDtype: 'float32', seed: 1 });
  using opt = Optimizer.create(policy, { lr: 1e-6 });
  const batch = sharedPrefixBatch(lcg(perRow), config.vocabSize, { rows, shared, own, response });
  const { off, on, warmUp, computed } = await sharePrefixOffOn(opt, batch, { entropyCoef: 0 }, 3);
  note(`${label}: warm-up steps ${warmUp.off.toFixed(2)} s off, ${warmUp.on.toFixed(2)} s on`);
  emit({ name: `${label}: step, sharePrefix off`, value: median(off), unit: 's' });
  emit({ name: `${label}: step, sharePrefix on`, value: median(on), unit: 's' });
  emit({ name: `${label}: off/on`, value: median(off) / median(on), unit: 'x (speed-up)' });
  emit({ name: `${label}: tokens computed per row, off`, value: computed.off / rows, unit: 'tokens/row' });
  emit({ name: `${label}: tokens computed per row, on`, value: computed.on / rows, unit: 'tokens/row' });
  return [];
}

export const benches: Bench[] = [
  {
    name: 'train step: GPU 0.6b-full: Qwen3-0.6B shape, full fine-tuning (CUDA only)',
    unit: 'tokens/s',
    run: (emit?: Emit, note?: Note) => trainCase('qwen3-0.6b', false, emit, note),
  },
  {
    name: 'train step: GPU 4b-lora: Qwen3-4B shape, LoRA r16 (CUDA only)',
    unit: 'tokens/s',
    run: (emit?: Emit, note?: Note) => trainCase('qwen3-4b', true, emit, note),
  },
  {
    name: 'train step: GPU 0.6b-shared: Qwen3-0.6B shape, a 2,048-token prompt shared by 8 rows, shared prefixes off vs on (CUDA only)',
    unit: 's',
    run: (emit?: Emit, note?: Note) => sharedPrefixCase(emit, note),
  },
];
