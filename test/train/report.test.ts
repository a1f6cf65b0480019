// `lamer report`: the charts (legend outside the plot, integer iteration ticks, axes within their domain), one
// section per run or job with a line per method, the across-seed summary of a job's seeds, and every value from the
// files escaped.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command as report, lineChart, readMetrics, renderReport, reportFor } from '../../src/cli/commands/report.js';
import type { EvalEvent, TrainerEvent } from '../../src/train/events.js';

function iteration(method: string, i: number, reward: number) {
  return {
    type: 'iteration',
    method,
    iteration: i,
    reward,
    successRate: 0.5,
    validRatio: 0.9,
    entropy: 1.2,
    loss: 0.1,
    clipFraction: 0,
    approxKl: 0,
    gradNorm: 1,
    lr: 1e-4,
    rows: 10,
    tokens: 100,
    promptTokens: 900,
    tokensPerSecond: 1000,
    rolloutSeconds: 1,
    updateSeconds: 1,
    seconds: 2,
  } as const;
}

/** The record of the first `count` held-out tasks (any fixed hash: every evaluation here scored the same list). */
function taskSet(count: number, hash = 'ab'.repeat(32)) {
  return { split: 'eval', offset: 0, count, hash, by: 'content' } as const;
}

function evaluation(method: string, it: number, firstWin: number[]): EvalEvent {
  const n = 3;
  const passAtK = Array.from({ length: n }, (_, k) => firstWin.filter((w) => w >= 0 && w <= k).length / firstWin.length);
  return { type: 'eval', method, iteration: it, env: 'minesweeper', tasks: firstWin.length, taskSet: taskSet(firstWin.length), passAtK, firstWin };
}

function writeRun(dir: string, events: object[], extraLines: string[] = []): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'metrics.jsonl'), [...events.map((e) => JSON.stringify(e)), ...extraLines].join('\n') + '\n');
}

/** A finished comparison job: method runs with metrics, their configs (seed) and the job's eval.json. */
function writeJob(dir: string, seed: number, wins: Record<string, number[]>): void {
  const results = [];
  for (const [method, firstWin] of Object.entries(wins)) {
    const ev = evaluation(method, 2, firstWin);
    writeRun(join(dir, method), [
      iteration(method, 1, 0.1),
      iteration(method, 2, 0.3),
      evaluation(
        method,
        1,
        firstWin.map(() => -1),
      ),
      ev,
    ]);
    writeFileSync(join(dir, method, 'config.json'), JSON.stringify({ seed, method }));
    results.push({ method, env: ev.env, tasks: ev.tasks, taskSet: ev.taskSet, passAtK: ev.passAtK, firstWin });
  }
  writeFileSync(join(dir, 'eval.json'), JSON.stringify(results));
}

const quiet = async (argv: string[]): Promise<number> => {
  const log = console.log;
  console.log = () => {};
  try {
    return await report.run(argv);
  } finally {
    console.log = log;
  }
};

/** Legend entries' x positions and the plot's right edge in one chart. */
function legendXs(svg: string): number[] {
  return [...svg.matchAll(/<line x1="([\d.]+)" x2="[\d.]+" y1="[\d.]+" y2="[\d.]+" stroke="#[0-9a-f]+" stroke-width="2"/g)].map((m) => Number(m[1]));
}

describe('lamer report charts', () => {
  it('draws one line per series through its points, the legend right of the plot area', () => {
    const svg = lineChart('t', [
      {
        label: 'a',
        color: '#1f77b4',
        points: [
          [0, 0],
          [10, 1],
        ],
      },
      {
        label: 'b',
        color: '#d62728',
        points: [
          [0, 1],
          [5, 0.5],
          [10, 0],
        ],
      },
    ]);
    expect(svg.match(/<path /g)?.length).toBe(2);
    expect(svg.match(/<circle /g)?.length).toBe(5);
    const d = /<path d="M([\d.]+),([\d.]+)L([\d.]+),([\d.]+)"/.exec(svg)!;
    expect(Number(d[1])).toBeLessThan(Number(d[3]));
    expect(Number(d[2])).toBeGreaterThan(Number(d[4]));
    // Every point lies left of every legend entry.
    const maxPointX = Math.max(...[...svg.matchAll(/<circle cx="([\d.]+)"/g)].map((m) => Number(m[1])));
    const legend = legendXs(svg);
    expect(legend.length).toBe(2);
    expect(Math.min(...legend)).toBeGreaterThan(maxPointX);
  });

  it('iteration axes have integer ticks; a ratio axis stays in [0, 1]; a percentage in [0, 100]', () => {
    const svg = lineChart(
      'ratio',
      [
        {
          label: 'a',
          color: '#000',
          points: [
            [1, 0],
            [2, 1],
            [3, 0.5],
          ],
        },
      ],
      { yMin: 0, yMax: 1, integerX: true },
    );
    const xTicks = [...svg.matchAll(/<text x="[\d.]+" y="276" [^>]*>([^<]+)<\/text>/g)].map((m) => Number(m[1]));
    expect(xTicks.length).toBeGreaterThan(1);
    expect(xTicks.every(Number.isInteger)).toBe(true);
    const yTicks = [...svg.matchAll(/text-anchor="end" fill="#444">([^<]+)<\/text>/g)].map((m) => Number(m[1]));
    expect(Math.min(...yTicks)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...yTicks)).toBeLessThanOrEqual(1);
    const one = lineChart('pass', [{ label: 'a', color: '#000', points: [[6, 100]] }], { yMin: 0, yMax: 100, integerX: true });
    const oneX = [...one.matchAll(/<text x="[\d.]+" y="276" [^>]*>([^<]+)<\/text>/g)].map((m) => Number(m[1]));
    expect(oneX.every(Number.isInteger)).toBe(true);
    const oneY = [...one.matchAll(/text-anchor="end" fill="#444">([^<]+)<\/text>/g)].map((m) => Number(m[1]));
    expect(Math.max(...oneY)).toBeLessThanOrEqual(100);
  });
});

describe('lamer report pages', () => {
  it('a folder of two jobs: a section per job, a line per method of each, every chart a job logs', async () => {
    const root = mkdtempSync(join(tmpdir(), 'lamer-report-'));
    writeJob(join(root, 'alpha'), 0, { lamer: [0, 1, -1, 2], gigpo: [0, -1, -1, -1] });
    writeJob(join(root, 'beta'), 0, { lamer: [-1, -1, 0, 0], reflexion: [0, 0, 0, -1] });
    writeRun(join(root, 'single'), [iteration('ppo', 1, 0.5), iteration('ppo', 2, 0.6)], ['{"type":"iter']); // torn line
    expect(readMetrics(join(root, 'single')).events.length).toBe(2);
    expect(await quiet([root])).toBe(0);
    const html = readFileSync(join(root, 'report.html'), 'utf8');
    const sections = html.split('<section>').slice(1);
    expect(sections.map((s) => /<h2>([^<]*)<\/h2>/.exec(s)![1])).toEqual(['alpha', 'beta', 'single']);
    // Each job's table names its own methods only.
    expect(sections[0]).toMatch(/lamer<\/td>/);
    expect(sections[0]).toMatch(/gigpo<\/td>/);
    expect(sections[0]).not.toMatch(/reflexion<\/td>/);
    expect(sections[1]).toMatch(/reflexion<\/td>/);
    expect(sections[1]).not.toMatch(/gigpo<\/td>/);
    expect(sections[0]).toContain('lamer: 2 iterations, 2 evaluations; gigpo: 2 iterations, 2 evaluations');
    expect(sections[2]).toContain('1 line(s) of metrics.jsonl could not be read');
    // Charts: pass@k (two evaluations each), and the iteration metrics including loss, KL, clip fraction, grad norm, lr.
    for (const title of [
      'pass@k on held-out tasks 0-3 (development set) (%)',
      'loss',
      'approximate KL to the rollout policy',
      'clip fraction',
      'gradient norm (before clipping)',
      'learning rate',
    ]) {
      expect(sections[0]).toContain(`>${title}</text>`);
    }
    // LaMer has one colour on the whole page, GiGPO another.
    const colours = (m: string) => new Set([...html.matchAll(new RegExp(`stroke="(#[0-9a-f]+)"[^>]*/><text[^>]*>${m}(?: pass@\\d)?<`, 'g'))].map((x) => x[1]));
    expect(colours('lamer').size).toBe(1);
    expect(colours('gigpo').size).toBe(1);
    expect([...colours('lamer')][0]).not.toBe([...colours('gigpo')][0]);
    // No across-seed summary: these are different jobs, not seeds.
    expect(html).not.toContain('class="summary"');
  });

  it('seeds of one job: the across-seed summary with a t-interval over the seeds, and each seed its own section', async () => {
    const root = mkdtempSync(join(tmpdir(), 'lamer-report-seeds-'));
    // Seed 0: lamer - gigpo pass@3 = 3/4 - 1/4 = +50; seed 1: 2/4 - 1/4 = +25.
    writeJob(join(root, 'default-seed0'), 0, { lamer: [0, 1, -1, 2], gigpo: [0, -1, -1, -1] });
    writeJob(join(root, 'default-seed1'), 1, { lamer: [0, -1, 2, -1], gigpo: [-1, 1, -1, -1] });
    const r = reportFor(root);
    expect(r.sections).toBe(2);
    expect(r.runs).toBe(4);
    expect(r.seedGroups).toBe(1);
    expect(r.html).toContain('default: 2 seeds');
    // Mean difference +37.5, t(0.975, 1) = 12.706, sd of (50, 25) = 17.68: half-width 158.8 points.
    const row = /<td>lamer - gigpo<\/td><td>([^<]*)<\/td>/.exec(r.html)!;
    expect(row[1]).toBe('+37.5 (-121.3 to +196.3)');
    expect(r.html.split('<section>').length - 1).toBe(2);
  });

  it('values from the files come out escaped', async () => {
    const root = mkdtempSync(join(tmpdir(), 'lamer-report-xss-'));
    const evil = '<script>alert(1)</script>';
    writeRun(join(root, 'run'), [
      { ...iteration(evil, 1, 0.1) },
      { type: 'eval', method: evil, iteration: 1, env: `<img src=x onerror=alert(2)>`, tasks: 2, passAtK: [0.5, 0.5, 1] },
      { type: 'eval', method: 'lamer', iteration: '<b>1</b>', env: 'minesweeper', tasks: 2, passAtK: [0.5] },
      { type: 'eval', method: 'gigpo', iteration: 1, env: 'minesweeper', tasks: 2, passAtK: '<i>x</i>' },
    ]);
    expect(await quiet([join(root, 'run')])).toBe(0);
    const html = readFileSync(join(root, 'run', 'report.html'), 'utf8');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>1</b>');
    expect(html).not.toContain('<i>x</i>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('2 line(s) of metrics.jsonl could not be read');
  });

  it('pairs the latest evaluations on the same tasks and shows how many reflections were right', () => {
    // 8 tasks: lamer wins 4 (two of them at the third attempt), gigpo wins 2 (both at the first).
    const lamer: TrainerEvent = {
      type: 'eval',
      method: 'lamer',
      iteration: 6,
      env: 'minesweeper',
      tasks: 8,
      taskSet: taskSet(8),
      passAtK: [0.25, 0.25, 0.5],
      firstWin: [0, 2, -1, 2, 0, -1, -1, -1],
      reflectionChecks: { checked: 10, correct: 3 },
    };
    const gigpo: TrainerEvent = {
      type: 'eval',
      method: 'gigpo',
      iteration: 6,
      env: 'minesweeper',
      tasks: 8,
      taskSet: taskSet(8),
      passAtK: [0.25, 0.25, 0.25],
      firstWin: [0, -1, -1, -1, 0, -1, -1, -1],
    };
    // Given in the other order, LaMer still comes first.
    const html = renderReport('x', [gigpo, lamer]);
    expect(html).toContain('<th>reflections right</th>');
    expect(html).toContain('<td>3 of 10 (30.0%)</td>');
    const row = /<td>lamer - gigpo<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td>/.exec(html)!;
    expect(row[1]).toMatch(/^\+25\.0 \([-+]\d+\.\d to [-+]\d+\.\d\)$/);
    expect(row[2]).toMatch(/^\+25\.0 /);
    expect(html).toContain('paired bootstrap over the held-out tasks 0-7 (development set)');
    // With one evaluation each, pass@k is the table alone (no chart of loose dots).
    expect(html).not.toContain('pass@k on held-out');
    // Evaluations on different task sets are not paired: another count, or the same count of other tasks.
    expect(renderReport('x', [lamer, { ...gigpo, tasks: 16 }])).not.toContain('paired bootstrap');
    expect(renderReport('x', [lamer, { ...gigpo, taskSet: taskSet(8, 'cd'.repeat(32)) }])).not.toContain('paired bootstrap');
    expect(renderReport('x', [lamer, gigpo])).toContain('paired bootstrap');
    expect(renderReport('x', [])).toContain('No evaluation yet');
  });

  it("shows where the iterations' time went (mean per part and share) and the engine/trainer agreement", () => {
    const iteration = (i: number, decode: number) =>
      ({
        type: 'iteration',
        method: 'lamer',
        iteration: i,
        seconds: 2,
        breakdown: { decode, forwardBackward: 1.5 - decode, optimizer: 0.25, environment: 0.2, unaccounted: 0.05 },
        agreement: { tokens: 10, meanAbs: 1e-6 * i, maxAbs: 1e-5, k3: 1e-12 },
      }) as unknown as TrainerEvent;
    const html = renderReport('x', [iteration(1, 0.5), iteration(2, 0.7)]);
    expect(html).toContain('Where the time goes');
    // decode: (0.5 + 0.7) / 2 = 0.6 s a iteration, 30% of the 2 s; forward/backward 0.9 s, 45%, listed first.
    expect(html).toMatch(/forwardBackward 0\.900 s \(45\.0%\), decode 0\.600 s \(30\.0%\)/);
    expect(html).toContain('where lamer&#39;s iteration time goes (s)');
    expect(html).toContain('engine vs trainer: mean |log-prob gap|');
    // A run without them (an earlier build's) shows neither.
    const plain = renderReport('x', [{ type: 'iteration', method: 'lamer', iteration: 1, seconds: 2 } as unknown as TrainerEvent]);
    expect(plain).not.toContain('Where the time goes');
    expect(plain).not.toContain('engine vs trainer');
  });

  it('usage errors go to stderr with exit 2', async () => {
    const err = console.error;
    const lines: string[] = [];
    console.error = (s: string) => void lines.push(s);
    try {
      expect(await report.run([])).toBe(2);
      expect(await report.run(['a', 'b'])).toBe(2);
      expect(await report.run(['a', '--bogus'])).toBe(2);
    } finally {
      console.error = err;
    }
    expect(lines.join('\n')).toContain("unknown option '--bogus'");
  });
});
