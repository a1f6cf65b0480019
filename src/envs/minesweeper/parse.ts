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

/**
 * LaMer's action rule (`minesweeper/projection.py`): the text between the first `<action>` and the first `</action>`
 * (exact, lowercase tags), searched for `(row, col)` with spaces allowed around the numbers. Returns the cell and the
 * action as LaMer's memory records it (`(row, col)`, the row group keeping the spaces written before it), or null when
 * there is no such pair. Python's `\d` also accepts non-ASCII digits; this rule takes ASCII digits only.
 */
export function parsePaperCellAction(response: string): { cell: CellAction; shown: string } | null {
  const start = response.indexOf('<action>');
  const end = response.indexOf('</action>');
  if (start < 0 || end < 0) return null;
  const inner = end >= start + 8 ? response.slice(start + 8, end) : '';
  const m = /\(( *[0-9]+) *, *([0-9]+) *\)/.exec(inner.trim());
  if (m === null) return null;
  return { cell: { row: Number(m[1]), col: Number(m[2]) }, shown: `(${m[1]}, ${m[2]})` };
}
