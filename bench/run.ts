// `npm run bench`: runs every bench/*.bench.ts, prints a table, and with `--json FILE` writes the figures.
// Each bench file exports `benches`: [{ name, unit, run }], where run() resolves to a number or to several
// named results. Figures that are compared (native vs reference, view vs copy) are measured in the same run.
import { readdirSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface BenchResult {
  name: string;
  value: number;
  unit: string;
}

export interface Bench {
  name: string;
  unit: string;
  run: () => Promise<number | BenchResult[]>;
}

function parseArgs(argv: string[]): { json?: string; filter?: string } {
  const out: { json?: string; filter?: string } = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--json') out.json = argv[++i];
    else if (a === '--filter') out.filter = argv[++i];
    else if (a === '--help' || a === '-h') {
      console.log('usage: npm run bench -- [--filter TEXT] [--json FILE]');
      process.exit(0);
    } else {
      console.error(`bench: unknown argument '${a}'`);
      process.exit(2);
    }
  }
  if ('json' in out && !out.json) {
    console.error('bench: --json needs a file name');
    process.exit(2);
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
  const results: BenchResult[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(dir, f)).href)) as { benches?: Bench[] };
    for (const b of mod.benches ?? []) {
      if (args.filter && !b.name.includes(args.filter) && !f.includes(args.filter)) continue;
      process.stderr.write(`running ${b.name} ...\n`);
      try {
        const r = await b.run();
        const rows = typeof r === 'number' ? [{ name: b.name, value: r, unit: b.unit }] : r;
        for (const row of rows) {
          results.push(row);
          console.log(`${row.name.padEnd(48)} ${formatValue(row.value).padStart(12)}  ${row.unit}`);
        }
      } catch (e) {
        console.log(`${b.name.padEnd(48)} ${'failed'.padStart(12)}  ${(e as Error).message}`);
        process.exitCode = 1;
      }
    }
  }
  if (args.json) {
    const tmp = `${args.json}.tmp-${process.pid}`;
    writeFileSync(tmp, JSON.stringify(results, null, 2) + '\n');
    renameSync(tmp, args.json);
    console.log(`wrote ${results.length} figures to ${args.json}`);
  }
}

await main();
