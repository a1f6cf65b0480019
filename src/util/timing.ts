// Where a process's wall time goes: named parts that the code doing the work adds its seconds to (the engine's native
// calls, environment steps, prompt building, the update's phases), read as differences between two snapshots. The
// parts are disjoint by construction: JavaScript runs one piece at a time, and an awaited native call is counted by
// its awaiting side only while nothing else of the rollout runs (the engine's loop lets callers run between its
// calls, not during them). Whatever a span's parts leave out is its unaccounted time.

/** Seconds by part. */
export type TimeParts = Record<string, number>;

export class TimeBook {
  readonly #parts = new Map<string, number>();

  add(part: string, seconds: number): void {
    this.#parts.set(part, (this.#parts.get(part) ?? 0) + seconds);
  }

  /** Runs `fn`, adding its wall time to `part`. */
  time<T>(part: string, fn: () => T): T {
    const t = performance.now();
    try {
      return fn();
    } finally {
      this.add(part, (performance.now() - t) / 1000);
    }
  }

  /** Awaits `fn()`, adding the wall time until it settles to `part`. */
  async timeAsync<T>(part: string, fn: () => Promise<T>): Promise<T> {
    const t = performance.now();
    try {
      return await fn();
    } finally {
      this.add(part, (performance.now() - t) / 1000);
    }
  }

  snapshot(): TimeParts {
    return Object.fromEntries(this.#parts);
  }
}

/** The process's book: the rollout, the engine and the update add to it; the trainer reads spans of it. */
export const timeBook = new TimeBook();

/** The seconds each part gained between two snapshots (parts that gained nothing are left out). */
export function partsSince(before: TimeParts, after: TimeParts): TimeParts {
  const out: TimeParts = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}
