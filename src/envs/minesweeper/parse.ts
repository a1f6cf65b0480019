// Reading MineSweeper actions: a 1-based `(row, col)` inside <action>. The first two whole numbers in the action text
// are taken as row and column, so `(2, 3)`, `2,3` and `row 2, column 3` all read as row 2, column 3. A minus sign is
// kept so `(-1, 2)` reads as off the board rather than as row 1.

export interface CellAction {
  /** 1-based row as written. */
  row: number;
  /** 1-based column as written. */
  col: number;
}

export function parseCellAction(actionText: string): CellAction | null {
  const numbers = actionText.match(/-?\d+/g);
  if (numbers === null || numbers.length < 2) return null;
  const row = Number(numbers[0]);
  const col = Number(numbers[1]);
  if (!Number.isSafeInteger(row) || !Number.isSafeInteger(col)) return { row: Infinity, col: Infinity };
  return { row, col };
}
