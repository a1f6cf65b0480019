// The pass@k table printed by `lamer eval` and the default job: one line per method (and per task type below it),
// pass@k in percent with one decimal, as in the paper's tables.

export interface PassAtKRow {
  method: string;
  env?: string;
  passAtK: readonly number[];
  tasks: number;
  byType?: Record<string, readonly number[]>;
  /** Tasks per type (shown in the tasks column of the type's line). */
  tasksByType?: Record<string, number>;
  /** Each type's ID (in distribution) or OOD; with it, types are listed under an ID and an OOD line. */
  typeSplits?: Record<string, 'ID' | 'OOD'>;
  bySplit?: Partial<Record<'ID' | 'OOD', readonly number[]>>;
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
    const count = (type: string) => (r.tasksByType?.[type] === undefined ? '' : String(r.tasksByType[type]));
    if (r.typeSplits) {
      // In- and out-of-distribution: each group's pass@k, then its types.
      for (const split of ['ID', 'OOD'] as const) {
        const types = Object.keys(r.byType ?? {}).filter((t) => r.typeSplits![t] === split);
        if (types.length === 0) continue;
        const tasks = types.reduce((n, t) => n + (r.tasksByType?.[t] ?? 0), 0);
        lines.push([`  ${split}`, '', r.tasksByType ? String(tasks) : '', ...cells(r.bySplit?.[split] ?? [])]);
        for (const t of types) lines.push([`    ${t}`, '', count(t), ...cells(r.byType![t])]);
      }
    } else {
      for (const [type, values] of Object.entries(r.byType ?? {})) lines.push([`  ${type}`, '', count(type), ...cells(values)]);
    }
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
