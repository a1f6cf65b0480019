// The report page: one section per run or comparison job (a line per method), and for several seeds of one job the
// across-seed summary (mean difference with a t-interval over the seeds' own differences, SPEC §11). Every value read
// from a file is escaped.
import { compareWithFirst, formatInterval } from '../eval/compare.js';
import { describeTaskSet, formatCheckedShare } from '../eval/evaluate.js';
import type { RunsComparison } from '../eval/across-runs.js';
import type { EvalEvent, IterationEvent, TrainerEvent } from '../train/events.js';
import { byMethodOrder, escapeHtml, lineChart, methodColor, type ChartOptions, type Series } from './charts.js';

// Dash per attempt k of pass@k: pass@1 dotted, the last attempt solid, between them dashed.
function passDash(k: number, n: number): string | undefined {
  if (k === n - 1) return undefined;
  return k === 0 ? '2 3' : '6 3';
}

interface Chart {
  title: string;
  key: keyof IterationEvent;
  options: ChartOptions;
}

const ITERATION_CHARTS: Chart[] = [
  { title: 'mean episode reward', key: 'reward', options: { yLabel: 'reward' } },
  { title: 'training success rate (any episode)', key: 'successRate', options: { yLabel: 'ratio', yMin: 0, yMax: 1 } },
  { title: 'valid-action ratio', key: 'validRatio', options: { yLabel: 'ratio', yMin: 0, yMax: 1 } },
  { title: 'entropy', key: 'entropy', options: { yLabel: 'nats/token', yMin: 0 } },
  { title: 'loss', key: 'loss', options: { yLabel: 'loss' } },
  { title: 'approximate KL to the rollout policy', key: 'approxKl', options: { yLabel: 'nats/token' } },
  { title: 'clip fraction', key: 'clipFraction', options: { yLabel: 'ratio', yMin: 0, yMax: 1 } },
  { title: 'gradient norm (before clipping)', key: 'gradNorm', options: { yLabel: 'norm', yMin: 0 } },
  { title: 'learning rate', key: 'lr', options: { yLabel: 'lr', yMin: 0 } },
  { title: 'tokens per second', key: 'tokensPerSecond', options: { yLabel: 'tokens/s', yMin: 0 } },
];

const pct = (p: number) => (100 * p).toFixed(1);

// The parts of an iteration's time drawn on their own; the rest are summed into "other".
const TIME_PARTS_DRAWN = 6;
// A colour per part drawn, then one for "other".
const PART_COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#7f7f7f'];

/**
 * Where iterations' time went, per method: a table of the mean seconds of each part (TimeBreakdown) and its share of
 * the iteration, and a chart per method of its largest parts over the iterations.
 */
function timeSection(methods: string[], its: IterationEvent[]): { table: string; charts: string[] } {
  const rows: string[] = [];
  const charts: string[] = [];
  for (const m of methods) {
    const timed = its.filter((e) => e.method === m && e.breakdown);
    if (timed.length === 0) continue;
    const totals = new Map<string, number>();
    for (const e of timed) for (const [k, v] of Object.entries(e.breakdown!)) totals.set(k, (totals.get(k) ?? 0) + v);
    const wall = timed.reduce((a, e) => a + e.seconds, 0);
    const parts = [...totals.entries()].sort((a, b) => b[1] - a[1]);
    const cells = parts.map(([k, v]) => `${escapeHtml(k)} ${(v / timed.length).toFixed(3)} s (${pct(v / wall)}%)`).join(', ');
    rows.push(`<tr><td>${escapeHtml(m)}</td><td>${timed.length}</td><td>${(wall / timed.length).toFixed(2)} s</td><td class="text">${cells}</td></tr>`);
    const drawn = parts.slice(0, TIME_PARTS_DRAWN).map(([k]) => k);
    const series: Series[] = drawn.map((k, i) => ({
      label: k,
      color: PART_COLORS[i],
      points: timed.map((e) => [e.iteration, e.breakdown![k] ?? 0] as [number, number]),
    }));
    if (parts.length > drawn.length) {
      series.push({
        label: 'other',
        color: PART_COLORS[drawn.length],
        dash: '6 3',
        points: timed.map((e) => [e.iteration, Object.entries(e.breakdown!).reduce((a, [k, v]) => a + (drawn.includes(k) ? 0 : v), 0)] as [number, number]),
      });
    }
    charts.push(lineChart(`where ${m}'s iteration time goes (s)`, series, { yLabel: 's', yMin: 0, integerX: true }));
  }
  const table = rows.length
    ? `<h3>Where the time goes</h3><table><tr><th>method</th><th>iterations</th><th>mean iteration</th><th class="text">mean seconds per part (share), largest first</th></tr>${rows.join('')}</table>`
    : '';
  return { table, charts };
}

/** One run's or one job's section: the latest evaluation of each method, the paired differences, the charts. */
export function renderSection(title: string, events: TrainerEvent[], note = ''): string {
  const its = events.filter((e): e is IterationEvent => e.type === 'iteration');
  const evals = events.filter((e): e is EvalEvent => e.type === 'eval');
  const methods = [...new Set([...its.map((e) => e.method), ...evals.map((e) => e.method)])].sort(byMethodOrder);
  const latest = methods.map((m) => evals.filter((e) => e.method === m).at(-1)).filter((e): e is EvalEvent => e !== undefined);
  const checked = latest.some((e) => e.reflectionChecks);
  const width = Math.max(0, ...latest.map((e) => e.passAtK.length));
  const table = latest.length
    ? `<table><tr><th>method</th><th>env</th><th>iteration</th><th>tasks</th>${Array.from({ length: width }, (_, k) => `<th>pass@${k + 1}</th>`).join('')}${checked ? '<th>reflections right</th>' : ''}</tr>${latest
        .map(
          (e) =>
            `<tr><td><span class="swatch" style="background:${methodColor(e.method)}"></span>${escapeHtml(e.method)}</td><td>${escapeHtml(e.env)}</td><td>${escapeHtml(e.iteration)}</td><td>${escapeHtml(e.tasks)}</td>` +
            `${Array.from({ length: width }, (_, k) => `<td>${k < e.passAtK.length ? pct(e.passAtK[k]) : ''}</td>`).join('')}` +
            `${checked ? `<td>${e.reflectionChecks ? escapeHtml(formatCheckedShare(e.reflectionChecks)) : ''}</td>` : ''}</tr>`,
        )
        .join('')}</table>`
    : '<p>No evaluation yet.</p>';
  // Methods evaluated on the same tasks (same environment, N and recorded task list): the first against each other one.
  const paired = latest.filter(
    (e) =>
      e.env === latest[0]?.env && e.tasks === latest[0].tasks && e.passAtK.length === latest[0].passAtK.length && e.taskSet?.hash === latest[0].taskSet?.hash,
  );
  const comparisons = paired.length > 1 ? compareWithFirst(paired, paired[0].passAtK.length) : [];
  const comparison = comparisons.length
    ? `<table><tr><th>difference</th><th>pass@${comparisons[0].episodes} (95% CI)</th><th>gain pass@1-&gt;${comparisons[0].episodes} (95% CI)</th></tr>${comparisons
        .map(
          (c) =>
            `<tr><td>${escapeHtml(c.a)} - ${escapeHtml(c.b)}</td><td>${escapeHtml(formatInterval(c.passAtN))}</td><td>${escapeHtml(formatInterval(c.gain))}</td></tr>`,
        )
        .join(
          '',
        )}</table><p>Points, paired bootstrap over the ${escapeHtml(comparisons[0].taskSet ? describeTaskSet(comparisons[0].taskSet) : `${comparisons[0].tasks} tasks`)} of this run (${escapeHtml(comparisons[0].resamples)} resamples, seed 0).</p>`
    : '';

  const charts: string[] = [];
  // pass@k over iterations of the methods evaluated more than once; one evaluation (a chance row, a frozen baseline)
  // is in the table alone rather than a loose dot on the chart.
  const repeated = methods.filter((m) => evals.filter((e) => e.method === m).length > 1);
  if (repeated.length > 0) {
    const passSeries: Series[] = repeated.flatMap((m) => {
      const ev = evals.filter((e) => e.method === m);
      const n = Math.max(0, ...ev.map((e) => e.passAtK.length));
      return Array.from({ length: n }, (_, k) => ({
        label: `${m} pass@${k + 1}`,
        color: methodColor(m),
        dash: passDash(k, n),
        points: ev.filter((e) => e.passAtK.length > k).map((e) => [e.iteration, 100 * e.passAtK[k]] as [number, number]),
      }));
    });
    const scored = evals.at(-1)?.taskSet;
    charts.push(
      lineChart(`pass@k on ${scored ? describeTaskSet(scored) : 'the evaluation tasks'} (%)`, passSeries, { yLabel: '%', yMin: 0, yMax: 100, integerX: true }),
    );
  }
  for (const c of ITERATION_CHARTS) {
    const series: Series[] = methods.map((m) => ({
      label: m,
      color: methodColor(m),
      points: its.filter((e) => e.method === m && typeof e[c.key] === 'number').map((e) => [e.iteration, e[c.key] as number] as [number, number]),
    }));
    if (series.some((s) => s.points.length > 0)) charts.push(lineChart(c.title, series, { ...c.options, integerX: true }));
  }
  // Reflections right, for the methods that reflect: in the training rollouts (at the training temperature) and in
  // the evaluations (at the evaluation's sampling, where a reflection skill that RL wears down shows first).
  const checkedShare = (list: (IterationEvent | EvalEvent)[]): [number, number][] =>
    list.flatMap((e) =>
      e.reflectionChecks && e.reflectionChecks.checked > 0 ? [[e.iteration, e.reflectionChecks.correct / e.reflectionChecks.checked] as [number, number]] : [],
    );
  const reflectionSeries: Series[] = methods
    .flatMap((m) => [
      { label: `${m} training`, color: methodColor(m), points: checkedShare(its.filter((e) => e.method === m)) },
      { label: `${m} evaluation`, color: methodColor(m), dash: '6 3', points: checkedShare(evals.filter((e) => e.method === m)) },
    ])
    .filter((s) => s.points.length > 0);
  if (reflectionSeries.length > 0) {
    charts.push(lineChart('reflections right (training rollouts, evaluations)', reflectionSeries, { yLabel: 'ratio', yMin: 0, yMax: 1, integerX: true }));
  }
  const time = timeSection(methods, its);
  charts.push(...time.charts);
  const agreementSeries: Series[] = methods
    .map((m) => ({
      label: m,
      color: methodColor(m),
      points: its.flatMap((e) => (e.method === m && e.agreement ? [[e.iteration, e.agreement.meanAbs] as [number, number]] : [])),
    }))
    .filter((s) => s.points.length > 0);
  if (agreementSeries.length > 0) {
    charts.push(
      lineChart('engine vs trainer: mean |log-prob gap|', agreementSeries, {
        yLabel: 'nats',
        yMin: 0,
        integerX: true,
      }),
    );
  }
  const iterationsPerMethod = methods
    .map((m) => `${escapeHtml(m)}: ${its.filter((e) => e.method === m).length} iterations, ${evals.filter((e) => e.method === m).length} evaluations`)
    .join('; ');
  return `<section><h2>${escapeHtml(title)}</h2>
<p>${iterationsPerMethod || 'no events'}.${note ? ` ${escapeHtml(note)}` : ''}</p>
<h3>Latest evaluation</h3>${table}
${comparison}
${time.table}
${charts.length ? `<div class="charts">${charts.join('\n')}</div>` : ''}
</section>`;
}

/** The across-seed summary of one job's seeds (SPEC §11: seeds are the unit of replication). */
export function renderSeedSummary(name: string, c: RunsComparison): string {
  const n = c.episodes;
  const seeds = c.runs.map((r) => (r.seed !== undefined ? `seed ${r.seed}` : r.run));
  const range = (i: { mean: number; low: number; high: number }, signed: boolean) => {
    const f = (x: number) => `${signed && x >= 0 ? '+' : ''}${pct(x)}`;
    return `${f(i.mean)} (${f(i.low)} to ${f(i.high)})`;
  };
  const methodRows = c.methods
    .map(
      (m) =>
        `<tr><td><span class="swatch" style="background:${methodColor(m.method)}"></span>${escapeHtml(m.method)}</td>${m.mean.map((p) => `<td>${pct(p)}</td>`).join('')}<td>${m.passAtN ? range(m.passAtN, false) : ''}</td>${m.perRun.map((p) => `<td>${pct(p[n - 1])}</td>`).join('')}</tr>`,
    )
    .join('');
  const pairRows = c.pairs
    .map(
      (p) =>
        `<tr><td>${escapeHtml(p.a)} - ${escapeHtml(p.b)}</td><td>${p.passAtN ? range(p.passAtN, true) : ''}</td><td>${p.gain ? range(p.gain, true) : ''}</td>${p.perRun
          .map((r) => `<td>${r.comparison.passAtN.mean >= 0 ? '+' : ''}${pct(r.comparison.passAtN.mean)}</td>`)
          .join('')}</tr>`,
    )
    .join('');
  return `<section class="summary"><h2>${escapeHtml(name)}: ${c.runs.length} seeds</h2>
<p>Mean over the seeds, with a 95% Student-t interval on ${c.runs.length - 1} degrees of freedom over the seeds' own figures (every seed on the same ${escapeHtml(describeTaskSet(c.taskSet))}).</p>
<table><tr><th>method</th>${Array.from({ length: n }, (_, k) => `<th>pass@${k + 1}</th>`).join('')}<th>pass@${n} across seeds (95% CI)</th>${seeds.map((s) => `<th>${escapeHtml(s)}</th>`).join('')}</tr>${methodRows}</table>
<table><tr><th>difference</th><th>pass@${n} (95% CI)</th><th>gain pass@1-&gt;${n} (95% CI)</th>${seeds.map((s) => `<th>${escapeHtml(s)}</th>`).join('')}</tr>${pairRows}</table>
</section>`;
}

export function renderPage(title: string, body: string[]): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:17px;margin-top:28px}h3{font-size:14px}
section{border-top:1px solid #ddd;padding-top:4px}.summary{background:#f7f9fc}
.charts{display:flex;flex-wrap:wrap;gap:16px}.charts>svg{border:1px solid #ddd;border-radius:4px;background:#fff}
table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}
td:first-child,th:first-child,td.text,th.text{text-align:left}.swatch{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body.join('\n')}
</body></html>
`;
}

/** The page for the events of one run or job: kept for embedding (one section). */
export function renderReport(title: string, events: TrainerEvent[]): string {
  return renderPage(title, [renderSection(title, events)]);
}
