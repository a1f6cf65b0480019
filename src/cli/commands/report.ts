// `lamer report PATH`: an HTML page of a run, a comparison job, or a folder of either (seeds of one job side by
// side, unrelated runs): one section per run or job with the latest evaluation of each method, the paired
// differences and charts of its metrics; for several seeds of one job, the across-seed summary first. Inline SVG, no
// script, so it opens anywhere without network.
import { basename, join } from 'node:path';
import { compareRuns } from '../../eval/across-runs.js';
import { writeFileAtomic } from '../../train/checkpoint.js';
import { renderPage, renderSection, renderSeedSummary } from '../../report/page.js';
import { discover } from '../../report/runs.js';
import type { Command } from '../command.js';
import { readRunEvaluation } from './compare.js';

export { lineChart } from '../../report/charts.js';
export { readMetrics } from '../../report/runs.js';
export { renderReport } from '../../report/page.js';

/** The page for PATH and what it holds. */
export function reportFor(path: string): { html: string; sections: number; runs: number; seedGroups: number } {
  const { sections, seedGroups } = discover(path);
  const body: string[] = [];
  for (const g of seedGroups) {
    const evaluations = g.sections.map((s) => readRunEvaluation(s.dir));
    try {
      body.push(renderSeedSummary(g.name, compareRuns(evaluations)));
    } catch (e) {
      // Seeds whose evaluations cannot be paired (an older build without per-task outcomes): their sections still show.
      body.push(`<p>Across-seed summary of ${g.name} not drawn: ${(e as Error).message.replace(/[&<>"']/g, '')}</p>`);
    }
  }
  for (const s of sections) {
    const skipped = s.runs.reduce((n, r) => n + r.skipped, 0);
    const note = [
      s.runs.length > 1 ? `Method runs: ${s.runs.map((r) => basename(r.dir)).join(', ')}.` : '',
      skipped > 0 ? `${skipped} line(s) of metrics.jsonl could not be read and were left out.` : '',
    ]
      .filter(Boolean)
      .join(' ');
    body.push(
      renderSection(
        s.name,
        s.runs.flatMap((r) => r.events),
        note,
      ),
    );
  }
  return {
    html: renderPage(`lamer report: ${basename(path)}`, body),
    sections: sections.length,
    runs: sections.reduce((n, s) => n + s.runs.length, 0),
    seedGroups: seedGroups.length,
  };
}

export const command: Command = {
  name: 'report',
  summary: 'write an HTML page of a run, a comparison job, or a folder of runs or seeds',
  usage:
    'usage: lamer report PATH [--out FILE]\n\n' +
    'Writes PATH/report.html (or FILE). PATH may be a run, a comparison job (its method runs), or a folder of runs or\n' +
    'of seeds (NAME-seed0, NAME-seed1, ...). Each run or job gets its own section: the latest evaluation of each method,\n' +
    'the first method (LaMer where present) minus each other one paired over the same held-out tasks, and charts of\n' +
    'pass@k, reward, success, valid actions, entropy, loss, approximate KL, clip fraction, gradient norm, learning rate\n' +
    'and tokens per second. Seeds of one job that finished also get the across-seed summary (t-interval over seeds).',
  async run(argv) {
    const outIdx = argv.indexOf('--out');
    const out = outIdx >= 0 ? argv[outIdx + 1] : undefined;
    if (outIdx >= 0 && (!out || out.startsWith('--'))) {
      console.error(`lamer report: --out needs a file name\n\n${this.usage}`);
      return 2;
    }
    const unknown = argv.find((a, i) => a.startsWith('--') && a !== '--out' && argv[i - 1] !== '--out');
    if (unknown) {
      console.error(`lamer report: unknown option '${unknown}'\n\n${this.usage}`);
      return 2;
    }
    const paths = argv.filter((a, i) => !a.startsWith('--') && argv[i - 1] !== '--out');
    if (paths.length !== 1) {
      console.error(`lamer report: expected one PATH, found ${paths.length}\n\n${this.usage}`);
      return 2;
    }
    const dir = paths[0];
    const report = reportFor(dir);
    const target = out ?? join(dir, 'report.html');
    writeFileAtomic(target, report.html);
    const seeds = report.seedGroups ? `, ${report.seedGroups} across-seed summar${report.seedGroups === 1 ? 'y' : 'ies'}` : '';
    console.log(`wrote ${target} (${report.sections} section${report.sections === 1 ? '' : 's'}, ${report.runs} run${report.runs === 1 ? '' : 's'}${seeds})`);
    return 0;
  },
};
