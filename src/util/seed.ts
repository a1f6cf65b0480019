// Seeds derived from a base seed: every stream of randomness in a run (sampling, shuffles, demonstrations) has a seed
// of its own, mixed from the run seed and the stream's coordinates, so streams never share draws.

/** A non-negative 31-bit seed from a base seed and a stream of integers (splitmix-style mixing). */
export function deriveSeed(base: number, ...parts: number[]): number {
  let h = (base >>> 0) ^ Math.floor(base / 0x100000000);
  for (const p of [...parts, parts.length]) {
    h = (h + Math.imul((p | 0) ^ 0x9e3779b9, 0x85ebca6b)) | 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 1;
}
