// The pass@k table printed by `lamer eval` and the default job: one line per method (and per task type below it),
// pass@k in percent with one decimal, as in the paper's tables.

export interface PassAtKRow {
  method: string;
  env?: string;
  passAtK: readonly number[];
  tasks: number;
  byType?: Record<string, readonly number[]>;
}

const percent = (x: number) => (Number.isFinite(x) ? (100 * x).toFixed(1) : '-');

/** A fixed-width text table: method, env, tasks, pass@1..pass@N (in %), then one indented line per task type. */
export function formatPassAtKTable(rows: readonly PassAtKRow[]): string {
  const n = Math.max(1, ...rows.map((r) => r.passAtK.length));
  const header = ['method', 'env', 'tasks', ...Array.from({ length: n }, (_, k) => `pass@${k + 1}`)];
  const lines: string[][] = [header];
  for (const r of rows) {
    const cells = (values: readonly number[]) => Array.from({ length: n }, (_, k) => (k < values.length ? percent(values[k]) : ''));
    lines.push([r.method, r.env ?? '', String(r.tasks), ...cells(r.passAtK)]);
    for (const [type, values] of Object.entries(r.byType ?? {})) lines.push([`  ${type}`, '', '', ...cells(values)]);
  }
  const widths = header.map((_, c) => Math.max(...lines.map((l) => l[c].length)));
  return lines
    .map((l) =>
      l
        .map((cell, c) => (c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
