// The warm start's demonstrations: the MineSweeper logic player's later episodes follow only what its reflections
// state, and the row weights repeat reflections and memory-reading rows as configured. And what the docs say about the
// default job's seeds: each plays a block of task seeds of its own, but by content (a board's mine layout and first
// reveal) their demonstration boards overlap, by as much as docs/results.md and the README state.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/train/config.js';
import { collectDemonstrations, demonstrationTasks } from '../../src/train/demonstrations.js';

function config(sft: Record<string, number | string | null>) {
  return validateConfig({
    name: 'demo',
    model: { init: { preset: 'tiny', tokenizer: 'compact', seed: 0 }, promptStyle: 'compact' },
    env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2, maxTurns: 7 } },
    trial: { episodes: 3 },
    rollout: { groupSize: 4 },
    sft: { trials: 64, steps: 1, ...sft },
  });
}

const isReflection = (r: string) => r.startsWith('<remark>');

describe('warm-start demonstrations (MineSweeper)', () => {
  it('repeats reflection rows reflectionWeight times and later-episode rows memoryWeight times', async () => {
    const one = await collectDemonstrations(config({ reflectionWeight: 1, memoryWeight: 1 }));
    const weighted = await collectDemonstrations(config({ reflectionWeight: 5, memoryWeight: 2 }));
    const reflections = one.responses.filter(isReflection).length;
    expect(reflections).toBeGreaterThan(5);
    expect(weighted.responses.filter(isReflection).length).toBe(5 * reflections);
    const laterPlay = one.prompts.filter((p, i) => !isReflection(one.responses[i]) && p.includes('mem:')).length;
    const firstPlay = one.prompts.length - reflections - laterPlay;
    expect(weighted.prompts.length).toBe(firstPlay + 2 * laterPlay + 5 * reflections);
    expect(weighted.reflect).toEqual(weighted.responses.map(isReflection));
  });

  it('keeps scripted answers whole unless sft.maxResponseChars cuts them (then memory notes go empty)', async () => {
    // 5x5 boards with 3 mines: reflections listing the safe cells run past 96 characters.
    const five = (sft: Record<string, number | null>) =>
      collectDemonstrations(
        validateConfig({
          ...config({}),
          env: { name: 'minesweeper', options: { rows: 5, cols: 5, mines: 3, maxTurns: 10 } },
          sft: { trials: 64, steps: 1, ...sft },
        }),
      );
    const whole = await five({ reflectionWeight: 1, memoryWeight: 1 });
    const reflections = whole.responses.filter(isReflection);
    expect(reflections.length).toBeGreaterThan(5);
    expect(reflections.every((r) => r.endsWith('</remark>'))).toBe(true);
    expect(reflections.some((r) => r.length > 96)).toBe(true);
    const emptyNotes = (d: typeof whole) => d.prompts.filter((p, i) => !d.reflect[i] && /note: *( ;| \|)/.test(p)).length;
    expect(emptyNotes(whole)).toBe(0);
    const cut = await five({ reflectionWeight: 1, memoryWeight: 1, maxResponseChars: 96 });
    expect(cut.responses.every((r) => r.length <= 96)).toBe(true);
    expect(cut.responses.filter(isReflection).some((r) => !r.endsWith('</remark>'))).toBe(true);
    expect(emptyNotes(cut)).toBeGreaterThan(0);
  });

  it('a later episode opens first the safe cells the reflections in its prompt list, never their mines', async () => {
    const demos = await collectDemonstrations(config({ reflectionWeight: 1, memoryWeight: 1 }));
    let checked = 0;
    for (let i = 0; i < demos.prompts.length; i++) {
      const prompt = demos.prompts[i];
      const mem = /mem: (.*?) \| now:/.exec(prompt);
      if (!mem || isReflection(demos.responses[i]) || prompt.includes('acts:')) continue; // first move of a later episode
      const cell = /<action>(\(\d, \d\))<\/action>/.exec(demos.responses[i])![1];
      const mines = [...mem[1].matchAll(/mine (\(\d, \d\))/g)].map((m) => m[1]);
      const safe = [...mem[1].matchAll(/safe ([^;]*?)(?: ;|$)/g)].flatMap((m) => m[1].match(/\(\d, \d\)/g) ?? []);
      expect(mines).not.toContain(cell);
      if (safe.length > 0) expect(cell).toBe(safe[0]);
      checked++;
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('with sft.guess=ordered the demonstrator answers a prompt always the same way; with random guesses it does not', async () => {
    const answers = async (guess: string) => {
      const demos = await collectDemonstrations(config({ reflectionWeight: 1, memoryWeight: 1, guess }));
      const byPrompt = new Map<string, Set<string>>();
      demos.prompts.forEach((p, i) => {
        if (isReflection(demos.responses[i])) return;
        if (!byPrompt.has(p)) byPrompt.set(p, new Set());
        byPrompt.get(p)!.add(demos.responses[i]);
      });
      return [...byPrompt.values()].map((s) => s.size);
    };
    const ordered = await answers('ordered');
    expect(ordered.length).toBeGreaterThan(20);
    expect(Math.max(...ordered)).toBe(1);
    expect(Math.max(...(await answers('random')))).toBeGreaterThan(1);
  });

  it('sft.trialsPerTask spreads the same number of trials over more distinct boards', async () => {
    const boards = async (trialsPerTask?: number) => {
      const demos = await collectDemonstrations(
        config({ reflectionWeight: 1, memoryWeight: 1, guess: 'ordered', ...(trialsPerTask ? { trialsPerTask } : {}) }),
      );
      return { trials: demos.trials, boards: new Set(demos.prompts.filter((p) => p.startsWith('mine T1 | now:'))).size };
    };
    const grouped = await boards(); // rollout.groupSize 4: 16 tasks x 4 trials
    const spread = await boards(1); // 64 tasks x 1 trial
    expect(grouped.trials).toBe(64);
    expect(spread.trials).toBe(64);
    expect(grouped.boards).toBeLessThanOrEqual(16);
    expect(spread.boards).toBeGreaterThan(2 * grouped.boards); // distinct first boards (two tasks can show the same one)
  });
});

describe('warm-start demonstrations (ALFWorld generated games)', () => {
  const alfConfig = (noise: number) =>
    validateConfig({
      name: 'demo',
      model: { init: { preset: 'tiny', tokenizer: 'compact-alfworld', seed: 0 }, promptStyle: 'compact' },
      env: { name: 'alfworld', options: { household: 'small', maxTurns: 8 } },
      trial: { episodes: 3, historyWindow: 10 },
      rollout: { groupSize: 4 },
      sft: { trials: 48, trialsPerTask: 1, steps: 1, noise, reflectionWeight: 1, memoryWeight: 1 },
    });

  it("are the search player's: bare commands, fact reflections, later episodes going where the memory says", async () => {
    const d = await collectDemonstrations(alfConfig(0));
    expect(d.trials).toBe(48);
    const reflections = d.responses.filter(isReflection);
    expect(reflections.length).toBeGreaterThan(5);
    for (const r of reflections) expect(r).toMatch(/^<remark>(?:[a-z]+ \d+ at [a-z]+ \d+\. ?)*(?:searched: [^<]+\.)?<\/remark>$/);
    for (const r of d.responses.filter((x) => !isReflection(x))) expect(r).toMatch(/^<action>[a-z0-9 ]+<\/action>$/);
    // A later episode's first move, when its memory places the task's object (not the lamp), goes to that place.
    let checked = 0;
    d.prompts.forEach((p, i) => {
      if (!p.includes('mem: T1 fail note:') || p.includes('| acts:') || isReflection(d.responses[i])) return;
      const words = p.slice(0, p.indexOf(' T')).replace('.', '').split(' ');
      const note = p.slice(p.indexOf('note:'), p.indexOf(' | ', p.indexOf('note:')));
      const at = [...note.matchAll(/([a-z]+) (\d+) at ([a-z]+ \d+)\./g)].find((m) => m[1] !== 'desklamp' && words.includes(m[1]));
      if (at === undefined) return;
      expect(d.responses[i]).toBe(`<action>go to ${at[3]}</action>`);
      checked++;
    });
    expect(checked).toBeGreaterThan(3);
  });

  it('play the task types sft.envOptions names, while RL keeps env.options (every type shown, types 1-4 trained)', () => {
    const typesOf = (config: ReturnType<typeof alfConfig>): Set<string> => {
      const { tasks, env } = demonstrationTasks(config);
      const probe = env();
      return new Set(
        tasks.map((t) => {
          probe.reset(t);
          return probe.taskType!()!;
        }),
      );
    };
    const trained = typesOf(alfConfig(0));
    expect([...trained].sort()).toEqual(['look_at_obj_in_light', 'pick_and_place_simple', 'pick_clean_then_place_in_recep', 'pick_heat_then_place_in_recep']);
    const every = alfConfig(0);
    const shown = typesOf(validateConfig({ ...every, sft: { ...every.sft, envOptions: { taskTypes: [1, 2, 3, 4, 5, 6] } } }));
    expect(shown.size).toBe(6);
    expect(shown).toContain('pick_cool_then_place_in_recep');
    expect(shown).toContain('pick_two_obj_and_place');
  });

  it('leave the random moves out, and win most trials', async () => {
    const d = await collectDemonstrations(alfConfig(0.3));
    expect(d.won).toBeGreaterThan(d.trials / 2);
    expect(d.responses.every((r) => !r.startsWith('I try something at random'))).toBe(true);
  });

  it("sft.unlikelihood gives the search player's turns commands the game refuses there, none of them listed", async () => {
    const base = alfConfig(0.3);
    const demos = await collectDemonstrations({ ...base, sft: { ...base.sft, unlikelihood: 1 } });
    let n = 0;
    demos.prompts.forEach((p, i) => {
      const c = demos.contrast[i];
      if (c === null) return;
      n++;
      const can = p.slice(p.lastIndexOf('can: ') + 5, p.lastIndexOf(' | act:')).split(', ');
      const inner = (r: string) => r.slice('<action>'.length, -'</action>'.length);
      expect(c.admissible.map(inner).sort()).toEqual([...can].sort());
      for (const r of c.refused) expect(can).not.toContain(inner(r));
    });
    expect(n).toBeGreaterThan(50);
  });

  it('with sft.refusedMoves, show recovering after "Nothing happens." but never train on a refused command', async () => {
    const base = await collectDemonstrations(alfConfig(0.3));
    const config = alfConfig(0.3);
    config.sft.refusedMoves = 1;
    const d = await collectDemonstrations(config);
    const after = (x: typeof d) => x.prompts.filter((p, i) => !isReflection(x.responses[i]) && p.includes('now: Nothing happens.')).length;
    expect(after(base)).toBe(0);
    expect(after(d)).toBeGreaterThan(20);
    // The rows after a refused command answer with a command the prompt lists as admissible.
    d.prompts.forEach((p, i) => {
      if (isReflection(d.responses[i]) || !p.includes('now: Nothing happens.')) return;
      const command = d.responses[i].slice('<action>'.length, -'</action>'.length);
      const can = p.slice(p.lastIndexOf('can: ') + 5, p.lastIndexOf(' | act:')).split(', ');
      expect(can).toContain(command);
    });
  });
});

describe('warm-start demonstrations (WebShop)', () => {
  const webShopDemos = (tokenizer: 'compact' | 'compact-webshop', sft: Record<string, number>, trial: { markRefused?: boolean; refusedLast?: boolean } = {}) =>
    collectDemonstrations(
      validateConfig({
        name: 'demo',
        model: { init: { preset: 'tiny', tokenizer, seed: 0 }, promptStyle: 'compact' },
        env: { name: 'webshop', options: { maxTurns: 12 } },
        trial: { episodes: 3, ...trial },
        rollout: { groupSize: 4 },
        sft: { trials: 40, trialsPerTask: 1, steps: 1, reflectionWeight: 1, memoryWeight: 1, ...sft },
      }),
    );

  it("are the browser's: reflections name the products bought, and a later episode never opens one of them", async () => {
    const d = await webShopDemos('compact', { noise: 0 });
    const reflections = d.responses.filter(isReflection);
    expect(reflections.length).toBeGreaterThan(5);
    for (const r of reflections) expect(r).toMatch(/^<remark>(?:wrong: b[0-9a-z]{9}(?:, b[0-9a-z]{9})*\.|no purchase\.)<\/remark>$/);
    let checked = 0;
    d.prompts.forEach((p, i) => {
      const wrong = [...p.matchAll(/note: wrong: ([^.|]+)\./g)].flatMap((m) => m[1].split(', '));
      if (wrong.length === 0 || isReflection(d.responses[i])) return;
      for (const asin of wrong) expect(d.responses[i]).not.toBe(`<action>click[${asin}]</action>`);
      checked++;
    });
    expect(checked).toBeGreaterThan(10);
  });

  it('with sft.refusedMoves, show recovering after a click the page refuses, never training on the refused click', async () => {
    const demos = (refusedMoves: number) => webShopDemos('compact-webshop', { noise: 0.3, refusedMoves });
    // A row right after a refused click: the last action clicked a product or an option value, and the page it is on
    // does not offer that click (a product click that applies opens the item page, whose actions never list one).
    const afterRefused = (d: Awaited<ReturnType<typeof demos>>) =>
      d.prompts
        .map((p, i) => ({ p, r: d.responses[i], reflect: d.reflect[i] }))
        .filter(({ p, reflect }) => {
          if (reflect || !p.includes('| acts: ')) return false;
          const last = p
            .slice(p.indexOf('| acts: ') + 8, p.indexOf(' | now: '))
            .split(' ; ')
            .at(-1)!;
          const now = p.slice(p.indexOf(' | now: '));
          const refusedProduct = /^click\[b0[0-9a-z]{8}\]$/.test(last) && now.includes('total results');
          const refusedOption = now.includes('buy now') && /^click\[/.test(last) && !now.includes(last) && !/^click\[b0/.test(last);
          return refusedProduct || refusedOption;
        });
    expect(afterRefused(await demos(0))).toHaveLength(0);
    const rows = afterRefused(await demos(1));
    expect(rows.length).toBeGreaterThan(20);
    for (const { p, r } of rows) {
      const action = r.slice('<action>'.length, -'</action>'.length);
      const offered = p.slice(p.lastIndexOf('available actions: ') + 19, p.lastIndexOf(' | act:')).split(', ');
      expect(offered).toContain(action);
    }
  });

  it('with trial.markRefused, mark the refused click; sft.recoveryWeight repeats the turns after one, no other row', async () => {
    const demos = (recoveryWeight: number) => webShopDemos('compact-webshop', { noise: 0.3, refusedMoves: 1, recoveryWeight }, { markRefused: true });
    const count = (d: Awaited<ReturnType<typeof demos>>) => {
      const after = new Map<string, number>();
      const other = new Map<string, number>();
      d.prompts.forEach((p, i) => {
        const key = `${p}\n${d.responses[i]}`;
        const into = !d.reflect[i] && / no \| now: /.test(p) ? after : other;
        into.set(key, (into.get(key) ?? 0) + 1);
      });
      return { after, other };
    };
    const one = count(await demos(1));
    const three = count(await demos(3));
    expect(one.after.size).toBeGreaterThan(20);
    expect(three.other).toEqual(one.other);
    expect([...three.after.keys()].sort()).toEqual([...one.after.keys()].sort());
    for (const [key, n] of one.after) expect(three.after.get(key), key).toBe(3 * n);
    // The marked action is the refused one: never the action the row answers with.
    for (const key of one.after.keys()) {
      const [p, r] = key.split('\n');
      const refused = p.slice(0, p.indexOf(' no | now: ')).split(' ; ').at(-1)!.split('| acts: ').at(-1)!;
      expect(r).not.toBe(`<action>${refused}</action>`);
    }
  });
  it('with trial.refusedLast, the rows after a refused click end by naming it, and only those rows', async () => {
    const d = await webShopDemos('compact-webshop', { noise: 0.3, refusedMoves: 1 }, { markRefused: true, refusedLast: true });
    let named = 0;
    d.prompts.forEach((p, i) => {
      if (d.reflect[i]) return;
      // The last action the list shows, and whether it carries the refused mark (read from the list alone).
      const acts = p.includes('| acts: ') ? p.slice(p.indexOf('| acts: ') + 8, p.indexOf(' | now: ')).split(' ; ') : [];
      const last = acts.at(-1);
      const end = / \| (click\[[^\]]*\]) no \| act:$/.exec(p);
      if (last?.endsWith(' no')) {
        expect(end?.[1], p).toBe(last.slice(0, -3));
        named++;
      } else expect(end, p).toBeNull();
    });
    expect(named).toBeGreaterThan(20);
  });

  it('sft.checkWeight repeats the turns on a product page lacking a requested value, and no other row', async () => {
    const demos = (checkWeight: number) => webShopDemos('compact-webshop', { noise: 0.3, refusedMoves: 0.5, checkWeight }, { markRefused: true });
    // Read from the prompt alone: a product page (it offers `buy now`) whose actions lack a value the request names
    // (`... with color: midnight blue, and size: iphone 13, and price lower than ...`).
    const lacking = (p: string) => {
      const offered = p.includes('| now: ') ? p.slice(p.lastIndexOf('available actions: ') + 19, p.lastIndexOf(' | act:')).split(', ') : [];
      if (!offered.includes('click[buy now]')) return false;
      const request = p.slice(0, p.indexOf(', and price lower than'));
      const values = [...request.slice(request.lastIndexOf(' with ') + 6).matchAll(/(?:^|, and )[^:,]+: ([^,]+)/g)].map((m) => m[1]);
      return values.some((v) => !offered.includes(`click[${v}]`));
    };
    const count = (d: Awaited<ReturnType<typeof demos>>) => {
      const check = new Map<string, number>();
      const other = new Map<string, number>();
      d.prompts.forEach((p, i) => {
        const key = `${p}\n${d.responses[i]}`;
        const into = !d.reflect[i] && lacking(p) ? check : other;
        into.set(key, (into.get(key) ?? 0) + 1);
      });
      return { check, other };
    };
    const one = count(await demos(1));
    const three = count(await demos(3));
    expect(one.check.size).toBeGreaterThan(10);
    expect(three.other).toEqual(one.other);
    for (const [key, n] of one.check) expect(three.check.get(key), key).toBe(3 * n);
    // What the browser does there: a click the page offers (a requested value it has, or buy now), never a refused one.
    for (const key of one.check.keys()) {
      const [p, r] = key.split('\n');
      const offered = p.slice(p.lastIndexOf('available actions: ') + 19, p.lastIndexOf(' | act:')).split(', ');
      expect(offered).toContain(r.slice('<action>'.length, -'</action>'.length));
    }
  });

  it("sft.unlikelihood gives the browser's turns the clicks the page refuses there, read against the prompt", async () => {
    const demos = (unlikelihood: number) => webShopDemos('compact-webshop', { noise: 0.3, refusedMoves: 0.5, unlikelihood }, { markRefused: true });
    const off = await demos(0);
    const on = await demos(1);
    // The same rows either way (the contrast reads the state, it draws nothing).
    expect(on.prompts).toEqual(off.prompts);
    expect(on.responses).toEqual(off.responses);
    expect(off.contrast.every((c) => c === null)).toBe(true);
    const inner = (r: string) => r.slice('<action>'.length, -'</action>'.length);
    let withContrast = 0;
    let lackingValue = 0;
    on.prompts.forEach((p, i) => {
      const c = on.contrast[i];
      if (c === null) return;
      withContrast++;
      expect(on.reflect[i]).toBe(false);
      const listed = p.slice(p.lastIndexOf('available actions: ') + 19, p.lastIndexOf(' | act:'));
      const offered = listed.split(', ');
      // Admissible: exactly the page's actions, in its order; refused: none of them; the demonstrated move admissible.
      expect(c.admissible.map(inner).join(', ')).toBe(listed);
      expect(c.admissible).toContain(on.responses[i]);
      for (const r of c.refused) {
        expect(r.startsWith('<action>click[') && r.endsWith(']</action>'), r).toBe(true);
        expect(offered).not.toContain(inner(r));
      }
      // On a product page, a value the request names and the page lacks is among the refused clicks.
      if (offered.includes('click[buy now]')) {
        const request = p.slice(0, p.indexOf(', and price lower than'));
        const values = [...request.slice(request.lastIndexOf(' with ') + 6).matchAll(/(?:^|, and )[^:,]+: ([^,]+)/g)].map((m) => m[1]);
        for (const v of values.filter((v) => !offered.includes(`click[${v}]`))) {
          expect(c.refused).toContain(`<action>click[${v}]</action>`);
          lackingValue++;
        }
      }
    });
    expect(withContrast).toBeGreaterThan(100);
    expect(lackingValue).toBeGreaterThan(10);
  });
});

describe("the default job's seeds: demonstration boards by content", () => {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const flat = (file: string) => readFileSync(join(root, file), 'utf8').replace(/\s+/g, ' ');
  const n = (x: number) => x.toLocaleString('en-US');
  const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;

  it('the five confirmation seeds (their committed configs) share boards as the docs say', () => {
    // The boards each seed's warm start played, by content, from the resolved configs the runs wrote.
    const keys = [0, 1, 2, 3, 4].map((seed) => {
      const config = validateConfig(JSON.parse(readFileSync(join(root, 'docs', 'runs', `confirm-seed${seed}`, 'config.json'), 'utf8')));
      expect(config.seed).toBe(seed);
      const { tasks, env } = demonstrationTasks(config);
      const probe = env();
      return tasks.map((task) => {
        probe.reset(task);
        return probe.taskKey!();
      });
    });
    const size = keys[0].length;
    for (const k of keys) expect(new Set(k).size).toBe(size); // distinct within a seed
    const sets = keys.map((k) => new Set(k));
    const pairs: number[] = [];
    for (let a = 0; a < sets.length; a++) for (let b = a + 1; b < sets.length; b++) pairs.push(keys[a].filter((k) => sets[b].has(k)).length);
    const inAnother = keys.map((k, a) => k.filter((key) => sets.some((o, b) => b !== a && o.has(key))).length);
    const union = new Set(keys.flat()).size;
    const [lo, hi] = [Math.min(...pairs), Math.max(...pairs)];
    const mean = pairs.reduce((x, y) => x + y, 0) / pairs.length;
    const [anyLo, anyHi] = [Math.min(...inAnother), Math.max(...inAnother)];
    const stated =
      `any two of the five confirmation seeds share ${lo} to ${hi} of their ${n(size)} demonstration boards ` +
      `(${pct(lo, size)} to ${pct(hi, size)}, ${pct(mean, size)} on average), ${n(anyLo)} to ${n(anyHi)} of a seed's boards ` +
      `(${pct(anyLo, size)} to ${pct(anyHi, size)}) are among another seed's, and the five seeds together play ${n(union)} ` +
      `distinct boards in ${n(size * keys.length)} demonstration trials`;
    expect(flat('docs/results.md')).toContain(stated);
    expect(flat('README.md')).toContain(`share about ${Math.round((100 * mean) / size)}% of their demonstration boards`);
    // Shared, not separate: the statement would be wrong if the seeds' boards were disjoint or the same.
    expect(lo).toBeGreaterThan(0);
    expect(union).toBeLessThan(size * keys.length);
  }, 120_000);
});
