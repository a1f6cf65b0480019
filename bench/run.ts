// `npm run bench`: runs every bench/*.bench.ts, prints a table, and with `--json FILE` writes the figures.
// Each bench file exports `benches`: [{ name, unit, run }], where run() resolves to a number or to several
// named results. Figures that are compared (native vs reference, view vs copy) are measured in the same run.
// A bench may also hand each row to `emit` the moment it is measured: the row is printed then, and with `--rows FILE`
// appended to FILE as one JSON line at once, so a run that is killed part way (a time limit) keeps every row it
// measured. Rows a bench returns that it did not emit are printed and appended when it returns.
import { appendFileSync, readdirSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface BenchResult {
  name: string;
  value: number;
  unit: string;
}

/** Hands one measured row to the runner at once (printed, and appended to the rows file). */
export type Emit = (row: BenchResult) => void;

/** A line of text about the run (why rows are missing, what a workload held): printed on stderr and appended to
 * the rows file as {bench, note}. */
export type Note = (text: string) => void;

export interface Bench {
  name: string;
  unit: string;
  /** `emit` and `note` are given by bench/run.ts; a bench run on its own (tsx bench/x.bench.ts) may get neither. */
  run: (emit?: Emit, note?: Note) => Promise<number | BenchResult[]>;
}

interface Args {
  json?: string;
  filter?: string;
  rows?: string;
}

function parseArgs(argv: string[]): Args {
  const out: Args = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--json') out.json = argv[++i];
    else if (a === '--filter') out.filter = argv[++i];
    else if (a === '--rows') out.rows = argv[++i];
    else if (a === '--help' || a === '-h') {
      console.log('usage: npm run bench -- [--filter TEXT[|TEXT...]] [--json FILE] [--rows FILE]');
      console.log('  --rows FILE  append each row to FILE as a JSON line the moment it is measured');
      process.exit(0);
    } else {
      console.error(`bench: unknown argument '${a}'`);
      process.exit(2);
    }
  }
  for (const key of ['json', 'rows'] as const) {
    if (key in out && !out[key]) {
      console.error(`bench: --${key} needs a file name`);
      process.exit(2);
    }
  }
  return out;
}

function formatValue(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const abs = Math.abs(v);
  if (abs >= 1e6) return v.toExponential(3);
  if (abs >= 100) return v.toFixed(0);
  if (abs >= 1) return v.toFixed(2);
  return v.toPrecision(3);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const dir = dirname(fileURLToPath(import.meta.url));
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.bench.ts'))
    .sort();
  // 'A|B': a bench runs when its name or file name holds any of them.
  const filters = args.filter?.split('|').filter((x) => x.length > 0);
  const results: BenchResult[] = [];
  const t0 = performance.now();
  let ran = 0;
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(dir, f)).href)) as { benches?: Bench[] };
    for (const b of mod.benches ?? []) {
      if (filters && !filters.some((x) => b.name.includes(x) || f.includes(x))) continue;
      process.stderr.write(`running ${b.name} ...\n`);
      const emitted = new Set<BenchResult>();
      const record = (row: BenchResult): void => {
        emitted.add(row);
        results.push(row);
        console.log(`${row.name.padEnd(48)} ${formatValue(row.value).padStart(12)}  ${row.unit}`);
        if (args.rows) {
          const line = { ...row, bench: b.name, file: f, seconds: Math.round(performance.now() - t0) / 1000, at: new Date().toISOString() };
          appendFileSync(args.rows, JSON.stringify(line) + '\n');
        }
      };
      const note = (text: string): void => {
        process.stderr.write(`${b.name}: ${text}\n`);
        if (args.rows) appendFileSync(args.rows, JSON.stringify({ bench: b.name, file: f, note: text }) + '\n');
      };
      try {
        const r = await b.run(record, note);
        const rows = typeof r === 'number' ? [{ name: b.name, value: r, unit: b.unit }] : r;
        for (const row of rows) if (!emitted.has(row)) record(row);
      } catch (e) {
        // BenchSkipped (bench/util.ts), known by its name: this file imports no bench module statically.
        const skipped = (e as Error)?.name === 'BenchSkipped';
        console.log(`${b.name.padEnd(48)} ${(skipped ? 'skipped' : 'failed').padStart(12)}  ${(e as Error).message}`);
        if (args.rows) appendFileSync(args.rows, JSON.stringify({ bench: b.name, file: f, [skipped ? 'skipped' : 'failed']: (e as Error).message }) + '\n');
        if (!skipped) process.exitCode = 1;
      }
      ran++;
    }
  }
  if (ran === 0) {
    console.error(`bench: no bench matches '${args.filter}'`);
    process.exitCode = 2;
  }
  if (args.json) {
    const tmp = `${args.json}.tmp-${process.pid}`;
    writeFileSync(tmp, JSON.stringify(results, null, 2) + '\n');
    renameSync(tmp, args.json);
    console.log(`wrote ${results.length} figures to ${args.json}`);
  }
}

await main();
