// MineSweeper: hand-built boards with rewards and renderings worked out by hand, the seeded first reveal, the
// mine-told expert against an independent count of the fewest clicks a board needs, and the logic player's win
// rates against the simulation figures of SPEC §10.

import { describe, expect, it } from 'vitest';
import { hasCode } from '../../src/errors.js';
import { Rng } from '../../src/util/rng.js';
import { MineSweeperEnv } from '../../src/envs/minesweeper/env.js';
import { MineSweeperExpert, MineSweeperLogicPlayer } from '../../src/envs/minesweeper/expert.js';
import { parseCellAction } from '../../src/envs/minesweeper/parse.js';
import { deduce } from '../../src/envs/minesweeper/solver.js';

const act = (r: number, c: number) => `Reasoning.\n<action>(${r}, ${c})</action>`;
const at = (cols: number) => (r: number, c: number) => (r - 1) * cols + (c - 1);

// 4x4, mines at (1,1) and (1,3). Counts worked by hand:
//   row 1: M 2 M 1 / row 2: 1 2 1 1 / rows 3-4: blank.
/** Plays the 4x4 episode to its end with the player's cells: the cells in click order, and whether it was won. */
function playOut(env: MineSweeperEnv, player: MineSweeperLogicPlayer): { order: number[]; won: boolean } {
  const order: number[] = [];
  let r;
  do {
    const cell = player.chooseCell();
    order.push(cell);
    r = env.step(act(Math.floor(cell / 4) + 1, (cell % 4) + 1));
  } while (!r.done);
  return { order, won: r.won };
}

function handBoard(firstRow: number, firstCol: number): MineSweeperEnv {
  const env = new MineSweeperEnv({ rows: 4, cols: 4, mines: 2 });
  const i = at(4);
  env.load([i(1, 1), i(1, 3)], i(firstRow, firstCol));
  return env;
}

describe('minesweeper rendering and rewards on a hand-built board', () => {
  it('cascades from a blank first reveal and renders ?, . and counts', () => {
    const obs = handBoard(4, 1).restart();
    expect(obs.text).toBe(['Row 1: ? ? ? ?', 'Row 2: 1 2 1 1', 'Row 3: . . . .', 'Row 4: . . . .'].join('\n'));
    expect(obs.anchor).toBe(obs.text);
  });

  it('pays +0.5 for one cell, -1 for open/off-board/unparsable, +10 for the win', () => {
    const env = handBoard(4, 1);
    let r = env.step(act(1, 2));
    expect([r.reward, r.done, r.won, r.valid]).toEqual([0.5, false, false, true]);
    expect(r.observation.text.split('\n')[0]).toBe('Row 1: ? 2 ? ?');
    r = env.step(act(1, 2));
    expect([r.reward, r.done, r.valid]).toEqual([-1, false, true]);
    expect(r.observation.anchor.split('\n')[0]).toBe('Row 1: ? 2 ? ?');
    r = env.step(act(9, 9));
    expect([r.reward, r.done, r.valid]).toEqual([-1, false, true]);
    r = env.step('I open the corner <action>the corner</action>');
    expect([r.reward, r.done, r.valid]).toEqual([-1, false, false]);
    r = env.step('(1, 4) without tags');
    expect([r.reward, r.done, r.valid]).toEqual([-1, false, false]);
    r = env.step(act(1, 4));
    expect([r.reward, r.done, r.won, r.valid]).toEqual([10, true, true, true]);
    expect(() => env.step(act(1, 1))).toThrow(/episode is over/);
  });

  it('pays -0.1 and ends on a mine, saying where it was', () => {
    const env = handBoard(4, 1);
    const r = env.step(act(1, 3));
    expect([r.reward, r.done, r.won, r.valid]).toEqual([-0.1, true, false, true]);
    expect(r.observation.text).toContain('(1, 3) was a mine');
  });

  it('pays +2 when one click cascades over several cells', () => {
    const env = handBoard(2, 1);
    expect(env.restart().text).toBe(['Row 1: ? ? ? ?', 'Row 2: 1 ? ? ?', 'Row 3: ? ? ? ?', 'Row 4: ? ? ? ?'].join('\n'));
    const r = env.step(act(4, 4));
    expect(r.reward).toBe(2);
    expect(r.info.opened).toBe(11); // rows 3-4 (8 cells) and row 2, columns 2-4
    expect(r.observation.text).toBe(['Row 1: ? ? ? ?', 'Row 2: 1 2 1 1', 'Row 3: . . . .', 'Row 4: . . . .'].join('\n'));
  });

  it('ends after maxTurns turns', () => {
    const env = handBoard(4, 1);
    for (let t = 1; t <= 7; t++) expect(env.step(act(4, 4)).done).toBe(t === 7);
  });

  it('reads (row, col) as the first two whole numbers of the action', () => {
    expect(parseCellAction('(2, 3)')).toEqual({ row: 2, col: 3 });
    expect(parseCellAction('row 5 column 1')).toEqual({ row: 5, col: 1 });
    expect(parseCellAction('(-1, 2)')).toEqual({ row: -1, col: 2 });
    expect(parseCellAction('7')).toBeNull();
  });
});

describe('minesweeper seeded tasks', () => {
  it('first reveal is safe, opened, and does not win; the mine count is right', () => {
    const env = new MineSweeperEnv();
    for (let seed = 0; seed < 300; seed++) {
      const obs = env.reset(seed);
      const unopened = (obs.text.match(/\?/g) ?? []).length;
      expect(env.board.mines.reduce((a, b) => a + b, 0)).toBe(3);
      expect(env.board.mines[env.firstReveal]).toBe(0);
      expect(env.openedCells[env.firstReveal]).toBe(1);
      expect(unopened).toBeGreaterThan(3);
    }
  });

  it('same seed gives the same board and behaviour; restart() returns the initial observation', () => {
    const a = new MineSweeperEnv();
    const b = new MineSweeperEnv();
    const rng = new Rng(1);
    const boards = new Set<string>();
    for (let seed = 0; seed < 50; seed++) {
      const initial = a.reset(seed);
      expect(b.reset(seed)).toEqual(initial);
      expect(b.board.mines).toEqual(a.board.mines);
      boards.add(initial.text);
      for (let t = 0; t < 7; t++) {
        const response = act(1 + rng.int(7), 1 + rng.int(7));
        const ra = a.step(response);
        expect(b.step(response)).toEqual(ra);
        if (ra.done) break;
      }
      expect(a.restart()).toEqual(initial);
      a.reset(seed + 1000);
      expect(a.reset(seed)).toEqual(initial);
    }
    expect(boards.size).toBeGreaterThan(40);
  });
});

/** Independent count of the fewest clicks that open every safe cell: each unopened blank area needs one click, and
 * each unopened numbered cell that touches no blank cell needs its own. */
function fewestClicks(env: MineSweeperEnv): number {
  const { rows, cols } = env.settings;
  const mines = env.board.mines;
  const opened = env.openedCells;
  const around = (i: number) => {
    const out: number[] = [];
    const r = Math.floor(i / cols);
    const c = i % cols;
    for (let dr = -1; dr <= 1; dr++)
      for (let dc = -1; dc <= 1; dc++) {
        const nr = r + dr;
        const nc = c + dc;
        if ((dr || dc) && nr >= 0 && nc >= 0 && nr < rows && nc < cols) out.push(nr * cols + nc);
      }
    return out;
  };
  const count = (i: number) => around(i).filter((j) => mines[j]).length;
  const seen = new Set<number>();
  let clicks = 0;
  for (let i = 0; i < rows * cols; i++) {
    if (mines[i] || opened[i] || seen.has(i)) continue;
    if (count(i) === 0) {
      clicks++;
      const stack = [i];
      seen.add(i);
      while (stack.length) {
        const j = stack.pop() as number;
        for (const k of around(j)) {
          if (!seen.has(k) && !mines[k] && count(k) === 0) {
            seen.add(k);
            stack.push(k);
          }
        }
      }
    } else if (!around(i).some((j) => !mines[j] && count(j) === 0)) {
      clicks++;
    }
  }
  return clicks;
}

describe('minesweeper players', () => {
  it('the expert told the mines wins every board given enough turns, and within 7 turns exactly the boards that allow it', () => {
    for (const [rows, cols, mines] of [
      [6, 6, 3],
      [4, 4, 2],
    ]) {
      const unlimited = new MineSweeperEnv({ rows, cols, mines, maxTurns: 1000 });
      const limited = new MineSweeperEnv({ rows, cols, mines });
      let winnable = 0;
      for (let seed = 0; seed < 400; seed++) {
        unlimited.reset(seed);
        limited.reset(seed);
        const needed = fewestClicks(unlimited);
        for (const env of [unlimited, limited]) {
          const expert = new MineSweeperExpert(env);
          let r;
          let turns = 0;
          do {
            r = env.step(expert.act());
            turns++;
            expect(r.reward).not.toBe(-0.1);
          } while (!r.done);
          expect(r.won).toBe(env === unlimited || needed <= 7);
          if (r.won) expect(turns).toBe(needed);
        }
        if (needed <= 7) winnable++;
      }
      console.log(`minesweeper ${rows}x${cols}/${mines}: ${((100 * winnable) / 400).toFixed(1)}% of boards winnable in 7 turns`);
    }
  });

  it('single-cell deductions find the safe cells and mines a hand-worked board proves', () => {
    // Seen board (-1 unopened): `1 ? ?` / `1 1 1` / `. . .`.
    const visible = Int8Array.from([1, -1, -1, 1, 1, 1, 0, 0, 0]);
    // (2,1)=1 sees unknown (1,2) only → mine; then (2,3)=1 sees (1,2) mine and (1,3) → (1,3) safe.
    expect(deduce(3, 3, visible)).toEqual({ safe: [2], mines: [1] });
  });

  it('the logic-only player wins about as often as SPEC §10 simulated (pass@1..3)', () => {
    const figures: Record<string, number[]> = {};
    for (const [rows, cols, mines, spec] of [
      [6, 6, 3, [75.1, 83.5, 86.3]],
      [4, 4, 2, [61.7, 80.6, 88.2]],
    ] as const) {
      const env = new MineSweeperEnv({ rows, cols, mines });
      const boards = 1000;
      const pass = [0, 0, 0];
      for (let seed = 0; seed < boards; seed++) {
        env.reset(seed);
        const player = new MineSweeperLogicPlayer(env, { seed });
        for (let episode = 0; episode < 3; episode++) {
          env.restart();
          let r;
          do {
            const cell = player.chooseCell();
            r = env.step(act(Math.floor(cell / cols) + 1, (cell % cols) + 1));
          } while (!r.done);
          if (r.won) {
            for (let k = episode; k < 3; k++) pass[k]++;
            break;
          }
        }
      }
      const rates = pass.map((p) => (100 * p) / boards);
      figures[`${rows}x${cols}/${mines}`] = rates;
      rates.forEach((rate, k) => expect(Math.abs(rate - spec[k])).toBeLessThan(10));
    }
    console.log('logic-only player pass@1..3 (%):', JSON.stringify(figures));
  });

  it('the scripted reflection names the mine hit and the cells opened safely', () => {
    const env = handBoard(4, 1);
    const r1 = env.step(act(1, 2));
    const r2 = env.step(act(1, 1));
    expect(r2.done).toBe(true);
    const steps = [
      { action: '(1, 2)', observation: r1.observation.text },
      { action: '(1, 1)', observation: r2.observation.text },
    ];
    const remark = env.parseReflection(new MineSweeperExpert(env).reflect(steps));
    expect(remark.valid).toBe(true);
    expect(remark.text).toContain('mine at (1, 1); safe cells: (1, 2).');
    const terse = env.parseReflection(new MineSweeperExpert(env, { style: 'compact' }).reflect(steps));
    expect(terse.text).toBe('mine (1, 1); safe (1, 2)');
  });

  it('the memory of the logic player holds exactly what its reflection states, and replays it first', () => {
    const env = handBoard(4, 1); // mines (1, 1) and (1, 3); row 1 is unopened
    const r1 = env.step(act(1, 2));
    const r2 = env.step(act(1, 1));
    expect(r2.done && !r2.won).toBe(true);
    const steps = [
      { action: '(1, 2)', observation: r1.observation.text },
      { action: '(1, 1)', observation: r2.observation.text },
    ];
    for (const seed of [0, 1, 2, 3, 4]) {
      const player = new MineSweeperLogicPlayer(env, { seed, memory: true, style: 'compact' });
      expect(env.parseReflection(player.reflect(steps)).text).toBe('mine (1, 1); safe (1, 2)');
      player.endEpisode(steps);
      env.restart();
      // The safe cell the reflection lists comes first; the mine it names is never opened.
      const { order, won } = playOut(env, player);
      expect(order[0]).toBe(1);
      expect(order).not.toContain(0);
      expect(won).toBe(true);
    }
    // Without memory, endEpisode keeps nothing: some seed's first guess is not the cell the last episode found safe.
    const firsts = new Set<number>();
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7]) {
      env.restart();
      const player = new MineSweeperLogicPlayer(env, { seed, memory: false });
      player.endEpisode(steps);
      firsts.add(player.chooseCell());
    }
    expect(firsts.size).toBeGreaterThan(1);
  });

  it('the ordered logic player guesses the first candidate in reading order, and only a remembered mine changes it', () => {
    const env = handBoard(4, 1); // row 1 unopened, nothing proven safe: (1, 1), a mine, comes first
    env.restart();
    const firsts = new Set<number>();
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7]) firsts.add(new MineSweeperLogicPlayer(env, { seed, guess: 'ordered' }).chooseCell());
    expect([...firsts]).toEqual([0]);
    // The first guess hits the mine; with memory the next episode avoids it (and the 1 at (2, 1) then proves (1, 2)).
    const player = new MineSweeperLogicPlayer(env, { memory: true, guess: 'ordered', style: 'compact' });
    const r = env.step(act(1, 1));
    const steps = [{ action: '(1, 1)', observation: r.observation.text }];
    expect(env.parseReflection(player.reflect(steps)).text).toBe('mine (1, 1); safe none');
    player.endEpisode(steps);
    env.restart();
    const { order, won } = playOut(env, player);
    expect(order).not.toContain(0);
    expect(won).toBe(true);
    // Without memory the same player repeats the losing guess.
    const forgetful = new MineSweeperLogicPlayer(env, { memory: false, guess: 'ordered' });
    forgetful.endEpisode(steps);
    env.restart();
    expect(forgetful.chooseCell()).toBe(0);
  });

  it('builds full and compact prompts', () => {
    const env = new MineSweeperEnv({ rows: 4, cols: 4, mines: 2 });
    const initial = env.reset(3);
    const full = env.playPrompt({
      style: 'full',
      initial,
      memory: ['On trial #1 the task was NOT completed. Your reflection was: mine at (1, 1)'],
      episode: 1,
      steps: [],
    });
    for (const part of ['MineSweeper', initial.text, 'mine at (1, 1)', 'Currently you are on trial #2.', '<action>']) {
      expect(full).toContain(part);
    }
    const compact = env.playPrompt({ style: 'compact', initial, memory: ['T1 fail note: mine at (1, 1)'], episode: 1, steps: [] });
    expect(compact).toBe(
      `mine T2 | mem: T1 fail note: mine at (1, 1) | now: ${initial.text
        .replace(/Row \d: /g, '')
        .split('\n')
        .join(' / ')} | act:`,
    );
  });

  it('compactBoard cells names every cell beside its symbol, in compact play and reflect prompts', () => {
    const env = new MineSweeperEnv({ rows: 2, cols: 3, mines: 1, compactBoard: 'cells' });
    env.load([5], 0); // the mine at (2, 3); opening (1, 1) opens (1, 1), (1, 2), (2, 1), (2, 2)
    const initial = env.restart();
    expect(initial.text).toBe('Row 1: . 1 ?\nRow 2: . 1 ?'); // the observation itself (and full prompts) keep the grid
    const play = env.playPrompt({ style: 'compact', initial, memory: [], episode: 0, steps: [] });
    expect(play).toBe('mine T1 | now: (1, 1).(1, 2)1(1, 3)?(2, 1).(2, 2)1(2, 3)? | act:');
    const hit = env.step(act(2, 3));
    const steps = [{ action: '(2, 3)', observation: hit.observation.text }];
    const reflect = env.reflectPrompt({ style: 'compact', initial, steps, episode: 0 });
    expect(reflect).toContain('end: (1, 1).(1, 2)1(1, 3)?(2, 1).(2, 2)1(2, 3)? / (2, 3) was a mine. Game over. | fail');
    expect(env.playPrompt({ style: 'full', initial, memory: [], episode: 0, steps: [] })).toContain('Row 1: . 1 ?');
    expect(() => new MineSweeperEnv({ compactBoard: 'list' as never })).toThrow(/compactBoard/);
  });

  it('compactBoard lists names the numbered cells, then the closed ones; blanks are left out', () => {
    const env = new MineSweeperEnv({ rows: 2, cols: 3, mines: 1, compactBoard: 'lists' });
    env.load([5], 0);
    const initial = env.restart();
    expect(env.playPrompt({ style: 'compact', initial, memory: [], episode: 0, steps: [] })).toBe('mine T1 | now: (1, 2)1(2, 2)1 closed: (1, 3)(2, 3) | act:');
    const hit = env.step(act(2, 3));
    const steps = [{ action: '(2, 3)', observation: hit.observation.text }];
    expect(env.reflectPrompt({ style: 'compact', initial, steps, episode: 0 })).toContain(
      'end: (1, 2)1(2, 2)1 closed: (1, 3)(2, 3) / (2, 3) was a mine. Game over. | fail',
    );
  });

  it('raises E_ENV on misuse', () => {
    const isEnvError = (f: () => unknown) => {
      try {
        f();
        return false;
      } catch (e) {
        return hasCode(e, 'E_ENV');
      }
    };
    expect(isEnvError(() => new MineSweeperEnv().step(act(1, 1)))).toBe(true);
    expect(isEnvError(() => new MineSweeperEnv({ mines: 40 }))).toBe(true);
    expect(isEnvError(() => new MineSweeperEnv({ rows: 1 }))).toBe(true);
    expect(isEnvError(() => handBoard(1, 1))).toBe(true);
  });
});
