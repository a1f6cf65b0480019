// The chance rows (SPEC §11) against exact figures computed here, independently of the environment's and the player's
// code: on a fixed set of 4x4 boards with 2 mines and 7 turns, the random player's pass@k is the mean over boards of
// 1 - (1 - p)^k, with p its exact win probability in one attempt; random-memory's follows from the exact distribution of
// how an attempt ends (won, which mine hit, or out of turns) given the mines it already avoids.
import { describe, expect, it } from 'vitest';
import { createEnv } from '../../src/envs/registry.js';
import { MineSweeperEnv } from '../../src/envs/minesweeper/env.js';
import { taskSeed } from '../../src/envs/common/seeds.js';
import { evaluate } from '../../src/eval/evaluate.js';
import { evalTrialMode } from '../../src/eval/methods.js';
import { randomPolicy } from '../../src/rollout/random.js';
import { runTrial } from '../../src/rollout/trial.js';
import { EVAL_SAMPLING } from '../../src/rollout/policy.js';
import { TinyBoard } from '../rollout/helpers.js';

const ROWS = 4;
const COLS = 4;
const MINES = 2;
const TURNS = 7;
const EPISODES = 3;

interface Board {
  mines: number[];
  firstReveal: number;
}

/** The opened mask after clicking `cell` (safe) on a board with `mine` cells: flood fill through blank cells. */
function open(mask: number, cell: number, mine: Set<number>): number {
  const around = (i: number) => {
    const out: number[] = [];
    const [r, c] = [Math.floor(i / COLS), i % COLS];
    for (let dr = -1; dr <= 1; dr++) {
      for (let dc = -1; dc <= 1; dc++) {
        const [nr, nc] = [r + dr, c + dc];
        if ((dr || dc) && nr >= 0 && nc >= 0 && nr < ROWS && nc < COLS) out.push(nr * COLS + nc);
      }
    }
    return out;
  };
  const todo = [cell];
  mask |= 1 << cell;
  while (todo.length > 0) {
    const i = todo.pop()!;
    const near = around(i);
    if (near.some((j) => mine.has(j))) continue;
    for (const j of near) {
      if (!(mask & (1 << j))) {
        mask |= 1 << j;
        todo.push(j);
      }
    }
  }
  return mask;
}

/** How one attempt of the uniform player ends, avoiding `avoid`: [won, hit mines[0], hit mines[1], out of turns]. */
function attemptOutcomes(board: Board, avoid: Set<number>): number[] {
  const mine = new Set(board.mines);
  const safeMask = (1 << (ROWS * COLS)) - 1 - board.mines.reduce((m, c) => m | (1 << c), 0);
  const memo = new Map<number, number[]>();
  const from = (mask: number, turnsLeft: number): number[] => {
    if ((mask & safeMask) === safeMask) return [1, 0, 0, 0];
    if (turnsLeft === 0) return [0, 0, 0, 1];
    const key = mask * 8 + turnsLeft;
    const known = memo.get(key);
    if (known) return known;
    const unopened = Array.from({ length: ROWS * COLS }, (_, i) => i).filter((i) => !(mask & (1 << i)));
    const allowed = unopened.filter((i) => !avoid.has(i));
    const choices = allowed.length > 0 ? allowed : unopened;
    const out = [0, 0, 0, 0];
    for (const cell of choices) {
      const w = 1 / choices.length;
      if (mine.has(cell)) out[1 + board.mines.indexOf(cell)] += w;
      else from(open(mask, cell, mine), turnsLeft - 1).forEach((p, j) => (out[j] += w * p));
    }
    memo.set(key, out);
    return out;
  };
  return from(open(0, board.firstReveal, mine), TURNS);
}

/** Exact pass@1..k of the player on one board: independent attempts, or never re-clicking a mine it hit. */
function exactPassAtK(board: Board, memory: boolean): number[] {
  const solvedWithin = (k: number, avoid: Set<number>): number => {
    if (k === 0) return 0;
    const [won, hit0, hit1, out] = attemptOutcomes(board, avoid);
    const after = (hit: number) => solvedWithin(k - 1, memory ? new Set([...avoid, board.mines[hit]]) : avoid);
    return won + hit0 * after(0) + hit1 * after(1) + out * solvedWithin(k - 1, avoid);
  };
  return Array.from({ length: EPISODES }, (_, k) => solvedWithin(k + 1, new Set()));
}

const BOARDS = 64;
const REPEATS = 160; // 64 boards x 160 = 10,240 trials: a standard error of about half a point on pass@k

const seeds = Array.from({ length: BOARDS }, (_, i) => taskSeed('eval', i));
const boards: Board[] = seeds.map((seed) => {
  const env = new MineSweeperEnv({ rows: ROWS, cols: COLS, mines: MINES, maxTurns: TURNS });
  env.reset(seed);
  const mines: number[] = [];
  env.board.mines.forEach((m, i) => m && mines.push(i));
  return { mines, firstReveal: env.firstReveal };
});

async function measured(method: 'random' | 'random-memory'): Promise<number[]> {
  const sum = new Array<number>(EPISODES).fill(0);
  for (let r = 0; r < REPEATS; r++) {
    const result = await evaluate({
      env: () => createEnv('minesweeper', { rows: ROWS, cols: COLS, mines: MINES, maxTurns: TURNS }),
      tasks: seeds,
      method,
      episodes: EPISODES,
      style: 'compact',
      seed: r,
    });
    result.passAtK.forEach((p, k) => (sum[k] += p));
  }
  return sum.map((s) => s / REPEATS);
}

const mean = (rows: number[][]) => rows[0].map((_, k) => rows.reduce((s, r) => s + r[k], 0) / rows.length);

describe('chance rows', () => {
  it('random: pass@k within 1.5 points of the exact figure on 64 fixed boards', async () => {
    const exact = mean(boards.map((b) => exactPassAtK(b, false)));
    // Independent attempts: pass@k = 1 - (1 - p)^k per board, the same as the recursion above gives.
    const closed = mean(boards.map((b) => [1, 2, 3].map((k) => 1 - (1 - attemptOutcomes(b, new Set())[0]) ** k)));
    exact.forEach((p, k) => expect(p).toBeCloseTo(closed[k], 12));
    const got = await measured('random');
    for (let k = 0; k < EPISODES; k++) expect(Math.abs(got[k] - exact[k]), `pass@${k + 1}: ${got[k]} vs ${exact[k]}`).toBeLessThan(0.015);
  }, 120_000);

  it('random-memory: pass@k within 1.5 points of the exact figure, far above random at pass@3', async () => {
    const exact = mean(boards.map((b) => exactPassAtK(b, true)));
    const independent = mean(boards.map((b) => exactPassAtK(b, false)));
    // Attempt 1 is the same player; remembering the mine only helps later attempts.
    expect(exact[0]).toBeCloseTo(independent[0], 12);
    expect(exact[2]).toBeGreaterThan(independent[2] + 0.2);
    const got = await measured('random-memory');
    for (let k = 0; k < EPISODES; k++) expect(Math.abs(got[k] - exact[k]), `pass@${k + 1}: ${got[k]} vs ${exact[k]}`).toBeLessThan(0.015);
  }, 120_000);

  it('plays only admissible actions, attempts without reflections, and needs no model', async () => {
    for (const method of ['random', 'random-memory'] as const) {
      expect(evalTrialMode(method).reflect).toBe(false);
      const r = await evaluate({ env: () => new MineSweeperEnv({ rows: 4, cols: 4, mines: 2 }), tasks: 16, method, seed: 3 });
      expect(r.stats.reflectRows).toBe(0);
      for (const t of r.transcripts) for (const e of t.episodes) for (const turn of e.turns) expect(turn.valid).toBe(true);
    }
  });

  it('random-memory never repeats the mine that ended an earlier attempt; random does', async () => {
    // The 2x2 board: one mine, three safe cells, no cascade; an attempt that survives clicks until it wins.
    const firstClicks = async (memory: boolean) => {
      const repeats: number[] = [];
      for (let trial = 0; trial < 200; trial++) {
        const env = new TinyBoard();
        const result = await runTrial({
          env,
          policy: randomPolicy({ memory, seed: 1 }),
          seed: 0,
          group: 0,
          trial,
          config: { episodes: 3, reflect: false, sampling: EVAL_SAMPLING },
        });
        // Per episode, the cells clicked; count a later episode clicking the mine after an earlier one hit it.
        const clicked = new Map<number, string[]>();
        for (const row of result.rows) clicked.set(row.episode, [...(clicked.get(row.episode) ?? []), /<action>(.*)<\/action>/.exec(row.response)![1]]);
        let hit = false;
        for (const [, cells] of [...clicked].sort((a, b) => a[0] - b[0])) {
          if (hit && cells.includes('(2, 2)')) repeats.push(trial);
          if (cells.at(-1) === '(2, 2)') hit = true;
        }
      }
      return repeats.length;
    };
    expect(await firstClicks(true)).toBe(0);
    expect(await firstClicks(false)).toBeGreaterThan(20);
  });

  it('an attempt ended by the turn limit leaves its last action allowed', async () => {
    // One turn per attempt on the 2x2 board: the environment ends a safe click's attempt as out of turns (truncated),
    // a mine click's by its rules.
    class OneTurnBoard extends MineSweeperEnv {
      constructor() {
        super({ rows: 2, cols: 2, mines: 1, maxTurns: 1 });
      }
      override reset() {
        return this.load([3], 0);
      }
    }
    const policy = randomPolicy({ memory: true, seed: 7 });
    let sawTruncatedRepeat = false;
    for (let trial = 0; trial < 100 && !sawTruncatedRepeat; trial++) {
      const env = new OneTurnBoard();
      const result = await runTrial({
        env,
        policy,
        seed: 0,
        group: 0,
        trial,
        config: { episodes: 3, reflect: false, sampling: EVAL_SAMPLING },
      });
      for (const row of result.rows) expect(row.won).toBe(false);
      const cells = result.rows.map((r) => /<action>(.*)<\/action>/.exec(r.response)![1]);
      for (let i = 1; i < cells.length; i++) {
        // A mine click is never followed by the same click; a safe (truncated) one may be.
        if (cells[i - 1] === '(2, 2)') expect(cells.slice(i)).not.toContain('(2, 2)');
        else if (cells[i] === cells[i - 1]) sawTruncatedRepeat = true;
      }
    }
    expect(sawTruncatedRepeat).toBe(true);
  });
});
