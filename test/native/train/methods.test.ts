// Every method end to end on a tiny model the project creates (native policy, engine, optimizer): the RL methods
// train two iterations and are evaluated; the prompting baselines are evaluated on the frozen policy, the chance rows
// without one.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { METHODS } from '../../../src/eval/methods.js';
import { validateConfig } from '../../../src/train/config.js';
import { runJob } from '../../../src/train/job.js';
import { createNativeRuntime } from '../../../src/train/native-runtime.js';
import type { IterationEvent, TrainerEvent } from '../../../src/train/events.js';
import { tinyJob } from './helpers.js';

describe('every method, two iterations, tiny model', () => {
  it('trains lamer, gigpo, grpo, ppo and evaluates all nine methods (prompting baselines and chance rows too)', async () => {
    const runsDir = mkdtempSync(join(tmpdir(), 'lamer-methods-'));
    const config = validateConfig(
      tinyJob(runsDir, {
        name: 'all',
        compare: [...METHODS],
        model: { init: { seed: 1 } },
        train: { iterations: 2, checkpointEvery: 2 },
        eval: { tasks: 2 },
        sft: { steps: 2 },
      }),
    );
    const events: Array<{ method: string; event: TrainerEvent }> = [];
    const { results, runDir, comparisons, table } = await runJob(config, {
      runtime: createNativeRuntime,
      progress: false,
      log: () => {},
      onEvent: (event, method) => events.push({ method, event }),
    });
    for (const method of ['lamer', 'gigpo', 'grpo', 'ppo']) {
      const its = events.filter((e) => e.method === method && e.event.type === 'iteration').map((e) => e.event as IterationEvent);
      expect(
        its.map((e) => e.iteration),
        method,
      ).toEqual([1, 2]);
      for (const e of its) {
        expect(e.rows, method).toBeGreaterThan(0);
        expect(Number.isFinite(e.loss) || e.skipped, `${method} loss ${e.loss}`).toBe(true);
      }
      expect(
        events.some((e) => e.method === method && e.event.type === 'checkpoint'),
        method,
      ).toBe(true);
    }
    // Single-episode methods train with N = 1 and K x N trials; LaMer with K trials of N episodes (SPEC §2).
    const firstRows = (m: string) => (events.find((e) => e.method === m && e.event.type === 'iteration')!.event as IterationEvent).rows;
    expect(firstRows('lamer')).toBeGreaterThan(0);
    expect(firstRows('gigpo')).toBeGreaterThan(0);
    expect(results.map((r) => r.method)).toEqual([...METHODS]);
    for (const r of results) {
      expect(r.passAtK).toHaveLength(2);
      expect(r.tasks).toBe(2);
      expect(r.passAtK[1]).toBeGreaterThanOrEqual(r.passAtK[0]); // cumulative
    }
    const written = JSON.parse(readFileSync(join(runDir, 'eval.json'), 'utf8')) as Array<{ method: string; env: string; passAtK: number[]; tasks: number }>;
    expect(written.map((w) => [w.method, w.env, w.tasks])).toEqual(METHODS.map((m) => [m, 'minesweeper', 2]));
    // Per-task outcomes agree with pass@k, and the first method is compared with every other on the same tasks.
    for (const r of results) {
      expect(r.firstWin).toHaveLength(2);
      expect(r.passAtK[1]).toBe(r.firstWin!.filter((w) => w >= 0).length / 2);
    }
    expect(comparisons.map((c) => [c.a, c.b])).toEqual(METHODS.slice(1).map((m) => [METHODS[0], m]));
    expect(JSON.parse(readFileSync(join(runDir, 'compare.json'), 'utf8'))).toHaveLength(METHODS.length - 1);
    expect(table).toContain(`${METHODS[0]} - ${METHODS[1]} pass@2:`);
  }, 600_000);
});
