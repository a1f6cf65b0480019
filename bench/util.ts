// Timing helpers shared by the bench files.
import type { BenchResult } from './run.js';

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
