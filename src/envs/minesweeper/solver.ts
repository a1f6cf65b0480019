// MineSweeper board model and players' reasoning: mine layout, neighbour counts, reveal with cascade, the seeded
// layout and first reveal, single-cell logical deductions (what a careful player can prove from the numbers shown),
// and the best click for a player who knows the mines.

import { LamerError } from '../../errors.js';
import { Rng } from '../../util/rng.js';
import { contentSplit, type ContentSplit } from '../common/seeds.js';

export interface MineBoard {
  readonly rows: number;
  readonly cols: number;
  /** 1 where a mine is; row-major, index = row * cols + col (0-based). */
  readonly mines: Uint8Array;
  /** Number of mines among the 8 neighbours of each cell. */
  readonly counts: Uint8Array;
  readonly mineCount: number;
}

export function makeBoard(rows: number, cols: number, mineCells: readonly number[]): MineBoard {
  const mines = new Uint8Array(rows * cols);
  for (const m of mineCells) {
    if (!Number.isInteger(m) || m < 0 || m >= rows * cols) throw new LamerError('E_ENV', `mine cell ${m} is off the board`);
    mines[m] = 1;
  }
  const counts = new Uint8Array(rows * cols);
  for (let i = 0; i < rows * cols; i++) {
    for (const j of neighbours(rows, cols, i)) counts[i] += mines[j];
  }
  return { rows, cols, mines, counts, mineCount: mines.reduce((a, b) => a + b, 0) };
}

/** The up to 8 cells around a cell. */
export function neighbours(rows: number, cols: number, cell: number): number[] {
  const r = Math.floor(cell / cols);
  const c = cell % cols;
  const out: number[] = [];
  for (let dr = -1; dr <= 1; dr++) {
    for (let dc = -1; dc <= 1; dc++) {
      if (dr === 0 && dc === 0) continue;
      const nr = r + dr;
      const nc = c + dc;
      if (nr >= 0 && nc >= 0 && nr < rows && nc < cols) out.push(nr * cols + nc);
    }
  }
  return out;
}

/**
 * Open a safe cell in place; a cell with no neighbouring mine opens its neighbours too, recursively (the cascade).
 * Returns the cells newly opened. The caller checks for mines first.
 */
export function reveal(board: MineBoard, opened: Uint8Array, cell: number): number[] {
  if (opened[cell] === 1 || board.mines[cell] === 1) return [];
  const newly: number[] = [];
  const stack = [cell];
  opened[cell] = 1;
  while (stack.length > 0) {
    const i = stack.pop() as number;
    newly.push(i);
    if (board.counts[i] !== 0) continue;
    for (const j of neighbours(board.rows, board.cols, i)) {
      if (opened[j] === 0 && board.mines[j] === 0) {
        opened[j] = 1;
        stack.push(j);
      }
    }
  }
  return newly;
}

export function safeCellCount(board: MineBoard): number {
  return board.rows * board.cols - board.mineCount;
}

export function allSafeOpened(board: MineBoard, opened: Uint8Array): boolean {
  let n = 0;
  for (let i = 0; i < opened.length; i++) n += opened[i];
  return n === safeCellCount(board);
}

export interface SeededLayout {
  board: MineBoard;
  /** The cell opened before the first turn: safe, and not a win by itself. */
  firstReveal: number;
}

/**
 * The content that decides which split a board belongs to: its size and its mine cells. The first reveal is left out,
 * so an evaluation board's mines are not seen in training under another first reveal either.
 */
export function layoutContent(board: MineBoard): string {
  const cells: number[] = [];
  board.mines.forEach((m, i) => {
    if (m === 1) cells.push(i);
  });
  return `${board.rows}x${board.cols}:${cells.join(',')}`;
}

/**
 * Mines and the first reveal from a task seed. Every trial of a task gets the same layout and first reveal (SPEC §8
 * project choice). A layout where every safe first reveal would win outright is drawn again from the same stream, and
 * so is one whose content belongs to another split than `split` (the seed's: contentSplitOfSeed; none for seeds outside
 * every range).
 */
export function seededLayout(seed: number, rows: number, cols: number, mineCount: number, split?: ContentSplit): SeededLayout {
  const rng = new Rng(seed);
  for (let attempt = 0; attempt < 1000; attempt++) {
    const cells = rng.shuffle(Array.from({ length: rows * cols }, (_, i) => i));
    const board = makeBoard(rows, cols, cells.slice(0, mineCount));
    if (split !== undefined && contentSplit(layoutContent(board)) !== split) continue;
    const candidates: number[] = [];
    for (let i = 0; i < rows * cols; i++) {
      if (board.mines[i] === 1) continue;
      const opened = new Uint8Array(rows * cols);
      reveal(board, opened, i);
      if (!allSafeOpened(board, opened)) candidates.push(i);
    }
    if (candidates.length > 0) return { board, firstReveal: rng.pick(candidates) };
  }
  const side =
    split === undefined
      ? ''
      : ` in the ${split} split of the layouts (${split === 'eval' ? 'half' : split === 'select' ? 'an eighth' : 'three eighths'} of them, by content)`;
  throw new LamerError('E_ENV', `minesweeper: no ${rows}x${cols} layout with ${mineCount} mines leaves a game to play${side}; use a larger board`);
}

/** What a player sees: -1 for an unopened cell, else the number shown (0 = blank). */
export type VisibleBoard = Int8Array;

export interface Deductions {
  /** Unopened cells proven safe by the numbers shown. */
  safe: number[];
  /** Unopened cells proven to be mines. */
  mines: number[];
}

/**
 * Single-cell deductions to a fixed point: around a number whose known mines already match it, every other unopened
 * neighbour is safe; a number whose unknown neighbours are exactly the mines still missing makes them all mines.
 * `knownMines` seeds the search (e.g. a mine remembered from an earlier episode).
 */
export function deduce(rows: number, cols: number, visible: VisibleBoard, knownMines: Iterable<number> = []): Deductions {
  const mine = new Uint8Array(rows * cols);
  const safe = new Uint8Array(rows * cols);
  for (const m of knownMines) mine[m] = 1;
  let changed = true;
  while (changed) {
    changed = false;
    for (let i = 0; i < rows * cols; i++) {
      const shown = visible[i];
      if (shown <= 0) continue;
      let mineAround = 0;
      const unknown: number[] = [];
      for (const j of neighbours(rows, cols, i)) {
        if (visible[j] >= 0) continue;
        if (mine[j] === 1) mineAround++;
        else if (safe[j] === 0) unknown.push(j);
      }
      if (unknown.length === 0) continue;
      if (mineAround === shown) {
        for (const j of unknown) safe[j] = 1;
        changed = true;
      } else if (mineAround + unknown.length === shown) {
        for (const j of unknown) mine[j] = 1;
        changed = true;
      }
    }
  }
  const out: Deductions = { safe: [], mines: [] };
  for (let i = 0; i < rows * cols; i++) {
    if (visible[i] >= 0) continue;
    if (safe[i] === 1) out.safe.push(i);
    if (mine[i] === 1) out.mines.push(i);
  }
  return out;
}

/** For a player who knows the mines: the unopened safe cell that opens the most cells (first in row-major on ties). */
export function bestKnownClick(board: MineBoard, opened: Uint8Array): number {
  let best = -1;
  let bestGain = 0;
  for (let i = 0; i < opened.length; i++) {
    if (opened[i] === 1 || board.mines[i] === 1) continue;
    const trial = opened.slice();
    const gain = reveal(board, trial, i).length;
    if (gain > bestGain) {
      best = i;
      bestGain = gain;
    }
  }
  return best;
}

/** 1-based `(row, col)` of a cell, the form actions and reflections use. */
export function cellLabel(cols: number, cell: number): string {
  return `(${Math.floor(cell / cols) + 1}, ${(cell % cols) + 1})`;
}
