// Line charts as inline SVG strings (the report opens anywhere, with no network and no script). The legend sits to
// the right of the plot area, never over the data; iteration axes have integer ticks; a chart of a quantity with a
// natural range (a percentage, a ratio, a non-negative figure) never shows values outside it.
import { METHODS } from '../eval/methods.js';

export interface Series {
  label: string;
  color: string;
  /** SVG stroke-dasharray; solid when absent. */
  dash?: string;
  points: Array<[number, number]>;
}

export interface ChartOptions {
  yLabel?: string;
  /** Bounds the y axis never goes past (e.g. [0, 100] for a percentage, [0, undefined] for a non-negative figure). */
  yMin?: number;
  yMax?: number;
  /** x is an iteration count: integer ticks only. */
  integerX?: boolean;
}

// One colour per method on every chart and page: LaMer blue, GiGPO red, and so on in the project's method order.
const METHOD_COLORS: Record<string, string> = {
  lamer: '#1f77b4',
  gigpo: '#d62728',
  grpo: '#2ca02c',
  ppo: '#ff7f0e',
  reflexion: '#9467bd',
  react: '#8c564b',
  'zero-shot': '#e377c2',
  random: '#7f7f7f',
  'random-memory': '#bcbd22',
};
const SPARE_COLORS = ['#17becf', '#393b79', '#637939', '#8c6d31', '#843c39', '#7b4173'];

export function methodColor(method: string): string {
  const known = METHOD_COLORS[method];
  if (known) return known;
  let h = 0;
  for (const ch of method) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return SPARE_COLORS[h % SPARE_COLORS.length];
}

/** Methods in the project's order (LaMer first, so comparisons read "lamer - baseline"), unknown names after. */
export function byMethodOrder(a: string, b: string): number {
  const rank = (m: string) => {
    const i = (METHODS as readonly string[]).indexOf(m);
    return i < 0 ? METHODS.length : i;
  };
  return rank(a) - rank(b) || a.localeCompare(b);
}

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Round tick values covering [lo, hi]; only integers when `integer`. */
export function niceTicks(lo: number, hi: number, count = 5, integer = false): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  if (integer) step = Math.max(1, Math.round(step));
  const ticks: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

function formatTick(t: number): string {
  const a = Math.abs(t);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return t.toExponential(1);
  return String(t);
}

const PLOT_W = 470;
const LEGEND_W = 150;
const H = 300;
const [L, R, T, B] = [60, 12, 32, 40];

/** One line chart as an SVG string. */
export function lineChart(title: string, series: Series[], options: ChartOptions = {}): string {
  const W = PLOT_W + LEGEND_W;
  const drawn = series.filter((s) => s.points.some(([x, y]) => Number.isFinite(x) && Number.isFinite(y)));
  const all = drawn.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (all.length === 0) {
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img"><text x="${W / 2}" y="${H / 2}" text-anchor="middle" fill="#666">${escapeHtml(title)}: no data</text></svg>`;
  }
  let [x0, x1] = [Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0]))];
  let [y0, y1] = [Math.min(...all.map((p) => p[1])), Math.max(...all.map((p) => p[1]))];
  if (x0 === x1) [x0, x1] = options.integerX ? [x0 - 1, x1 + 1] : [x0 - 0.5, x1 + 0.5];
  if (y0 === y1) {
    // A flat line: its whole natural range when it has one (a percentage, a ratio), else a band around it.
    [y0, y1] =
      options.yMin !== undefined && options.yMax !== undefined
        ? [options.yMin, options.yMax]
        : [y0 - Math.max(1e-9, Math.abs(y0) * 0.1 || 1), y1 + Math.max(1e-9, Math.abs(y1) * 0.1 || 1)];
  }
  const pad = (y1 - y0) * 0.05;
  y0 -= pad;
  y1 += pad;
  if (options.yMin !== undefined) y0 = Math.max(y0, options.yMin);
  if (options.yMax !== undefined) y1 = Math.min(y1, options.yMax);
  if (!(y1 > y0)) y1 = y0 + 1;
  const right = PLOT_W - R;
  const sx = (x: number) => L + ((x - x0) / (x1 - x0)) * (right - L);
  const sy = (y: number) => H - B - ((y - y0) / (y1 - y0)) * (H - T - B);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(title)}">`);
  parts.push(`<text x="${L}" y="20" font-size="14" font-weight="bold">${escapeHtml(title)}</text>`);
  for (const t of niceTicks(y0, y1)) {
    parts.push(`<line x1="${L}" x2="${right}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${L - 6}" y="${(sy(t) + 4).toFixed(1)}" font-size="11" text-anchor="end" fill="#444">${formatTick(t)}</text>`);
  }
  for (const t of niceTicks(x0, x1, 6, options.integerX)) {
    parts.push(`<text x="${sx(t).toFixed(1)}" y="${H - B + 16}" font-size="11" text-anchor="middle" fill="#444">${formatTick(t)}</text>`);
  }
  parts.push(`<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="#888"/><line x1="${L}" x2="${right}" y1="${H - B}" y2="${H - B}" stroke="#888"/>`);
  parts.push(`<text x="${(L + right) / 2}" y="${H - 6}" font-size="11" text-anchor="middle" fill="#444">iteration</text>`);
  if (options.yLabel) {
    parts.push(
      `<text x="14" y="${(T + H - B) / 2}" font-size="11" text-anchor="middle" fill="#444" transform="rotate(-90 14 ${(T + H - B) / 2})">${escapeHtml(options.yLabel)}</text>`,
    );
  }
  // Points outside the drawn range (a clamped axis) are pinned to its edge rather than drawn outside the plot.
  const clampY = (y: number) => Math.min(y1, Math.max(y0, y));
  drawn.forEach((s, i) => {
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)).sort((a, b) => a[0] - b[0]);
    const color = escapeHtml(s.color);
    const dash = s.dash ? ` stroke-dasharray="${escapeHtml(s.dash)}"` : '';
    const d = pts.map((p, j) => `${j ? 'L' : 'M'}${sx(p[0]).toFixed(1)},${sy(clampY(p[1])).toFixed(1)}`).join('');
    parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`);
    for (const p of pts) parts.push(`<circle cx="${sx(p[0]).toFixed(1)}" cy="${sy(clampY(p[1])).toFixed(1)}" r="2.5" fill="${color}"/>`);
    const ly = T + 6 + i * 16;
    parts.push(
      `<line x1="${PLOT_W + 4}" x2="${PLOT_W + 22}" y1="${ly - 4}" y2="${ly - 4}" stroke="${color}" stroke-width="2"${dash}/>` +
        `<text x="${PLOT_W + 28}" y="${ly}" font-size="11">${escapeHtml(s.label)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('');
}
