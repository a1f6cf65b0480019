// Timing helpers shared by the bench files.
import type { BenchResult } from './run.js';
import type { Optimizer, StepOptions } from '../src/train/optimizer.js';
import type { TrainRow } from '../src/train/batch.js';

/** What a bench run on its own does with a row handed to `emit`, and with a note: prints them. */
export function printRow(row: BenchResult): void {
  console.log(`${row.name.padEnd(64)} ${row.value.toPrecision(4).padStart(12)}  ${row.unit}`);
}
export function printNote(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** Runs `fn` repeatedly for about `seconds` (after one warm-up call) and returns calls per second. */
export async function rate(fn: () => unknown | Promise<unknown>, seconds = 1): Promise<number> {
  await fn();
  let calls = 0;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  let now = t0;
  while (now < deadline) {
    await fn();
    calls++;
    now = performance.now();
  }
  return (calls * 1000) / (now - t0);
}

/** Like `rate` for a synchronous function, without an await per call. */
export function rateSync(fn: () => unknown, seconds = 1): number {
  fn();
  let calls = 0;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  let now = t0;
  while (now < deadline) {
    for (let i = 0; i < 100; i++) fn();
    calls += 100;
    now = performance.now();
  }
  return (calls * 1000) / (now - t0);
}

/** Median wall time of `fn` in milliseconds over `repeats` runs. */
export async function medianMs(fn: () => unknown | Promise<unknown>, repeats = 5): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

/** Thrown by a bench that cannot run here (no GPU, no reference Python): bench/run.ts reports it as skipped, with the
 * reason, rather than as a failure. */
export class BenchSkipped extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'BenchSkipped';
  }
}

/** Sizes of a batch whose rows share the first `shared` prompt tokens, then hold `own` prompt and `response` tokens. */
export interface SharedPrefixShape {
  rows: number;
  shared: number;
  own: number;
  response: number;
}

/** Rows of random ids below `vocab` with a common prompt prefix, advantages of alternating sign. */
export function sharedPrefixBatch(random: () => number, vocab: number, s: SharedPrefixShape): TrainRow[] {
  const ids = (n: number): number[] => Array.from({ length: n }, () => Math.floor(random() * vocab));
  const common = ids(s.shared);
  return Array.from({ length: s.rows }, (_, i) => ({
    prompt: [...common, ...ids(s.own)],
    response: ids(s.response),
    advantage: (i % 2 ? -1 : 1) * (0.5 + random()),
  }));
}

/**
 * One train step of `batch` in a single micro-batch with train.sharePrefix off and on: a warm-up step each, then
 * `rounds` of off and on alternated. Seconds of every timed step, the warm-up's, and the tokens each way computed.
 */
export async function sharePrefixOffOn(
  opt: Optimizer,
  batch: TrainRow[],
  options: StepOptions,
  rounds: number,
): Promise<{ off: number[]; on: number[]; warmUp: { off: number; on: number }; computed: { off: number; on: number } }> {
  const tokens = batch.reduce((n, r) => n + r.prompt.length + r.response.length, 0);
  const step = async (sharePrefix: boolean) => {
    const t0 = performance.now();
    const m = await opt.trainStep(batch, { ...options, microBatchTokens: tokens, sharePrefix });
    return { seconds: (performance.now() - t0) / 1000, computed: m.computedTokens };
  };
  const warmUp = { off: (await step(false)).seconds, on: (await step(true)).seconds };
  const out = { off: [] as number[], on: [] as number[], warmUp, computed: { off: 0, on: 0 } };
  for (let round = 0; round < rounds; round++) {
    const [a, b] = [await step(false), await step(true)];
    out.off.push(a.seconds);
    out.on.push(b.seconds);
    out.computed = { off: a.computed, on: b.computed };
  }
  return out;
}
