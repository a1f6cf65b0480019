// TensorBoard event files against TensorBoard's own reader (scripts/py/read_tensorboard.py: the tensorboard package's
// EventAccumulator): a tiny native run writes them as it goes, and every number of its metrics.jsonl comes back under
// its tag at its step, as the float32 TensorBoard stores; a file cut inside its last record (a killed run) still reads
// up to the record before.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { Trainer } from '../../../src/train/trainer.js';
import { createNativeRuntime } from '../../../src/train/native-runtime.js';
import { eventFiles, eventScalars, readRecords, writeRunEvents } from '../../../src/train/tensorboard.js';
import type { TrainerEvent } from '../../../src/train/events.js';
import { collect, tinyNativeConfig } from '../../native/train/helpers.js';
import { parityPython, python } from '../python.js';
import { root, tempDir } from '../../helpers/index.js';

const py = parityPython();

type Read = Record<string, [number, number][]>;

function readWithTensorBoard(dir: string): Read {
  return JSON.parse(execFileSync(python, [join(root, 'scripts', 'py', 'read_tensorboard.py'), dir], { encoding: 'utf8' })) as Read;
}

/** Every number of a metrics.jsonl line, found by walking the JSON (not by the writer's mapping), less the fields
 * that identify the event or list per-task outcomes. */
function numbersOf(event: Record<string, unknown>): number {
  const skip = new Set(['iteration', 'firstWin', 'taskSet', 'wallTime']);
  const count = (v: unknown): number =>
    typeof v === 'number'
      ? 1
      : Array.isArray(v)
        ? v.reduce((n: number, x) => n + count(x), 0)
        : v && typeof v === 'object'
          ? Object.values(v).reduce((n: number, x) => n + count(x), 0)
          : 0;
  return Object.entries(event).reduce((n, [k, v]) => n + (skip.has(k) ? 0 : count(v)), 0);
}

describe('TensorBoard event files', () => {
  it.skipIf(!py.ok)(
    `a tiny run's event file gives back every scalar of its metrics.jsonl through TensorBoard's reader${py.ok ? '' : ` (skipped: ${py.reason})`}`,
    async () => {
      const runsDir = tempDir('tb');
      const config = { ...tinyNativeConfig('tb', runsDir), train: { iterations: 2, evalEvery: 1, checkpointEvery: 1 }, eval: { tasks: 2 } };
      await collect(new Trainer(config, { runtime: createNativeRuntime, progress: false, log: () => {} }));
      const runDir = join(runsDir, 'tb');
      const lines = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n');
      const events = lines.map((l) => JSON.parse(l) as TrainerEvent);
      // The expected scalars: tag -> step -> float32 value.
      const expected = new Map<string, Map<number, number>>();
      let numbers = 0;
      let scalars = 0;
      for (const e of events) {
        const values = eventScalars(e);
        if (e.type === 'iteration' || e.type === 'eval') numbers += numbersOf(e as unknown as Record<string, unknown>);
        scalars += values.length;
        for (const s of values) {
          const byStep = expected.get(s.tag) ?? new Map<number, number>();
          byStep.set('iteration' in e ? e.iteration : 0, Math.fround(s.value));
          expected.set(s.tag, byStep);
        }
      }
      // The writer's mapping leaves no number of an iteration or evaluation out (checkpoints add their seconds).
      const checkpoints = events.filter((e) => e.type === 'checkpoint').length;
      expect(scalars).toBe(numbers + checkpoints);
      expect(events.filter((e) => e.type === 'iteration')).toHaveLength(2);
      expect(expected.has('eval/pass@2')).toBe(true);
      expect(expected.has('time/breakdown/decode')).toBe(true);
      expect(expected.has('agreement/k3')).toBe(true);

      expect(eventFiles(runDir)).toHaveLength(1);
      const read = readWithTensorBoard(runDir);
      expect(Object.keys(read).sort()).toEqual([...expected.keys()].sort());
      for (const [tag, byStep] of expected) {
        expect(
          read[tag].map(([step]) => step),
          tag,
        ).toEqual([...byStep.keys()]);
        for (const [step, value] of read[tag]) expect(value, `${tag} at step ${step}`).toBe(byStep.get(step));
      }

      // `lamer tensorboard`'s writer, from metrics.jsonl alone, gives the same back.
      const rewritten = join(runsDir, 'rewritten');
      mkdirSync(rewritten);
      const w = writeRunEvents(runDir, rewritten);
      expect(w.scalars).toBe(scalars);
      expect(readWithTensorBoard(rewritten)).toEqual(read);

      // A kill inside the last record: the reader gets every record before it.
      const cut = join(runsDir, 'cut');
      mkdirSync(cut);
      const file = eventFiles(runDir)[0];
      const copy = join(cut, file.split('/').at(-1)!);
      copyFileSync(file, copy);
      const records = readRecords(copy);
      const lastLength = records.at(-1)!.length + 16;
      truncateSync(copy, statSync(copy).size - Math.floor(lastLength / 2));
      expect(readRecords(copy)).toHaveLength(records.length - 1);
      const lastEvent = events.filter((e) => eventScalars(e).length > 0).at(-1)!;
      const lost = new Set(eventScalars(lastEvent).map((s) => s.tag));
      const partial = readWithTensorBoard(cut);
      for (const [tag, points] of Object.entries(read)) {
        const kept = lost.has(tag) ? points.filter(([step]) => step !== ('iteration' in lastEvent ? lastEvent.iteration : 0)) : points;
        expect(partial[tag] ?? [], tag).toEqual(kept);
      }
    },
    240_000,
  );
});
