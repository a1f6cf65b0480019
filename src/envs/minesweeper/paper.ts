// The paper's MineSweeper tasks (LaMer's `game/core.py`, `game/env.py`): the mines are the `mines` smallest values
// of numpy's `rand(rows, cols)` after `np.random.seed(seed)`, the first click excluded (when it falls among them, the
// `mines + 1` smallest less the click), and the first click is drawn by `np.random.randint(0, size)` twice.
//
// The original draws that click from the worker's global numpy state before seeding it, so it depends on the task
// the worker played before and is not reproducible from the seed. lamer's rule for `fidelity: 'paper'`: the click is
// drawn from the task's own stream right after its `rand`, i.e. as if the worker's previous task had the same seed.
// The original redraws the click (layout kept) while the first click alone wins; a redrawn click on a mine would start
// that task over a mine (game over at reset): lamer redraws past mines as well, and says so in docs/spec.md §8.
import { LamerError } from '../../errors.js';
import { NumpyRandomState } from '../../util/mt19937.js';
import { allSafeOpened, makeBoard, reveal, type MineBoard } from './solver.js';

/** The mine cells (row-major, 0-based) numpy's `rand` gives for `seed`, the cell `exclude` kept free. */
export function paperMineCells(values: readonly number[], mines: number, exclude: number): number[] {
  const sorted = [...values].sort((a, b) => a - b);
  let threshold = sorted[mines - 1];
  let cells = values.flatMap((v, i) => (v <= threshold ? [i] : []));
  if (cells.includes(exclude)) {
    threshold = sorted[mines];
    cells = values.flatMap((v, i) => (v <= threshold && i !== exclude ? [i] : []));
  }
  return cells;
}

export interface PaperTask {
  board: MineBoard;
  firstReveal: number;
}

export function paperLayout(seed: number, rows: number, cols: number, mines: number): PaperTask {
  if (seed > 0xffffffff) {
    throw new LamerError('E_ENV', `minesweeper (fidelity paper): seed ${seed} is outside numpy's seed range [0, 2^32); use seeds below 4294967296`);
  }
  const rs = new NumpyRandomState(seed);
  const values = rs.randArray(rows * cols);
  let board: MineBoard | null = null;
  for (let attempt = 0; attempt < 1000; attempt++) {
    const click = rs.randint(0, rows) * cols + rs.randint(0, cols);
    // The layout is placed at the first click only (place_mines runs while no mine is placed).
    board ??= makeBoard(rows, cols, paperMineCells(values, mines, click));
    if (board.mines[click] === 1) continue;
    const opened = new Uint8Array(rows * cols);
    reveal(board, opened, click);
    if (!allSafeOpened(board, opened)) return { board, firstReveal: click };
  }
  throw new LamerError('E_ENV', `minesweeper (fidelity paper): seed ${seed} gave no first click that leaves a cell to open in 1000 draws`);
}
