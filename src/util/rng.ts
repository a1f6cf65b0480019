// Seeded pseudo-random numbers for everything that must be reproducible from a seed (environments, task
// sampling, shuffles). splitmix32 to spread the seed, then xoshiro128** for the stream: fast, 2^128 period, and
// fully determined by the 32-bit seed, so the same seed gives the same numbers on every machine.
import { LamerError } from '../errors.js';

function splitmix32(state: number): [number, number] {
  state = (state + 0x9e3779b9) | 0;
  let z = state;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return [state, (z ^ (z >>> 16)) >>> 0];
}

export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number) {
    if (!Number.isFinite(seed)) throw new LamerError('E_ARG', `Rng seed must be a finite number, got ${seed}`);
    // Fold seeds beyond 32 bits so distinct large seeds still give distinct streams.
    let st = (seed >>> 0) ^ Math.floor(seed / 0x100000000);
    let v: number;
    [st, v] = splitmix32(st);
    this.s0 = v;
    [st, v] = splitmix32(st);
    this.s1 = v;
    [st, v] = splitmix32(st);
    this.s2 = v;
    [, v] = splitmix32(st);
    this.s3 = v | 1;
  }

  /** The generator's state (four 32-bit words), to continue the same stream later with Rng.fromState. */
  state(): [number, number, number, number] {
    return [this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0];
  }

  /** A generator that continues from `state()`'s words; E_ARG when they are not four 32-bit integers, not all zero. */
  static fromState(words: readonly number[]): Rng {
    if (words.length !== 4 || !words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffffffff) || words.every((w) => w === 0)) {
      throw new LamerError('E_ARG', `Rng state must be four 32-bit unsigned integers, not all zero; got ${JSON.stringify(words)}`);
    }
    const rng = new Rng(0);
    [rng.s0, rng.s1, rng.s2, rng.s3] = [words[0] | 0, words[1] | 0, words[2] | 0, words[3] | 0];
    return rng;
  }

  /** Uniform 32-bit unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    if (!(n > 0)) throw new LamerError('E_ARG', `Rng.int needs n > 0, got ${n}`);
    return Math.floor(this.next() * n);
  }

  /** A uniformly chosen element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new LamerError('E_ARG', 'Rng.pick on an empty array');
    return items[this.int(items.length)];
  }

  /** Fisher-Yates shuffle in place; returns the same array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = items[i];
      items[i] = items[j];
      items[j] = tmp;
    }
    return items;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
