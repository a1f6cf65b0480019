// Product ids swapped in warm-start rows (sft.swapIds): each row's ids replaced by other catalog ids, one id always by
// the same one and two never by the same one, in the prompt, the response and the row's moves together. Checked on
// made-up texts (what stays, what changes) and on the warm start's own WebShop rows through a recording runtime: with
// every row swapped, each row's text outside its ids is unchanged, a product the page lists stays listed and a click
// the page refuses stays refused.
import { describe, expect, it } from 'vitest';
import { idSwap, swapRow } from '../../src/train/id-swap.js';
import { resolveWebShop } from '../../src/envs/webshop/env.js';
import { swapConfig, warmStartBatches } from '../helpers/warm-start-rows.js';
import { Rng } from '../../src/util/rng.js';
import { codeOf } from '../helpers/index.js';

const IDS = Array.from({ length: 40 }, (_, i) => `B0${String(i).padStart(8, '0')}`);

describe('idSwap', () => {
  it('replaces each id by one other catalog id, consistently across the texts, in the form it was found in', () => {
    const swap = idSwap(IDS);
    const texts = ['page / b000000003 / b000000007 / protection / b0zzzzzzzz', 'click[b000000003]', 'wrong: B000000007. and b000000011'];
    const out = swap(texts, new Rng(1));
    const lower = new Set(IDS.map((id) => id.toLowerCase()));
    const a = /page \/ (\w+) \/ (\w+) \/ protection \/ b0zzzzzzzz/.exec(out[0])!;
    expect(a).not.toBeNull();
    const [x, y] = [a[1], a[2]];
    expect(lower.has(x) && lower.has(y) && x !== y).toBe(true);
    expect(out[1]).toBe(`click[${x}]`);
    const b = /^wrong: (\w+)\. and (\w+)$/.exec(out[2])!;
    expect(b[1]).toBe(y.toUpperCase()); // the catalog's form stays the catalog's form
    expect(IDS).toContain(b[1]);
    expect(lower.has(b[2]) && b[2] !== x && b[2] !== y).toBe(true); // an id listed nowhere stays unlisted
    // Not the identity on every id, a function of the rng, and different for another draw.
    expect(swap(texts, new Rng(1))).toEqual(out);
    expect([1, 2, 3, 4, 5].map((s) => swap(texts, new Rng(s))[1]).filter((t) => t !== texts[1]).length).toBeGreaterThan(2);
    expect(new Set([1, 2, 3, 4, 5, 6, 7, 8].map((s) => swap(texts, new Rng(s))[1])).size).toBeGreaterThan(3);
  });

  it('leaves texts without ids unchanged, and swaps a row with a contrast as one', () => {
    const swap = idSwap(IDS);
    expect(swap(['search[green tea]', 'b0 protection 000000003'], new Rng(0))).toEqual(['search[green tea]', 'b0 protection 000000003']);
    const row = swapRow(swap, new Rng(3), 'x / b000000001 / b000000002 | act:', '<action>click[b000000001]</action>', {
      refused: ['<action>click[b000000009]</action>'],
      admissible: ['<action>click[b000000001]</action>', '<action>click[b000000002]</action>'],
    });
    const [, p1, p2] = /x \/ (\w+) \/ (\w+) \| act:/.exec(row.prompt)!;
    expect(row.response).toBe(`<action>click[${p1}]</action>`);
    expect(row.contrast!.admissible).toEqual([`<action>click[${p1}]</action>`, `<action>click[${p2}]</action>`]);
    const refused = /click\[(\w+)\]/.exec(row.contrast!.refused[0])![1];
    expect([p1, p2]).not.toContain(refused);
  });
});

const config = (swapIds: number, envName = 'webshop') => swapConfig({ maxTurns: 4, steps: 6, sft: { swapIds } }, envName);
const batches = (swapIds: number) => warmStartBatches(config(swapIds));

describe('the warm start with sft.swapIds', () => {
  it('trains on the same rows with their ids swapped, the pages still listing what they listed', async () => {
    const ids = new Set(resolveWebShop({ maxTurns: 4 }).data.products.map((p) => p.asin.toLowerCase()));
    const masked = (t: string) => t.replace(/[0-9a-z]+/g, (w) => (ids.has(w) ? '<id>' : w));
    const listed = (prompt: string) => prompt.slice(prompt.lastIndexOf('available actions: '));
    const clicked = (response: string) => /click\[(\w+)\]/.exec(response)?.[1];
    const [plain, swapped] = [await batches(0), await batches(1)];
    expect(swapped.length).toBe(6);
    let withIds = 0;
    let checkedRefused = 0;
    for (let s = 0; s < plain.length; s++) {
      const [a, b] = [plain[s], swapped[s]];
      expect(b.prompts.map(masked)).toEqual(a.prompts.map(masked));
      expect(b.responses.map(masked)).toEqual(a.responses.map(masked));
      for (let r = 0; r < a.prompts.length; r++) {
        if (masked(a.prompts[r]) === a.prompts[r]) {
          expect(b.prompts[r]).toBe(a.prompts[r]);
          continue;
        }
        withIds++;
        expect(b.prompts[r]).not.toBe(a.prompts[r]);
        const [idA, idB] = [clicked(a.responses[r]), clicked(b.responses[r])];
        if (idA !== undefined && ids.has(idA)) expect(listed(b.prompts[r]).includes(`click[${idB}]`)).toBe(listed(a.prompts[r]).includes(`click[${idA}]`));
        for (const [k, move] of (a.contrast?.[r]?.refused ?? []).entries()) {
          const [mA, mB] = [/<action>(.*)<\/action>/.exec(move)![1], /<action>(.*)<\/action>/.exec(b.contrast![r]!.refused[k])![1]];
          expect(listed(a.prompts[r]).includes(`${mA},`) || listed(a.prompts[r]).endsWith(`${mA} | act:`)).toBe(false);
          expect(listed(b.prompts[r]).includes(`${mB},`) || listed(b.prompts[r]).endsWith(`${mB} | act:`)).toBe(false);
          checkedRefused++;
        }
      }
    }
    expect(withIds).toBeGreaterThan(10);
    expect(checkedRefused).toBeGreaterThan(0);
  });

  it('is refused outside WebShop with E_CONFIG', () => {
    expect(codeOf(() => config(0.5, 'sokoban'))).toBe('E_CONFIG');
    expect(() => config(0.5, 'sokoban')).toThrow(/sft\.swapIds/);
  });
});
