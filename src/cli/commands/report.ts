// `lamer report RUN_DIR`: an HTML page with the latest evaluation of each method (paired differences where they ran on
// the same held-out tasks) and charts of a run's metrics (pass@k over iterations, reward, valid-action ratio, entropy,
// tokens per second), drawn as inline SVG so it opens anywhere without network.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { LamerError } from '../../errors.js';
import { compareWithFirst, formatInterval } from '../../eval/compare.js';
import { formatCheckedShare } from '../../eval/evaluate.js';
import { METHODS } from '../../eval/methods.js';
import { writeFileAtomic } from '../../train/checkpoint.js';
import type { EvalEvent, IterationEvent, TrainerEvent } from '../../train/events.js';
import type { Command } from '../command.js';

interface Series {
  label: string;
  points: Array<[number, number]>;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const ticks: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

/** One line chart as an SVG string. */
export function lineChart(title: string, series: Series[], yLabel = ''): string {
  const W = 560, H = 300, L = 56, R = 16, T = 32, B = 40;
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) {
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img"><text x="${W / 2}" y="${H / 2}" text-anchor="middle" fill="#666">${escapeHtml(title)}: no data</text></svg>`;
  }
  let [x0, x1] = [Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0]))];
  let [y0, y1] = [Math.min(...all.map((p) => p[1])), Math.max(...all.map((p) => p[1]))];
  if (x0 === x1) [x0, x1] = [x0 - 1, x1 + 1];
  if (y0 === y1) [y0, y1] = [y0 - 1, y1 + 1];
  const pad = (y1 - y0) * 0.05;
  y0 -= pad;
  y1 += pad;
  const sx = (x: number) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
  const sy = (y: number) => H - B - ((y - y0) / (y1 - y0)) * (H - T - B);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(title)}">`);
  parts.push(`<text x="${L}" y="20" font-size="14" font-weight="bold">${escapeHtml(title)}</text>`);
  for (const t of niceTicks(y0, y1)) {
    parts.push(`<line x1="${L}" x2="${W - R}" y1="${sy(t)}" y2="${sy(t)}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${L - 6}" y="${sy(t) + 4}" font-size="11" text-anchor="end" fill="#444">${t}</text>`);
  }
  for (const t of niceTicks(x0, x1)) {
    parts.push(`<text x="${sx(t)}" y="${H - B + 16}" font-size="11" text-anchor="middle" fill="#444">${t}</text>`);
  }
  parts.push(`<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="#888"/><line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="#888"/>`);
  parts.push(`<text x="${(L + W - R) / 2}" y="${H - 6}" font-size="11" text-anchor="middle" fill="#444">iteration</text>`);
  if (yLabel) parts.push(`<text x="14" y="${(T + H - B) / 2}" font-size="11" text-anchor="middle" fill="#444" transform="rotate(-90 14 ${(T + H - B) / 2})">${escapeHtml(yLabel)}</text>`);
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = [...s.points].sort((a, b) => a[0] - b[0]);
    const d = pts.map((p, j) => `${j ? 'L' : 'M'}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join('');
    parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const p of pts) parts.push(`<circle cx="${sx(p[0]).toFixed(1)}" cy="${sy(p[1]).toFixed(1)}" r="2.5" fill="${color}"/>`);
    parts.push(`<rect x="${W - R - 150}" y="${T + i * 16 - 9}" width="10" height="10" fill="${color}"/><text x="${W - R - 135}" y="${T + i * 16}" font-size="11">${escapeHtml(s.label)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}

/** Reads metrics.jsonl of a run folder, skipping lines that do not parse (a run killed mid-write). */
export function readMetrics(runDir: string): TrainerEvent[] {
  const path = join(runDir, 'metrics.jsonl');
  if (!existsSync(path)) throw new LamerError('E_IO', `no metrics.jsonl in ${runDir}: is it a run folder?`);
  const events: TrainerEvent[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      events.push(JSON.parse(line) as TrainerEvent);
    } catch {
      // a torn last line: ignore
    }
  }
  return events;
}

/** The report page for the events of one or more runs (e.g. LaMer and GiGPO side by side). */
export function renderReport(title: string, events: TrainerEvent[]): string {
  const its = events.filter((e): e is IterationEvent => e.type === 'iteration');
  const evals = events.filter((e): e is EvalEvent => e.type === 'eval');
  // Methods in the project's order (LaMer first, so comparisons read "lamer - baseline"), unknown names after.
  const rank = (m: string) => {
    const i = (METHODS as readonly string[]).indexOf(m);
    return i < 0 ? METHODS.length : i;
  };
  const methods = [...new Set([...its.map((e) => e.method), ...evals.map((e) => e.method)])].sort((a, b) => rank(a) - rank(b));
  const byMethod = (key: keyof IterationEvent): Series[] =>
    methods.map((m) => ({
      label: m,
      points: its.filter((e) => e.method === m && typeof e[key] === 'number').map((e) => [e.iteration, e[key] as number] as [number, number]),
    }));
  const passSeries: Series[] = [];
  for (const m of methods) {
    const ev = evals.filter((e) => e.method === m);
    const n = Math.max(0, ...ev.map((e) => e.passAtK.length));
    for (let k = 0; k < n; k++) {
      passSeries.push({ label: `${m} pass@${k + 1}`, points: ev.filter((e) => e.passAtK.length > k).map((e) => [e.iteration, 100 * e.passAtK[k]]) });
    }
  }
  const latest = methods
    .map((m) => evals.filter((e) => e.method === m).at(-1))
    .filter((e): e is EvalEvent => e !== undefined);
  const checked = latest.some((e) => e.reflectionChecks);
  const rightCell = (e: EvalEvent) => (checked ? `<td>${e.reflectionChecks ? formatCheckedShare(e.reflectionChecks) : ''}</td>` : '');
  const table = latest.length
    ? `<table><tr><th>method</th><th>env</th><th>iteration</th><th>tasks</th>${latest[0].passAtK.map((_, k) => `<th>pass@${k + 1}</th>`).join('')}${checked ? '<th>reflections right</th>' : ''}</tr>${latest
        .map((e) => `<tr><td>${escapeHtml(e.method)}</td><td>${escapeHtml(e.env)}</td><td>${e.iteration}</td><td>${e.tasks}</td>${e.passAtK.map((p) => `<td>${(100 * p).toFixed(1)}</td>`).join('')}${rightCell(e)}</tr>`)
        .join('')}</table>`
    : '<p>No evaluation yet.</p>';
  // Methods evaluated on the same held-out tasks (same environment, count and N): the first against each other one.
  const paired = latest.filter((e) => e.env === latest[0]?.env && e.tasks === latest[0].tasks && e.passAtK.length === latest[0].passAtK.length);
  const comparisons = paired.length > 1 ? compareWithFirst(paired, paired[0].passAtK.length) : [];
  const comparison = comparisons.length
    ? `<table><tr><th>difference</th><th>pass@${comparisons[0].episodes} (95% CI)</th><th>gain pass@1-&gt;${comparisons[0].episodes} (95% CI)</th></tr>${comparisons
        .map((c) => `<tr><td>${escapeHtml(c.a)} - ${escapeHtml(c.b)}</td><td>${formatInterval(c.passAtN)}</td><td>${formatInterval(c.gain)}</td></tr>`)
        .join('')}</table><p>Points, paired bootstrap over the ${comparisons[0].tasks} held-out tasks (${comparisons[0].resamples} resamples, seed 0).</p>`
    : '';
  const charts = [
    lineChart('pass@k on held-out tasks (%)', passSeries, '%'),
    lineChart('mean episode reward', byMethod('reward'), 'reward'),
    lineChart('valid-action ratio', byMethod('validRatio'), 'ratio'),
    lineChart('entropy', byMethod('entropy'), 'nats/token'),
    lineChart('tokens per second', byMethod('tokensPerSecond'), 'tokens/s'),
    lineChart('training success rate (any episode)', byMethod('successRate'), 'ratio'),
  ];
  // Reflections right, for the methods that reflect (absent from older metrics files): in the training rollouts (at the
  // training temperature) and in the evaluations (at the evaluation's sampling, where a reflection skill that RL wears
  // down shows first).
  const checkedShare = (events: (IterationEvent | EvalEvent)[]): [number, number][] =>
    events.flatMap((e) => (e.reflectionChecks && e.reflectionChecks.checked > 0 ? [[e.iteration, e.reflectionChecks.correct / e.reflectionChecks.checked] as [number, number]] : []));
  const reflectionSeries = methods
    .flatMap((m) => [
      { label: `${m} training`, points: checkedShare(its.filter((e) => e.method === m)) },
      { label: `${m} evaluation`, points: checkedShare(evals.filter((e) => e.method === m)) },
    ])
    .filter((s) => s.points.length > 0);
  if (reflectionSeries.length > 0) charts.push(lineChart('reflections right (training rollouts, evaluations)', reflectionSeries, 'ratio'));
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}.charts{display:flex;flex-wrap:wrap;gap:16px}
.charts>svg{border:1px solid #ddd;border-radius:4px;background:#fff}table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}
td:first-child,th:first-child{text-align:left}</style></head>
<body><h1>${escapeHtml(title)}</h1>
<p>${its.length} iterations, ${evals.length} evaluations, methods: ${methods.map(escapeHtml).join(', ') || 'none'}.</p>
<h2>Latest evaluation</h2>${table}
${comparison}
<div class="charts">${charts.join('\n')}</div>
</body></html>
`;
}

/** Run folders under `dir`: itself if it has metrics.jsonl, else its children that do. */
function runFolders(dir: string): string[] {
  if (existsSync(join(dir, 'metrics.jsonl'))) return [dir];
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new LamerError('E_IO', `${dir} is not a folder`);
  const found = readdirSync(dir)
    .map((n) => join(dir, n))
    .filter((p) => statSync(p).isDirectory() && existsSync(join(p, 'metrics.jsonl')));
  if (found.length === 0) throw new LamerError('E_IO', `no run folder (with metrics.jsonl) in ${dir}`);
  return found;
}

export const command: Command = {
  name: 'report',
  summary: 'write an HTML page with charts of a run (or of every run in a folder)',
  usage: 'usage: lamer report RUN_DIR [--out FILE]\n\nWrites RUN_DIR/report.html (or FILE): the latest evaluation of each method (the first, LaMer where present,\nminus each other one, paired over the same held-out tasks), and charts of pass@k over iterations, reward,\nvalid-action ratio, entropy and tokens per second. RUN_DIR may also be a folder of runs, drawn together.',
  async run(argv) {
    const outIdx = argv.indexOf('--out');
    const out = outIdx >= 0 ? argv[outIdx + 1] : undefined;
    const dir = argv.find((a, i) => !a.startsWith('--') && argv[i - 1] !== '--out');
    if (!dir) {
      console.error(this.usage);
      return 2;
    }
    const events = runFolders(dir).flatMap(readMetrics);
    const target = out ?? join(dir, 'report.html');
    writeFileAtomic(target, renderReport(`lamer report: ${basename(dir)}`, events));
    console.log(`wrote ${target}`);
    return 0;
  },
};
