// Optional similarity grouping of step anchors (SPEC §4, off by default): inside a task group, anchors whose text
// similarity is at or above a threshold share one step cluster. The ratio is Ratcliff/Obershelp's, as in Python's
// difflib.SequenceMatcher.ratio() without its junk heuristics: 2*M / (|a| + |b|), M the characters matched by taking
// the longest common substring and recursing on both sides of it.

/** Longest common substring of a[alo:ahi] and b[blo:bhi]; ties go to the earliest in a, then in b. */
function longestMatch(a: string, alo: number, ahi: number, b: string, blo: number, bhi: number): [number, number, number] {
  let bestI = alo;
  let bestJ = blo;
  let bestSize = 0;
  // prev[j + 1] = length of the common suffix of a[..i-1] and b[..j]; one row of the DP table at a time.
  let prev = new Int32Array(bhi - blo + 1);
  let curr = new Int32Array(bhi - blo + 1);
  for (let i = alo; i < ahi; i++) {
    const ca = a.charCodeAt(i);
    for (let j = blo; j < bhi; j++) {
      const k = ca === b.charCodeAt(j) ? prev[j - blo] + 1 : 0;
      curr[j - blo + 1] = k;
      if (k > bestSize) {
        bestSize = k;
        bestI = i - k + 1;
        bestJ = j - k + 1;
      }
    }
    [prev, curr] = [curr, prev];
    curr.fill(0);
  }
  return [bestI, bestJ, bestSize];
}

/** Similarity ratio in [0, 1]; 1 for two empty strings. */
export function similarityRatio(a: string, b: string): number {
  const total = a.length + b.length;
  if (total === 0) return 1;
  let matched = 0;
  const pending: [number, number, number, number][] = [[0, a.length, 0, b.length]];
  while (pending.length > 0) {
    const [alo, ahi, blo, bhi] = pending.pop()!;
    if (alo >= ahi || blo >= bhi) continue;
    const [i, j, size] = longestMatch(a, alo, ahi, b, blo, bhi);
    if (size === 0) continue;
    matched += size;
    pending.push([alo, i, blo, j], [i + size, ahi, j + size, bhi]);
  }
  return (2 * matched) / total;
}

/**
 * Step-cluster id per row: rows of the same group whose anchors are equal, or similar at or above `threshold` to a
 * cluster's first anchor, share an id. Anchors are visited in row order and join the first cluster that matches, so
 * the result is deterministic. Ids are dense across the whole table and never shared between groups.
 */
export function similarityClusters(group: Int32Array, anchor: readonly string[], threshold: number): Int32Array {
  const out = new Int32Array(group.length);
  const perGroup = new Map<number, { exact: Map<string, number>; representatives: [string, number][] }>();
  let nextId = 0;
  for (let i = 0; i < group.length; i++) {
    let g = perGroup.get(group[i]);
    if (!g) {
      g = { exact: new Map(), representatives: [] };
      perGroup.set(group[i], g);
    }
    const text = anchor[i];
    let id = g.exact.get(text);
    if (id === undefined) {
      for (const [rep, repId] of g.representatives) {
        // The ratio can't exceed 2*min/(sum of lengths): skip the quadratic match when that bound already fails.
        const bound = (2 * Math.min(rep.length, text.length)) / (rep.length + text.length || 1);
        if (bound >= threshold && similarityRatio(rep, text) >= threshold) {
          id = repId;
          break;
        }
      }
      if (id === undefined) {
        id = nextId++;
        g.representatives.push([text, id]);
      }
      g.exact.set(text, id);
    }
    out[i] = id;
  }
  return out;
}
