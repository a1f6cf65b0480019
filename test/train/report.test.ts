import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command as report, lineChart, readMetrics, renderReport } from '../../src/cli/commands/report.js';
import type { TrainerEvent } from '../../src/train/events.js';

function iteration(method: string, i: number, reward: number) {
  return {
    type: 'iteration', method, iteration: i, reward, successRate: 0.5, validRatio: 0.9, entropy: 1.2, loss: 0.1,
    clipFraction: 0, approxKl: 0, gradNorm: 1, rows: 10, tokens: 100, promptTokens: 900, tokensPerSecond: 1000,
    rolloutSeconds: 1, updateSeconds: 1, seconds: 2,
  } as const;
}

describe('lamer report', () => {
  it('draws one polyline per series, through the given points', () => {
    const svg = lineChart('t', [
      { label: 'a', points: [[0, 0], [10, 1]] },
      { label: 'b', points: [[0, 1], [5, 0.5], [10, 0]] },
    ]);
    expect(svg.match(/<path /g)?.length).toBe(2);
    expect(svg.match(/<circle /g)?.length).toBe(5);
    // The first point of series a sits at the lower left of the plot area, the last at the upper right.
    const d = /<path d="M([\d.]+),([\d.]+)L([\d.]+),([\d.]+)"/.exec(svg)!;
    expect(Number(d[1])).toBeLessThan(Number(d[3]));
    expect(Number(d[2])).toBeGreaterThan(Number(d[4]));
  });

  it('renders pass@k per method and the latest evaluation table from metrics.jsonl', async () => {
    const root = mkdtempSync(join(tmpdir(), 'lamer-report-'));
    const events: TrainerEvent[] = [
      iteration('lamer', 1, 0.1),
      iteration('lamer', 2, 0.4),
      { type: 'eval', method: 'lamer', iteration: 2, env: 'minesweeper', tasks: 64, passAtK: [0.25, 0.5, 0.625] },
      iteration('gigpo', 1, 0.2),
      { type: 'eval', method: 'gigpo', iteration: 2, env: 'minesweeper', tasks: 64, passAtK: [0.3, 0.35, 0.4] },
    ];
    for (const m of ['lamer', 'gigpo']) {
      mkdirSync(join(root, m));
      const lines = events.filter((e) => 'method' in e && e.method === m).map((e) => JSON.stringify(e));
      writeFileSync(join(root, m, 'metrics.jsonl'), lines.join('\n') + '\n{"type":"iter'); // torn last line
    }
    expect(readMetrics(join(root, 'lamer')).length).toBe(3);
    const log = console.log;
    console.log = () => {};
    try {
      expect(await report.run([root])).toBe(0);
    } finally {
      console.log = log;
    }
    const html = readFileSync(join(root, 'report.html'), 'utf8');
    expect(html).toContain('<td>62.5</td>');
    expect(html).toContain('gigpo pass@3');
    expect(html.match(/<svg /g)?.length).toBe(6);
    expect(renderReport('x', [])).toContain('No evaluation yet');
    // Reflection checks get their own chart, only when the metrics carry them: training rollouts and evaluations apart.
    expect(html).not.toContain('reflections right (training rollouts, evaluations)');
    const training = [{ ...iteration('lamer', 1, 0.1), reflectionChecks: { checked: 8, correct: 2 } }, { ...iteration('lamer', 2, 0.2), reflectionChecks: { checked: 10, correct: 5 } }];
    const withChecks = renderReport('x', training);
    expect(withChecks).toContain('reflections right (training rollouts, evaluations)');
    expect(withChecks).toContain('>lamer training<');
    expect(withChecks).not.toContain('>lamer evaluation<');
    expect(withChecks.match(/<svg /g)?.length).toBe(7);
    const evaluated: TrainerEvent = { type: 'eval', method: 'lamer', iteration: 2, env: 'minesweeper', tasks: 8, passAtK: [0.25, 0.5, 0.5], reflectionChecks: { checked: 4, correct: 1 } };
    const withEval = renderReport('x', [...training, evaluated]);
    expect(withEval).toContain('>lamer evaluation<');
    expect(withEval.match(/<svg /g)?.length).toBe(7);
    // Without per-task outcomes there is nothing to pair.
    expect(html).not.toContain('paired bootstrap');
  });

  it('pairs the latest evaluations on the same tasks and shows how many reflections were right', () => {
    // 8 tasks: lamer wins 4 (two of them at the third attempt), gigpo wins 2 (both at the first).
    const lamer: TrainerEvent = {
      type: 'eval', method: 'lamer', iteration: 6, env: 'minesweeper', tasks: 8, passAtK: [0.25, 0.25, 0.5],
      firstWin: [0, 2, -1, 2, 0, -1, -1, -1], reflectionChecks: { checked: 10, correct: 3 },
    };
    const gigpo: TrainerEvent = {
      type: 'eval', method: 'gigpo', iteration: 6, env: 'minesweeper', tasks: 8, passAtK: [0.25, 0.25, 0.25],
      firstWin: [0, -1, -1, -1, 0, -1, -1, -1],
    };
    // Given in the other order, LaMer still comes first.
    const html = renderReport('x', [gigpo, lamer]);
    expect(html).toContain('<th>reflections right</th>');
    expect(html).toContain('<td>3 of 10 (30.0%)</td>');
    // lamer - gigpo: pass@3 +25.0 points, gain +25.0 points, both with their bootstrap intervals.
    const row = /<td>lamer - gigpo<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td>/.exec(html)!;
    expect(row[1]).toMatch(/^\+25\.0 \([-+]\d+\.\d to [-+]\d+\.\d\)$/);
    expect(row[2]).toMatch(/^\+25\.0 /);
    expect(html).toContain('paired bootstrap over the 8 held-out tasks');
    // Evaluations on different task sets are not paired.
    expect(renderReport('x', [lamer, { ...gigpo, tasks: 16 }])).not.toContain('paired bootstrap');
  });
});
