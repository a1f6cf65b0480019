// The task counts docs/results.md states for the held-out-by-content split (SPEC §11), recomputed over every mine
// layout: a task is a layout with a first reveal that is safe and does not win at once, and the layout's content
// (its size and mine cells) decides its split. A change to the split hash, to what a task is, or to the doc fails here.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { contentSplit, type ContentSplit } from '../../src/envs/common/seeds.js';
import { allSafeOpened, layoutContent, makeBoard, reveal } from '../../src/envs/minesweeper/solver.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const results = readFileSync(join(root, 'docs', 'results.md'), 'utf8').replace(/\s+/g, ' ');
const n = (x: number) => x.toLocaleString('en-US');

function* combinations(size: number, k: number, start = 0, chosen: number[] = []): Generator<number[]> {
  if (chosen.length === k) {
    yield chosen.slice();
    return;
  }
  for (let i = start; i < size; i++) {
    chosen.push(i);
    yield* combinations(size, k, i + 1, chosen);
    chosen.pop();
  }
}

/** Layouts and tasks in all and per split, by enumeration. */
function count(rows: number, cols: number, mines: number) {
  const split: Record<ContentSplit, { layouts: number; tasks: number }> = {
    eval: { layouts: 0, tasks: 0 },
    select: { layouts: 0, tasks: 0 },
    train: { layouts: 0, tasks: 0 },
  };
  let layouts = 0;
  let tasks = 0;
  for (const cells of combinations(rows * cols, mines)) {
    const board = makeBoard(rows, cols, cells);
    let reveals = 0;
    for (let i = 0; i < rows * cols; i++) {
      if (board.mines[i]) continue;
      const opened = new Uint8Array(rows * cols);
      reveal(board, opened, i);
      if (!allSafeOpened(board, opened)) reveals++;
    }
    if (reveals === 0) continue;
    layouts++;
    tasks += reveals;
    const s = split[contentSplit(layoutContent(board))];
    s.layouts++;
    s.tasks += reveals;
  }
  return { layouts, tasks, split };
}

describe('docs/results.md: tasks per split, by content', () => {
  it('4x4 with 2 mines and 5x5 with 3 mines, as stated', () => {
    for (const [rows, mines, lead] of [
      [4, 2, '4x4 with 2 mines has'],
      [5, 3, "5x5 with 3 mines, the default job's boards, has"],
    ] as const) {
      const c = count(rows, rows, mines);
      const { eval: e, select: s, train: t } = c.split;
      expect(results).toContain(
        `${lead} ${n(c.layouts)} layouts and ${n(c.tasks)} tasks, of which ${n(e.layouts)} layouts (${n(e.tasks)} tasks) are evaluation ` +
          `content, ${n(s.layouts)} (${n(s.tasks)}) model-selection content and ${n(t.layouts)} (${n(t.tasks)}) training content`,
      );
    }
  });

  it('6x6 with 3 mines, as stated', () => {
    expect(results).toContain(`6x6 with 3 mines has ${n(count(6, 6, 3).tasks)} tasks`);
  }, 60_000);
});
