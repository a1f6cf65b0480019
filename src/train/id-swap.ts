// Product ids swapped in warm-start rows (sft.swapIds, WebShop). A tiny model trained on demonstrations reads a
// product id off the results page, but leans on the places it learned each id in: on goals it never trained on it
// writes ids the page does not list (a third of the frozen warm start's refusals that start a run, on the selection
// goals). A row whose every product id is replaced by another of the catalog's ids (one id always by the same one, two
// different ids never by the same one) shows the same state and the same move with no id's place to lean on: the move
// is right only as a copy of the page. The prompt, the response and the row's refused and admissible moves are
// swapped together, so the page, the memory's `wrong: <id>` notes, the episode's clicks and the answer stay one story;
// an id the page does not list stays unlisted.
import { LamerError } from '../errors.js';
import { resolveWebShop, type WebShopOptions } from '../envs/webshop/env.js';
import type { MoveContrast } from '../rollout/policy.js';
import type { Rng } from '../util/rng.js';
import type { TrainerConfig } from './config.js';

/** Rewrites the texts of one row with one draw of a swap (of the product ids they hold, or the option values). */
export type RowSwap = (texts: readonly string[], rng: Rng) => string[];

/** A run of letters and digits: the candidates for an id (an id is one such run, in the catalog's case or lower case). */
const WORD = /[0-9A-Za-z]+/g;

/**
 * A swap over the ids `ids` (as the catalog writes them). Each distinct id found in the texts (as written, or lower
 * case) is replaced by a distinct id drawn from `ids`, in the form it was found in; everything else is kept.
 */
export function idSwap(ids: readonly string[]): RowSwap {
  const index = new Map<string, number>();
  ids.forEach((id, i) => {
    index.set(id, i);
    index.set(id.toLowerCase(), i);
  });
  if (index.size === 0) throw new LamerError('E_CONFIG', 'sft.swapIds: the catalog has no product ids to swap');
  return (texts, rng) => {
    // The distinct ids of the row, in order of first appearance, so the draw is a function of the row and the rng.
    const found: number[] = [];
    const seen = new Set<number>();
    for (const t of texts) {
      for (const m of t.matchAll(WORD)) {
        const i = index.get(m[0]);
        if (i !== undefined && !seen.has(i)) {
          seen.add(i);
          found.push(i);
        }
      }
    }
    if (found.length === 0) return texts.slice();
    // A partial Fisher-Yates draw: the first found.length entries of a random permutation of the catalog's ids.
    const pool = Array.from({ length: ids.length }, (_, i) => i);
    const to = new Map<number, number>();
    found.forEach((from, k) => {
      const j = k + rng.int(ids.length - k);
      [pool[k], pool[j]] = [pool[j], pool[k]];
      to.set(from, pool[k]);
    });
    return texts.map((t) =>
      t.replace(WORD, (w) => {
        const i = index.get(w);
        if (i === undefined) return w;
        const target = ids[to.get(i)!];
        return w === ids[i] ? target : target.toLowerCase();
      }),
    );
  };
}

/** The swap for `config`'s WebShop catalog ids (validateConfig refuses sft.swapIds for another environment). */
export function configIdSwap(config: TrainerConfig): RowSwap {
  const { data } = resolveWebShop({ ...config.env.options, ...config.sft.envOptions } as WebShopOptions);
  return idSwap(data.products.map((p) => p.asin));
}

/** A warm-start row's texts swapped together: its prompt, its response (if any) and its contrast's moves. */
export function swapRow(
  swap: RowSwap,
  rng: Rng,
  prompt: string,
  response: string | null,
  contrast: MoveContrast | null,
): { prompt: string; response: string | null; contrast: MoveContrast | null } {
  const texts = [prompt, ...(response !== null ? [response] : []), ...(contrast ? [...contrast.refused, ...contrast.admissible] : [])];
  const out = swap(texts, rng);
  const k = response !== null ? 2 : 1;
  const r = response !== null ? out[1] : null;
  const n = contrast?.refused.length ?? 0;
  const c = contrast ? { refused: out.slice(k, k + n), admissible: out.slice(k + n) } : null;
  return { prompt: out[0], response: r, contrast: c };
}
