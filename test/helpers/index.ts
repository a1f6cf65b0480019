// What many test files share, written once: the repository root, the seeded generator tests draw from, random token
// ids, temporary folders removed after each file, the largest difference between two ragged arrays, the error code a
// call throws, and what an in-process CLI command prints. Nothing here loads the native addon or Python, so every
// tier can use it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * A seeded generator of uniforms in [0, 1): the linear congruential generator s <- 1664525 s + 1013904223 (mod 2^32)
 * of Numerical Recipes, returning s / 2^32 after each step. Its increment is odd, so every seed, 0 included, runs
 * through all 2^32 states.
 */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** `n` token ids drawn uniformly from [low, vocab) by `r`. */
export function randomIds(r: () => number, n: number, vocab: number, low = 0): number[] {
  return Array.from({ length: n }, () => low + Math.floor(r() * (vocab - low)));
}

const made: string[] = [];

/** A fresh temporary folder, removed by removeTempDirs. */
export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `lamer-${prefix}-`));
  made.push(d);
  return d;
}

/** Removes the folders tempDir made (a test file calls it in afterAll); LAMER_KEEP_TMP=1 keeps them. */
export function removeTempDirs(): void {
  if (process.env.LAMER_KEEP_TMP === '1') return;
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** Largest |a - b| over ragged arrays of equal shape (throws on a shape difference; NaN counts as Infinity). */
export function maxAbsDiff(a: ArrayLike<number>[], b: ArrayLike<number>[]): number {
  if (a.length !== b.length) throw new Error(`${a.length} rows vs ${b.length}`);
  let m = 0;
  for (let j = 0; j < a.length; j++) {
    if (a[j].length !== b[j].length) throw new Error(`row ${j}: ${a[j].length} vs ${b[j].length} values`);
    for (let i = 0; i < a[j].length; i++) {
      const d = Math.abs(a[j][i] - b[j][i]);
      if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
    }
  }
  return m;
}

/** The code of the error `f` throws (its message when it has none), or 'no error'. */
export function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
  return 'no error';
}

/**
 * What a CLI command run in-process prints: console.log and console.error are captured while `fn` runs (and restored
 * after), and returned with its exit code.
 */
export async function captured(fn: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  const [log, error] = [console.log, console.error];
  const out: string[] = [];
  const err: string[] = [];
  console.log = (...a: unknown[]) => void out.push(a.join(' '));
  console.error = (...a: unknown[]) => void err.push(a.join(' '));
  try {
    return { code: await fn(), out: out.join('\n'), err: err.join('\n') };
  } finally {
    [console.log, console.error] = [log, error];
  }
}

/** What the clock decides in an event (wall and CPU seconds, where they went, throughput, memory peaks). */
const TIMINGS = [
  'tokensPerSecond',
  'rolloutSeconds',
  'updateSeconds',
  'seconds',
  'rolloutCpuSeconds',
  'updateCpuSeconds',
  'wallTime',
  'breakdown',
  'cpuBusy',
  'peakRssBytes',
] as const;
type Timing = (typeof TIMINGS)[number];

/** An event without its timings: two runs of the same config agree on the rest. */
export function withoutTimings<T extends object>(e: T): Omit<T, Timing> {
  const rest = { ...e } as Record<string, unknown>;
  for (const k of TIMINGS) delete rest[k];
  return rest as Omit<T, Timing>;
}
