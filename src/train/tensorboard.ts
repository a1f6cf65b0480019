// TensorBoard event files: a run's scalars in the format TensorBoard (and every tool that reads its logs) reads, written
// as the run goes so that a live TensorBoard follows it. An event file is a sequence of TFRecords (a little-endian
// uint64 length, the masked CRC-32C of those 8 bytes, the data, the masked CRC-32C of the data); each record's data is
// an `Event` protobuf (tensorflow/core/util/event.proto): wall_time (1, double), step (2, int64), file_version (3,
// string) or summary (5, a `Summary` of `Value`s, each a tag (1) and a simple_value (2, float)).
//
// No maintained npm package writes these files, so the framing and the three messages are written here; the protobuf
// wire format comes from @bufbuild/protobuf's BinaryWriter and the CRC-32C (Castagnoli) from SheetJS's crc-32, both
// maintained and dependency-free. Each event is appended with one write, so a run that is killed leaves every record
// before the last one whole, and TensorBoard's reader stops at a torn last record without losing the others.
import { closeSync, existsSync, openSync, readFileSync, readdirSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import CRC32C from 'crc-32/crc32c.js';
import { LamerError } from '../errors.js';
import { readJsonLines } from '../util/fs.js';
import type { TrainerEvent } from './events.js';

/** CRC-32C of `data`, masked as TFRecord does (rotated right by 15 bits, plus a constant), as an unsigned integer. */
export function maskedCrc32c(data: Uint8Array): number {
  const crc = CRC32C.buf(data) >>> 0;
  return (((crc >>> 15) | (crc << 17)) + 0xa282ead8) >>> 0;
}

/** One TFRecord: the framing around `data`. */
export function tfRecord(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length + 4);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(data.length), true);
  view.setUint32(8, maskedCrc32c(out.subarray(0, 8)), true);
  out.set(data, 12);
  view.setUint32(12 + data.length, maskedCrc32c(data), true);
  return out;
}

/** A scalar for TensorBoard: its tag and value. */
export interface Scalar {
  tag: string;
  value: number;
}

/** The Event protobuf of the file's first record (file_version) or of a step's scalars (summary). */
export function encodeEvent(event: { wallTime: number; step?: number; fileVersion?: string; scalars?: readonly Scalar[] }): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.Bit64).double(event.wallTime);
  if (event.step !== undefined) w.tag(2, WireType.Varint).int64(event.step);
  if (event.fileVersion !== undefined) w.tag(3, WireType.LengthDelimited).string(event.fileVersion);
  if (event.scalars && event.scalars.length > 0) {
    w.tag(5, WireType.LengthDelimited).fork();
    for (const s of event.scalars) {
      w.tag(1, WireType.LengthDelimited).fork();
      w.tag(1, WireType.LengthDelimited).string(s.tag);
      w.tag(2, WireType.Bit32).float(s.value);
      w.join();
    }
    w.join();
  }
  return w.finish();
}

/** The prefix of every event file name; TensorBoard reads the files whose name holds `tfevents`. */
export const EVENT_FILE_PREFIX = 'events.out.tfevents.';

/**
 * Appends events to one event file in `dir` (created, with its file_version record, when the writer opens). Each
 * `add` is one write to the file, so what was added is in the file when it returns.
 */
export class EventFileWriter {
  readonly path: string;
  #fd: number | null;

  constructor(dir: string, options: { wallTime?: number; suffix?: string } = {}) {
    const wallTime = options.wallTime ?? Date.now() / 1000;
    // TensorBoard's own name: seconds, host and a suffix that keeps two writers of one second apart.
    this.path = join(dir, `${EVENT_FILE_PREFIX}${Math.floor(wallTime)}.${hostname()}.${process.pid}${options.suffix ?? ''}`);
    try {
      this.#fd = openSync(this.path, 'a');
    } catch (e) {
      throw new LamerError('E_IO', `cannot write the TensorBoard event file ${this.path}: ${(e as Error).message}`);
    }
    this.#append(encodeEvent({ wallTime, fileVersion: 'brain.Event:2' }));
  }

  #append(data: Uint8Array): void {
    if (this.#fd === null) throw new LamerError('E_IO', `TensorBoard event file ${this.path} is closed`);
    writeSync(this.#fd, tfRecord(data));
  }

  /** One event of a step's scalars (non-finite values are written as they are; TensorBoard shows NaN). */
  add(step: number, scalars: readonly Scalar[], wallTime = Date.now() / 1000): void {
    if (scalars.length === 0) return;
    this.#append(encodeEvent({ wallTime, step, scalars }));
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}

/** Fields that are not scalars to plot: names, identifiers, per-task lists, flags and text. */
const NOT_SCALARS = new Set(['type', 'method', 'iteration', 'env', 'taskSet', 'firstWin', 'typeSplits', 'reflections', 'skipped', 'note', 'wallTime']);

/** The group of a top-level field of an iteration event (its TensorBoard section); unnamed fields go to `train/`. */
const ITERATION_GROUPS: Record<string, string> = {
  reward: 'rollout',
  successRate: 'rollout',
  validRatio: 'rollout',
  rows: 'rollout',
  tokens: 'rollout',
  promptTokens: 'rollout',
  promptTokensReused: 'rollout',
  promptTokensPrefilled: 'rollout',
  reflectionChecks: 'rollout',
  engine: 'rollout',
  worldSize: 'rollout',
  tokensPerSecond: 'time',
  seconds: 'time',
  rolloutSeconds: 'time',
  updateSeconds: 'time',
  rolloutCpuSeconds: 'time',
  updateCpuSeconds: 'time',
  breakdown: 'time',
  cpuBusy: 'time',
  memory: 'memory',
  peakRssBytes: 'memory',
  cuda: 'memory',
  agreement: 'agreement',
};

/** The numbers of `value` under `path`: nested objects' fields joined with '/', arrays' entries numbered from 1. */
function flatten(path: string, value: unknown, out: Scalar[]): void {
  if (typeof value === 'number') out.push({ tag: path, value });
  else if (Array.isArray(value)) value.forEach((v, i) => flatten(`${path}/${i + 1}`, v, out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) flatten(`${path}/${k}`, v, out);
}

/**
 * The scalars of a run event under stable tags: an iteration's under rollout/, train/, time/, memory/ and agreement/
 * (the field names of metrics.jsonl, nested fields joined with '/'), an evaluation's under eval/ (pass@k as
 * `eval/pass@k`, per task type `eval/byType/<type>/pass@k`, in and out of distribution `eval/bySplit/ID/pass@k`) and
 * its time under time/eval/. Every
 * number of the event is a scalar except identifiers and per-task lists (NOT_SCALARS). Checkpoints and log lines carry
 * none, except a checkpoint's `seconds` (time/checkpoint).
 */
export function eventScalars(event: TrainerEvent): Scalar[] {
  const out: Scalar[] = [];
  if (event.type === 'iteration') {
    for (const [k, v] of Object.entries(event)) {
      if (NOT_SCALARS.has(k)) continue;
      const group = ITERATION_GROUPS[k] ?? 'train';
      flatten(group === k ? group : `${group}/${k}`, v, out); // memory/parameters, not memory/memory/parameters
    }
  } else if (event.type === 'eval') {
    for (const [k, v] of Object.entries(event)) {
      if (NOT_SCALARS.has(k)) continue;
      if (k === 'passAtK') (v as number[]).forEach((p, i) => out.push({ tag: `eval/pass@${i + 1}`, value: p }));
      else if (k === 'seconds') out.push({ tag: 'time/eval/seconds', value: v as number });
      else if (k === 'breakdown') flatten('time/eval/breakdown', v, out);
      else if (k === 'byType' || k === 'bySplit') {
        for (const [name, ps] of Object.entries(v as Record<string, number[]>)) {
          ps.forEach((p, i) => out.push({ tag: `eval/${k}/${name}/pass@${i + 1}`, value: p }));
        }
      } else flatten(`eval/${k}`, v, out);
    }
  } else if (event.type === 'checkpoint' && typeof event.seconds === 'number') {
    out.push({ tag: 'time/checkpoint', value: event.seconds });
  }
  return out;
}

/** Where an event goes in TensorBoard: its iteration as the step (0 without one), its own wall time or `fallback`. */
function placeOf(event: TrainerEvent, fallback: number): { step: number; wallTime: number } {
  return {
    step: 'iteration' in event && typeof event.iteration === 'number' ? event.iteration : 0,
    wallTime: 'wallTime' in event && typeof event.wallTime === 'number' ? event.wallTime : fallback,
  };
}

/** Writes a run's events as they come: the run folder's TensorBoard event file. */
export class RunEventWriter {
  #writer: EventFileWriter | null = null;
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** Writes the event's scalars at its iteration (the step); an event without scalars writes nothing. */
  write(event: TrainerEvent): void {
    const scalars = eventScalars(event);
    if (scalars.length === 0) return;
    this.#writer ??= new EventFileWriter(this.#dir);
    const { step, wallTime } = placeOf(event, Date.now() / 1000);
    this.#writer.add(step, scalars, wallTime);
  }

  close(): void {
    this.#writer?.close();
    this.#writer = null;
  }
}

/** The TensorBoard event files directly in `dir`. */
export function eventFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.startsWith(EVENT_FILE_PREFIX))
    .sort()
    .map((f) => join(dir, f));
}

/**
 * Reads the records of an event file back (for tests and `lamer tensorboard`'s checks): the data of each whole record,
 * stopping at a torn last record as TensorBoard's reader does. A record whose checksums do not match is an error.
 */
export function readRecords(path: string): Uint8Array[] {
  const bytes = new Uint8Array(readFileSync(path));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Uint8Array[] = [];
  let at = 0;
  while (at + 12 <= bytes.length) {
    const length = Number(view.getBigUint64(at, true));
    if (view.getUint32(at + 8, true) !== maskedCrc32c(bytes.subarray(at, at + 8))) {
      throw new LamerError('E_IO', `${path}: the length of the record at byte ${at} fails its checksum`);
    }
    if (at + 12 + length + 4 > bytes.length) break; // torn by a kill
    const data = bytes.subarray(at + 12, at + 12 + length);
    if (view.getUint32(at + 12 + length, true) !== maskedCrc32c(data)) {
      throw new LamerError('E_IO', `${path}: the record at byte ${at} fails its checksum`);
    }
    out.push(data);
    at += 12 + length + 4;
  }
  return out;
}

/**
 * Writes the scalars of a run folder's metrics.jsonl as one TensorBoard event file in `outDir` (default: the run
 * folder), with each event's own wall time where it has one (earlier builds' records have none: they get the
 * metrics file's time). Lines a kill tore are left out. Returns the file and the events and scalars written.
 */
export function writeRunEvents(runDir: string, outDir = runDir): { path: string; events: number; scalars: number; skipped: number } {
  const metrics = join(runDir, 'metrics.jsonl');
  if (!existsSync(metrics)) throw new LamerError('E_IO', `no metrics.jsonl in ${runDir}: is it a run folder?`);
  const { values: lines, torn } = readJsonLines(metrics, 'E_IO');
  const fallback = statSync(metrics).mtimeMs / 1000;
  const writer = new EventFileWriter(outDir, { wallTime: fallback, suffix: '.metrics' });
  let events = 0;
  let scalars = 0;
  let skipped = torn;
  try {
    for (const value of lines) {
      const event = value as TrainerEvent;
      if (!event || typeof event !== 'object' || typeof event.type !== 'string') {
        skipped++;
        continue;
      }
      const values = eventScalars(event);
      if (values.length === 0) continue;
      const { step, wallTime } = placeOf(event, fallback);
      writer.add(step, values, wallTime);
      events++;
      scalars += values.length;
    }
  } finally {
    writer.close();
  }
  return { path: writer.path, events, scalars, skipped };
}
