// The result tables of the README (the headline: the confirmation set) and of docs/results.md (the development set)
// are re-derivable: each sits between `<!-- table: COMMAND -->` and `<!-- /table -->`, where COMMAND runs the committed
// results script over run summaries committed under docs/runs/ (each seed's config.json, eval.json and compare.json),
// and the test runs it and compares its output with the document, line for line. A figure edited by hand, a summary
// changed without its table, or a change to the statistics fails here.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface Table {
  command: string;
  body: string;
}

function tables(text: string): Table[] {
  return [...text.matchAll(/<!-- table: (.*?) -->\n([\s\S]*?)<!-- \/table -->/g)].map((m) => ({ command: m[1], body: m[2].trim() }));
}

/** The script's arguments, after checking the command is the results script over committed run summaries. */
function scriptArgs(command: string): string[] {
  const [node, script, ...args] = command.split(/\s+/);
  expect(`${node} ${script}`).toBe('node scripts/results-table.mjs');
  const dirs = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--a');
  expect(dirs.length).toBeGreaterThan(1);
  for (const d of dirs) {
    expect(d.startsWith('docs/runs/'), d).toBe(true);
    for (const f of ['config.json', 'eval.json']) expect(existsSync(join(root, d, f)), `${d}/${f}`).toBe(true);
  }
  return [join(root, script), ...args];
}

const read = (file: string) => readFileSync(join(root, file), 'utf8');

describe('result tables', () => {
  const readme = tables(read('README.md'));
  const results = tables(read('docs/results.md'));

  it('the README has the headline (the confirmation set) and docs/results.md the development set, each from docs/runs/', () => {
    expect(readme.some((t) => /docs\/runs\/confirm-seed/.test(t.command))).toBe(true);
    expect(results.some((t) => /docs\/runs\/dev-seed/.test(t.command))).toBe(true);
  });

  it("each equals the committed script's output on the committed run summaries", () => {
    for (const t of [...readme, ...results]) {
      const out = execFileSync(process.execPath, scriptArgs(t.command), { cwd: root, encoding: 'utf8' }).trim();
      expect(t.body, t.command).toBe(out);
    }
  }, 120_000);
});
