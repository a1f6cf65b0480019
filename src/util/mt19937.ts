// The random streams of the paper's environments, bit for bit: the Mersenne Twister (MT19937, Matsumoto and
// Nishimura's init_genrand and init_by_array), CPython's `random` module on it (3.10-3.12 algorithms: seeding from an
// int, random, getrandbits, randbelow, randint, choice, sample, shuffle, uniform), and numpy's legacy `RandomState`
// (seed, rand, randint, shuffle, permutation, choice without replacement). The paper's Sokoban rooms, MineSweeper
// layouts and WebShop goals are drawn from these, so a seed gives the task the original code gives for it.
// lamer's own environments draw from src/util/rng.ts instead.

const N = 624;
const M = 397;

export class MT19937 {
  readonly #mt = new Uint32Array(N);
  #index = N + 1;

  /** init_genrand(s): the state from one 32-bit seed. */
  initGenrand(seed: number): void {
    const mt = this.#mt;
    mt[0] = seed >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.#index = N;
  }

  /** init_by_array(key): the state from a list of 32-bit words. */
  initByArray(key: readonly number[]): void {
    if (key.length === 0) throw new RangeError('MT19937.initByArray: the key needs at least one word');
    this.initGenrand(19650218);
    const mt = this.#mt;
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) >>> 0) + (key[j] >>> 0) + j;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) >>> 0) - i;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
    this.#index = N;
  }

  #twist(): void {
    const mt = this.#mt;
    for (let k = 0; k < N; k++) {
      const y = (mt[k] & 0x80000000) | (mt[(k + 1) % N] & 0x7fffffff);
      mt[k] = mt[(k + M) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    this.#index = 0;
  }

  /** genrand_uint32: the next 32-bit output. */
  uint32(): number {
    if (this.#index >= N) {
      if (this.#index === N + 1) this.initGenrand(5489);
      this.#twist();
    }
    let y = this.#mt[this.#index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** genrand_res53: a double in [0, 1) from two outputs, as CPython's random() and numpy's random_sample. */
  res53(): number {
    const a = this.uint32() >>> 5;
    const b = this.uint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }
}

/** The 32-bit words of |n|, least significant first ([0] for 0): CPython's key for seeding from an int. */
function seedWords(n: bigint): number[] {
  let v = n < 0n ? -n : n;
  if (v === 0n) return [0];
  const words: number[] = [];
  while (v > 0n) {
    words.push(Number(v & 0xffffffffn));
    v >>= 32n;
  }
  return words;
}

/** Bits of n (CPython's int.bit_length) for 1 <= n <= 2^32. */
function bitLength(n: number): number {
  return n === 2 ** 32 ? 33 : 32 - Math.clz32(n);
}

/** CPython's `random.Random` (3.10-3.12) for the calls the paper's environments make. */
export class PyRandom {
  readonly #mt = new MT19937();

  constructor(seed: number | bigint = 0) {
    this.seed(seed);
  }

  /** random.seed(n) for an int n (its absolute value's 32-bit words). */
  seed(n: number | bigint): void {
    if (typeof n === 'number' && !Number.isSafeInteger(n)) throw new RangeError(`PyRandom.seed: expected an integer, found ${n}`);
    this.#mt.initByArray(seedWords(BigInt(n)));
  }

  random(): number {
    return this.#mt.res53();
  }

  /** getrandbits(k) for 0 <= k <= 32. */
  getrandbits(k: number): number {
    if (!Number.isInteger(k) || k < 0 || k > 32) throw new RangeError(`PyRandom.getrandbits: k must be an integer in [0, 32], found ${k}`);
    if (k === 0) return 0;
    return this.#mt.uint32() >>> (32 - k);
  }

  /** _randbelow(n) for 1 <= n <= 2^32: getrandbits(bit_length(n)) until it is below n. */
  randbelow(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > 2 ** 32) throw new RangeError(`PyRandom.randbelow: n must be an integer in [1, 2^32], found ${n}`);
    const k = bitLength(n);
    if (k > 32) {
      // n = 2^32: 33 bits; CPython draws two words and keeps 33 bits.
      for (;;) {
        const lo = this.#mt.uint32();
        const hi = this.#mt.uint32() >>> 31;
        const r = hi * 2 ** 32 + lo;
        if (r < n) return r;
      }
    }
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** randint(a, b), both ends included. */
  randint(a: number, b: number): number {
    if (!Number.isInteger(a) || !Number.isInteger(b) || b < a) throw new RangeError(`PyRandom.randint: empty range (${a}, ${b})`);
    return a + this.randbelow(b - a + 1);
  }

  choice<T>(seq: readonly T[]): T {
    if (seq.length === 0) throw new RangeError('PyRandom.choice: the sequence is empty');
    return seq[this.randbelow(seq.length)];
  }

  /** shuffle(x) in place: for i from n - 1 down to 1, swap x[i] with x[randbelow(i + 1)]. */
  shuffle<T>(x: T[]): T[] {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      [x[i], x[j]] = [x[j], x[i]];
    }
    return x;
  }

  /** sample(population, k) without replacement, CPython's pool or set branch by the population's size. */
  sample<T>(population: readonly T[], k: number): T[] {
    const n = population.length;
    if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError(`PyRandom.sample: sample larger than population or negative (${k} of ${n})`);
    let setsize = 21;
    if (k > 5) setsize += 4 ** Math.ceil(Math.log(k * 3) / Math.log(4));
    const result: T[] = new Array<T>(k);
    if (n <= setsize) {
      const pool = [...population];
      for (let i = 0; i < k; i++) {
        const j = this.randbelow(n - i);
        result[i] = pool[j];
        pool[j] = pool[n - i - 1];
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < k; i++) {
        let j = this.randbelow(n);
        while (selected.has(j)) j = this.randbelow(n);
        selected.add(j);
        result[i] = population[j];
      }
    }
    return result;
  }

  uniform(a: number, b: number): number {
    return a + (b - a) * this.random();
  }
}

/** numpy's legacy `RandomState` (numpy.random.seed / rand / randint / shuffle / permutation / choice). */
export class NumpyRandomState {
  readonly #mt = new MT19937();

  constructor(seed = 0) {
    this.seed(seed);
  }

  /** RandomState.seed(n) for an int in [0, 2^32): init_genrand(n). */
  seed(n: number): void {
    if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new RangeError(`NumpyRandomState.seed: seed must be between 0 and 2**32 - 1, found ${n}`);
    this.#mt.initGenrand(n);
  }

  /** rand() / random_sample(): one double in [0, 1). */
  rand(): number {
    return this.#mt.res53();
  }

  /** rand(n): n doubles (a flattened rand(d0, d1, ...) is rand(d0 * d1 * ...)). */
  randArray(n: number): number[] {
    return Array.from({ length: n }, () => this.#mt.res53());
  }

  /** The legacy bounded draw of [0, range]: masked rejection, no draw for a range of 0, none masked for 2^32 - 1. */
  #bounded(range: number): number {
    if (range === 0) return 0;
    if (range === 0xffffffff) return this.#mt.uint32();
    let mask = range;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    mask >>>= 0;
    for (;;) {
      const v = (this.#mt.uint32() & mask) >>> 0;
      if (v <= range) return v;
    }
  }

  /** randint(low, high): one integer in [low, high), for ranges of at most 2^32 values. */
  randint(low: number, high: number): number {
    if (!Number.isSafeInteger(low) || !Number.isSafeInteger(high) || high <= low)
      throw new RangeError(`NumpyRandomState.randint: low >= high (${low}, ${high})`);
    const range = high - low - 1;
    if (range > 0xffffffff) throw new RangeError('NumpyRandomState.randint: ranges over 2^32 values are not ported');
    return low + this.#bounded(range);
  }

  /** randint(low, high, size): `size` integers, drawn in order. */
  randints(low: number, high: number, size: number): number[] {
    return Array.from({ length: size }, () => this.randint(low, high));
  }

  /** shuffle(x) in place: for i from n - 1 down to 1, swap x[i] with x[random_interval(i)]. */
  shuffle<T>(x: T[]): T[] {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.#bounded(i);
      [x[i], x[j]] = [x[j], x[i]];
    }
    return x;
  }

  permutation(n: number): number[] {
    return this.shuffle(Array.from({ length: n }, (_, i) => i));
  }

  /** choice(n, size, replace=False) without weights: permutation(n)[:size]. */
  choiceWithoutReplacement(n: number, size: number): number[] {
    if (size > n) throw new RangeError(`NumpyRandomState.choice: cannot take a larger sample (${size}) than population (${n}) without replacement`);
    return this.permutation(n).slice(0, size);
  }
}
