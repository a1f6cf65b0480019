// An update's batch written to disk as the trainer hands it to the runtime, so that a benchmark (bench/train.bench.ts)
// can run a real job's updates again under other settings. Set LAMER_RECORD_UPDATES=DIR and every update of the
// native runtime writes DIR/<method>-update-<n>.json.gz (n counting from 1 per runtime); readUpdateRecord reads one.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { LamerError } from '../errors.js';
import { readRegularBytes } from '../util/fs.js';
import type { UpdateBatch } from './runtime.js';

/** The environment variable naming the folder updates are recorded into. */
export const RECORD_UPDATES_ENV = 'LAMER_RECORD_UPDATES';

const VERSION = 1;
/** A recorded update is a few MB at most for CPU jobs; the bound keeps a wrong file from filling memory. */
const MAX_BYTES = 512 << 20;

/** Writes `batch` as `dir/<method>-update-<n>.json.gz`; returns the path. */
export function writeUpdateRecord(dir: string, method: string, n: number, batch: UpdateBatch): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${method}-update-${String(n).padStart(3, '0')}.json.gz`);
  const body = {
    version: VERSION,
    method,
    promptIds: batch.promptIds.map((x) => Array.from(x)),
    responseIds: batch.responseIds.map((x) => Array.from(x)),
    advantages: Array.from(batch.advantages),
    oldLogprobs: batch.oldLogprobs.map((x) => Array.from(x)),
    ...(batch.rowReturns ? { rowReturns: Array.from(batch.rowReturns) } : {}),
    ...(batch.groups ? { groups: Array.from(batch.groups) } : {}),
  };
  writeFileSync(path, gzipSync(JSON.stringify(body)));
  return path;
}

const isNumbers = (x: unknown): x is number[] => Array.isArray(x) && x.every((v) => typeof v === 'number' && Number.isFinite(v));
const isRows = (x: unknown): x is number[][] => Array.isArray(x) && x.every(isNumbers);

/** Reads a file writeUpdateRecord wrote; E_ARG naming the file and the field when it is not one. */
export function readUpdateRecord(path: string): { method: string; batch: UpdateBatch } {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(gunzipSync(readRegularBytes(path, 'E_ARG', MAX_BYTES)).toString('utf8')) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof LamerError) throw e;
    throw new LamerError('E_ARG', `${path}: not a recorded update (gzip JSON): ${(e as Error).message}`);
  }
  const bad = (field: string) =>
    new LamerError('E_ARG', `${path}: not a recorded update ('${field}' missing or malformed); record one with ${RECORD_UPDATES_ENV}=DIR`);
  if (body.version !== VERSION) throw bad('version');
  if (typeof body.method !== 'string') throw bad('method');
  const { promptIds, responseIds, advantages, oldLogprobs } = body;
  if (!isRows(promptIds)) throw bad('promptIds');
  if (!isRows(responseIds) || responseIds.length !== promptIds.length) throw bad('responseIds');
  if (!isNumbers(advantages) || advantages.length !== promptIds.length) throw bad('advantages');
  if (!isRows(oldLogprobs) || oldLogprobs.length !== promptIds.length || oldLogprobs.some((x, i) => x.length !== responseIds[i].length))
    throw bad('oldLogprobs');
  const batch: UpdateBatch = {
    promptIds: promptIds.map((x) => Int32Array.from(x)),
    responseIds: responseIds.map((x) => Int32Array.from(x)),
    advantages: Float32Array.from(advantages),
    oldLogprobs: oldLogprobs.map((x) => Float32Array.from(x)),
  };
  if (body.rowReturns !== undefined) {
    if (!isNumbers(body.rowReturns) || body.rowReturns.length !== promptIds.length) throw bad('rowReturns');
    batch.rowReturns = Float32Array.from(body.rowReturns);
  }
  if (body.groups !== undefined) {
    if (!isNumbers(body.groups) || body.groups.length !== promptIds.length) throw bad('groups');
    batch.groups = Int32Array.from(body.groups);
  }
  return { method: body.method, batch };
}
