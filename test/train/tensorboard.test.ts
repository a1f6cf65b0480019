// The event-file writer's parts against TensorBoard's own Python code (values computed with tensorboard 2.21's
// masked_crc32c and event_pb2, kept here as facts), the reader's handling of torn and corrupt files, the scalars an
// event maps to, and `lamer tensorboard` on a run folder's metrics.jsonl.
import { describe, expect, it } from 'vitest';
import { appendFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventFileWriter, encodeEvent, eventFiles, eventScalars, maskedCrc32c, readRecords, tfRecord } from '../../src/train/tensorboard.js';
import type { IterationEvent } from '../../src/train/events.js';
import { captured, codeOf, tempDir } from '../helpers/index.js';
import { main } from '../../src/cli/main.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('TensorBoard event files', () => {
  it("masks CRC-32C and encodes events as TensorBoard's Python code does", () => {
    const length = (n: number) => {
      const b = new Uint8Array(8);
      new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
      return b;
    };
    // tensorboard.compat.tensorflow_stub.pywrap_tensorflow.masked_crc32c
    expect(maskedCrc32c(length(0))).toBe(127402793);
    expect(maskedCrc32c(length(5))).toBe(1040495338);
    expect(maskedCrc32c(new TextEncoder().encode('hello'))).toBe(421273531);
    // event_pb2.Event(...).SerializeToString()
    expect(hex(encodeEvent({ wallTime: 1.5, step: 7, scalars: [{ tag: 'a/b', value: 0.25 }] }))).toBe('09000000000000f83f10072a0c0a0a0a03612f62150000803e');
    expect(hex(encodeEvent({ wallTime: 2, fileVersion: 'brain.Event:2' }))).toBe('0900000000000000401a0d627261696e2e4576656e743a32');
    const r = tfRecord(new TextEncoder().encode('hello'));
    expect(r.length).toBe(12 + 5 + 4);
    expect(new DataView(r.buffer).getUint32(8, true)).toBe(1040495338);
    expect(new DataView(r.buffer).getUint32(17, true)).toBe(421273531);
  });

  it('reads back whole records, stops at a torn last one and refuses a corrupt one', () => {
    const dir = tempDir('tb-unit');
    const w = new EventFileWriter(dir, { wallTime: 100 });
    w.add(1, [{ tag: 'x', value: 1 }], 101);
    w.add(2, [{ tag: 'x', value: 2 }], 102);
    w.close();
    expect(readRecords(w.path)).toHaveLength(3);
    const bytes = readFileSync(w.path);
    writeFileSync(w.path, bytes.subarray(0, bytes.length - 3));
    expect(readRecords(w.path)).toHaveLength(2);
    const bad = Buffer.from(bytes);
    bad[bad.length - 8] ^= 0xff; // a byte of the last record's data
    writeFileSync(w.path, bad);
    expect(codeOf(() => readRecords(w.path))).toBe('E_IO');
  });

  it('maps every number of an iteration to a tag, nested fields joined, identifiers left out', () => {
    const e = {
      type: 'iteration',
      method: 'lamer',
      iteration: 3,
      worldSize: 1,
      reward: 0.5,
      loss: 0.1,
      memory: { parameters: 10, gradients: 10, optimizerState: 20 },
      breakdown: { decode: 1, unaccounted: 0.01 },
      agreement: { tokens: 9, meanAbs: 1e-7, maxAbs: 3e-7, k3: 1e-14 },
      note: 'text',
      skipped: false,
      wallTime: 5,
    } as unknown as IterationEvent;
    const tags = eventScalars(e).map((s) => s.tag);
    expect(tags).toEqual([
      'rollout/worldSize',
      'rollout/reward',
      'train/loss',
      'memory/parameters',
      'memory/gradients',
      'memory/optimizerState',
      'time/breakdown/decode',
      'time/breakdown/unaccounted',
      'agreement/tokens',
      'agreement/meanAbs',
      'agreement/maxAbs',
      'agreement/k3',
    ]);
    const ev = eventScalars({
      type: 'eval',
      method: 'lamer',
      iteration: 3,
      env: 'm',
      tasks: 2,
      passAtK: [0.5, 1],
      firstWin: [0, 1],
      byType: { a: [0, 1] },
      seconds: 2,
    });
    expect(ev.map((s) => s.tag)).toEqual(['eval/tasks', 'eval/pass@1', 'eval/pass@2', 'eval/byType/a/pass@1', 'eval/byType/a/pass@2', 'time/eval/seconds']);
  });

  it('`lamer tensorboard` writes a run from its metrics.jsonl, leaves torn lines out and keeps existing files unless --force', async () => {
    const dir = tempDir('tb-cli');
    const run = join(dir, 'job', 'lamer');
    mkdirSync(run, { recursive: true });
    const it1 = { type: 'iteration', method: 'lamer', iteration: 1, reward: 0.25, loss: 1 };
    const ev1 = { type: 'eval', method: 'lamer', iteration: 1, env: 'm', tasks: 2, passAtK: [0.5] };
    writeFileSync(join(run, 'metrics.jsonl'), `${JSON.stringify(it1)}\n${JSON.stringify(ev1)}\n{"type":"itera`);
    const first = await captured(() => main(['tensorboard', join(dir, 'job')]));
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/2 events, 4 scalars; 1 torn line\(s\) left out/);
    expect(eventFiles(run)).toHaveLength(1);
    expect(readRecords(eventFiles(run)[0])).toHaveLength(3);
    appendFileSync(join(run, 'metrics.jsonl'), '\n');
    const again = await captured(() => main(['tensorboard', join(dir, 'job')]));
    expect(again.out).toMatch(/has event files already/);
    const forced = await captured(() => main(['tensorboard', join(dir, 'job'), '--force']));
    expect(forced.code).toBe(0);
    expect(readdirSync(run).filter((f) => f.includes('tfevents'))).toHaveLength(1);
    const out = join(dir, 'elsewhere');
    expect((await captured(() => main(['tensorboard', join(dir, 'job'), '--out', out]))).code).toBe(0);
    expect(eventFiles(join(out, 'lamer'))).toHaveLength(1);
    await expect(main(['tensorboard', join(dir, 'nothing')])).rejects.toMatchObject({ code: 'E_IO' });
    mkdirSync(join(dir, 'empty'));
    await expect(main(['tensorboard', join(dir, 'empty')])).rejects.toThrow(/no run folder/);
  });
});
