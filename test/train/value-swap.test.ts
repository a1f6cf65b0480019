// Option values swapped in warm-start rows (sft.swapValues): each row's option values replaced by other values of their
// kind (values that share an option on some product), one value always by the same one and two never by the same one,
// in the prompt, the response and the row's moves together. Checked on made-up texts (what stays, what changes) and on
// the warm start's own WebShop rows through a recording runtime: with every row swapped, each row's text outside its
// values is unchanged, a value the page lists stays listed, one it lacks stays lacking, and a click the page refuses
// stays refused.
import { describe, expect, it } from 'vitest';
import { valueSwap } from '../../src/train/value-swap.js';
import { swapRow } from '../../src/train/id-swap.js';
import { resolveWebShop } from '../../src/envs/webshop/env.js';
import { swapConfig, warmStartBatches } from '../helpers/warm-start-rows.js';
import { Rng } from '../../src/util/rng.js';
import { codeOf } from '../helpers/index.js';

const FLAVORS = ['mint', 'lemon', 'ginger', 'original', 'cherry', 'lime'];
const PACKS = ['pack of 1', 'pack of 2', 'pack of 12'];
// Two products' flavor lists that share `ginger`, and one size list: two pools.
const GROUPS = [['mint', 'lemon', 'ginger'], ['ginger', 'original', 'cherry', 'lime'], PACKS];

describe('valueSwap', () => {
  it('replaces each value by another of its kind, consistently across the texts, and keeps every other word', () => {
    const swap = valueSwap(GROUPS);
    const texts = [
      'shop mint green tea with flavor: mint, and size: pack of 12, and price lower than 9.00 dollars',
      'now: < prev / flavor / lemon / ginger / size / pack of 1 / pack of 12 / mint green tea / price: $12 / available actions: click[lemon], click[pack of 12]',
      '<action>click[mint]</action>',
      'mem: T1 fail note: buy b0abcdefgh mint, pack of 12 ; T2',
    ];
    const out = swap(texts, new Rng(2));
    const request = /^shop mint green tea with flavor: (\w+), and size: (pack of \d+), and price lower than 9\.00 dollars$/.exec(out[0])!;
    expect(request).not.toBeNull(); // the title words and the price are kept
    const [mint, pack12] = [request[1], request[2]];
    expect(FLAVORS).toContain(mint);
    expect(PACKS).toContain(pack12);
    const page =
      /^now: < prev \/ flavor \/ (\w+) \/ (\w+) \/ size \/ (pack of \d+) \/ (pack of \d+) \/ mint green tea \/ price: \$12 \/ available actions: click\[(\w+)\], click\[(pack of \d+)\]$/.exec(
        out[1],
      )!;
    expect(page).not.toBeNull();
    const [lemon, ginger, pack1, pack12b, lemonClick, pack12Click] = page.slice(1);
    expect(new Set([mint, lemon, ginger]).size).toBe(3); // two values never become one
    expect(new Set([pack1, pack12]).size).toBe(2);
    expect([pack12b, pack12Click]).toEqual([pack12, pack12]); // `pack of 12` is one value, not `pack of 1` and `2`
    expect(lemonClick).toBe(lemon);
    expect(out[2]).toBe(`<action>click[${mint}]</action>`);
    expect(out[3]).toBe(`mem: T1 fail note: buy b0abcdefgh ${mint}, ${pack12} ; T2`);
    // A function of the rng, and different for other draws.
    expect(swap(texts, new Rng(2))).toEqual(out);
    expect(new Set([1, 2, 3, 4, 5, 6, 7, 8].map((s) => swap(texts, new Rng(s))[2])).size).toBeGreaterThan(2);
  });

  it('keeps a value the page lacks lacking, leaves texts without values unchanged, and swaps a row with a contrast as one', () => {
    const swap = valueSwap(GROUPS);
    expect(swap(['search[mint green tea]', 'price: $8 / mints / pack of 20'], new Rng(0))).toEqual([
      'search[mint green tea]',
      'price: $8 / mints / pack of 20',
    ]);
    for (let seed = 0; seed < 20; seed++) {
      const row = swapRow(swap, new Rng(seed), 'flavor: mint, and price | now: flavor / lemon / ginger / buy now | act:', '<action>click[< prev]</action>', {
        refused: ['<action>click[mint]</action>'],
        admissible: ['<action>click[lemon]</action>', '<action>click[ginger]</action>'],
      });
      const [, wanted, a, b] = /^flavor: (\w+), and price \| now: flavor \/ (\w+) \/ (\w+) \/ buy now \| act:$/.exec(row.prompt)!;
      expect([a, b]).not.toContain(wanted);
      expect(row.response).toBe('<action>click[< prev]</action>');
      expect(row.contrast).toEqual({
        refused: [`<action>click[${wanted}]</action>`],
        admissible: [`<action>click[${a}]</action>`, `<action>click[${b}]</action>`],
      });
    }
  });

  it('draws only from the kind of each value: a kind found whole is permuted, a value alone in its kind stays', () => {
    const swap = valueSwap([['a1', 'a2'], ['b1'], ['c1', 'c2', 'c3']]);
    const seen = new Set<string>();
    for (let s = 0; s < 30; s++) {
      const r = swap(['x / a1 / a2 / y', 'flavor: b1, and size: c3, and'], new Rng(s));
      const [, u, v] = /^x \/ (\w+) \/ (\w+) \/ y$/.exec(r[0])!;
      const [, w, c] = /^flavor: (\w+), and size: (\w+), and$/.exec(r[1])!;
      expect(new Set([u, v])).toEqual(new Set(['a1', 'a2']));
      expect(w).toBe('b1');
      seen.add(c);
    }
    expect(seen).toEqual(new Set(['c1', 'c2', 'c3']));
  });
});

const config = (swapValues: number, envName = 'webshop') => swapConfig({ maxTurns: 6, steps: 8, sft: { swapValues } }, envName);
const batches = (swapValues: number) => warmStartBatches(config(swapValues));

describe('the warm start with sft.swapValues', () => {
  it('trains on the same rows with their values swapped, the pages still offering what they offered', async () => {
    const values = new Set(
      resolveWebShop({ maxTurns: 6 })
        .data.products.flatMap((p) => [...p.options.values()].flat())
        .map((v) => v.toLowerCase()),
    );
    // A row's pieces between the compact prompt's separators: each pair is the same text or two catalog values.
    const pieces = (t: string) => t.split(/( \/ | \| | ; |, |: |\[|\]|<\/?action>|<\/?remark>)/);
    const sameOutsideValues = (a: string, b: string) => {
      const [pa, pb] = [pieces(a), pieces(b)];
      expect(pb.length).toBe(pa.length);
      let changed = 0;
      pa.forEach((x, k) => {
        if (x === pb[k]) return;
        expect(values.has(x) && values.has(pb[k]), `${x} -> ${pb[k]}`).toBe(true);
        changed++;
      });
      return changed;
    };
    const offered = (prompt: string) => prompt.slice(prompt.lastIndexOf('available actions: '));
    const requested = (prompt: string) => [...prompt.matchAll(/: ([^:,|]+?)(?=, and)/g)].map((m) => m[1]);
    const [plain, swapped] = [await batches(0), await batches(1)];
    expect(swapped.length).toBe(plain.length);
    let changedRows = 0;
    let lacking = 0;
    let checkedRefused = 0;
    for (let s = 0; s < plain.length; s++) {
      const [a, b] = [plain[s], swapped[s]];
      expect(b.prompts.length).toBe(a.prompts.length);
      for (let r = 0; r < a.prompts.length; r++) {
        const changed = sameOutsideValues(a.prompts[r], b.prompts[r]) + sameOutsideValues(a.responses[r], b.responses[r]);
        if (changed > 0) changedRows++;
        // Each requested value the page offers (or lacks) is offered (or lacking) after the swap.
        const [ra, rb] = [requested(a.prompts[r]), requested(b.prompts[r])];
        expect(rb.length).toBe(ra.length);
        if (a.prompts[r].includes('available actions: click[back to search], click[< prev]')) {
          ra.forEach((v, k) => {
            const has = offered(a.prompts[r]).includes(`click[${v}]`);
            if (!has) lacking++;
            expect(offered(b.prompts[r]).includes(`click[${rb[k]}]`)).toBe(has);
          });
        }
        for (const [k, move] of (a.contrast?.[r]?.refused ?? []).entries()) {
          sameOutsideValues(move, b.contrast![r]!.refused[k]);
          const mB = /<action>(.*)<\/action>/.exec(b.contrast![r]!.refused[k])![1];
          expect(offered(b.prompts[r]).includes(`${mB},`) || offered(b.prompts[r]).endsWith(`${mB} | act:`)).toBe(false);
          checkedRefused++;
        }
      }
    }
    expect(changedRows).toBeGreaterThan(10);
    expect(lacking).toBeGreaterThan(0);
    expect(checkedRefused).toBeGreaterThan(0);
  });

  it('leaves the warm start as it was at 0, and is refused outside WebShop with E_CONFIG', async () => {
    expect(config(0).sft.swapValues).toBe(0);
    expect(codeOf(() => config(0.5, 'sokoban'))).toBe('E_CONFIG');
    expect(() => config(0.5, 'sokoban')).toThrow(/sft\.swapValues/);
  });
});
