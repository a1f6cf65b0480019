// Option values swapped in warm-start rows (sft.swapValues, WebShop). Most demonstration rows on a product page click a
// requested value that the product offers, so a tiny model trained on them learns to click the value the request
// names (`flavor: mint` -> `click[mint]`) without reading whether the open product offers it; on goals it never
// trained on it opens a product lacking the value and clicks it anyway (69% of the refusals of ws-sel23's frozen warm
// start, on the selection goals). A row whose option values are replaced by other values of their kind (one value
// always by the same one, two different values never by the same one) keeps its story, a value the page offers still
// offered and one it lacks still lacking, with no request-to-value habit to lean on: clicking the requested value is
// right only where the page lists it.
//
// A value is replaced where the compact prompt, the responses and the memory write it as a value: after `[`, `/ `,
// `: `, `, ` or a product id and a space (the compact reflection's `buy <id> mint, pack of 2`), and before `]`, ` /`,
// `,`, ` ;`, ` |`, `</remark>`, ` and price` or the text's end. Titles and search words, where a value is a word among
// others (`mint green tea`), are kept: matching them would swap numbers inside prices (`8`) and sizes (`pack of 2`).
import { LamerError } from '../errors.js';
import { resolveWebShop, type WebShopOptions } from '../envs/webshop/env.js';
import type { TrainerConfig } from './config.js';
import type { RowSwap } from './id-swap.js';

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A swap over option values that come in `groups` (each one product's values of one option, as the catalog writes
 * them). Values that share a group, directly or through others, form one pool (`pack of 2` with `pack of 6`, not with
 * `8.5`), so a swapped page is one the catalog could show. Each distinct value found in the texts (as a value, in any
 * case) is replaced by a distinct value drawn from its pool, in lower case where it was found in lower case.
 */
export function valueSwap(groups: readonly (readonly string[])[]): RowSwap {
  const values: string[] = [];
  const index = new Map<string, number>();
  const parent: number[] = [];
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (const group of groups) {
    let first: number | null = null;
    for (const v of group) {
      const key = v.toLowerCase();
      let i = index.get(key);
      if (i === undefined) {
        i = values.length;
        values.push(v);
        parent.push(i);
        index.set(key, i);
      }
      if (first === null) first = i;
      else parent[root(i)] = root(first);
    }
  }
  if (values.length < 2) throw new LamerError('E_CONFIG', 'sft.swapValues: the catalog has fewer than two option values to swap');
  const pools = new Map<number, number[]>();
  for (let i = 0; i < values.length; i++) {
    const r = root(i);
    if (!pools.has(r)) pools.set(r, []);
    pools.get(r)!.push(i);
  }
  const poolOf = values.map((_, i) => pools.get(root(i))!);
  // A whole value between separators: `pack of 1` cannot match inside `pack of 12`, whose `2` is no separator.
  const alternatives = values.map(escape);
  const VALUE = new RegExp(`(?<=^|\\[|/ |: |, |\\bb0[0-9a-z]{8} )(${alternatives.join('|')})(?=$|\\]|,| /| ;| \\||</remark>| and price)`, 'gi');
  return (texts, rng) => {
    // The distinct values of the row, in order of first appearance, so the draw is a function of the row and the rng.
    const found: number[] = [];
    const seen = new Set<number>();
    for (const t of texts) {
      for (const m of t.matchAll(VALUE)) {
        const i = index.get(m[1].toLowerCase())!;
        if (!seen.has(i)) {
          seen.add(i);
          found.push(i);
        }
      }
    }
    if (found.length === 0) return texts.slice();
    const used = new Set<number>();
    const to = new Map<number, number>();
    for (const from of found) {
      // A pool holds every value of its kind, and only its own values draw from it: one is always free.
      const free = poolOf[from].filter((j) => !used.has(j));
      const target = free[rng.int(free.length)];
      used.add(target);
      to.set(from, target);
    }
    return texts.map((t) =>
      t.replace(VALUE, (w: string) => {
        const target = values[to.get(index.get(w.toLowerCase())!)!];
        return w === w.toLowerCase() ? target.toLowerCase() : target;
      }),
    );
  };
}

/** The swap for `config`'s WebShop catalog option values (validateConfig refuses sft.swapValues for another environment). */
export function configValueSwap(config: TrainerConfig): RowSwap {
  const { data } = resolveWebShop({ ...config.env.options, ...config.sft.envOptions } as WebShopOptions);
  return valueSwap(data.products.flatMap((p) => [...p.options.values()]));
}
