// File writes that never leave a half-written file behind: a reader sees the old content or the new, whole.
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LamerError, type ErrorCode } from '../errors.js';

/** Writes `data` to `path` atomically (temporary file beside it, fsync, rename). */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  try {
    writeFileSync(tmp, data);
    const fd = openSync(tmp, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * Makes `dir` and any missing parents, one level at a time, or fails with E_IO naming the folder. Node's own recursive
 * mkdir spins forever on some paths it cannot create (for example under /proc), so it is not used.
 */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); !existsSync(d);) {
    missing.push(d);
    const up = dirname(d);
    if (up === d) break;
    d = up;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && statSync(d).isDirectory()) continue;
      throw new LamerError('E_IO', `cannot create the folder ${d}: ${(e as Error).message}`);
    }
  }
  if (!statSync(resolve(dir)).isDirectory()) throw new LamerError('E_IO', `${dir} exists and is not a folder`);
}

/** Makes the folder an output file will go in (before any long work that would write it), or fails with E_IO. */
export function ensureParentDir(path: string): void {
  makeDirs(dirname(path));
}

/** What a non-regular file is, in words. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a named pipe';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** Opened without waiting: a named pipe opened for reading would block until a writer comes. */
const OPEN_NOW = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/**
 * The bytes of a file, refusing anything but a regular file before reading: a named pipe would block until something
 * writes to it, a device (/dev/zero) would be read until memory runs out. The check is made on the path and again on
 * the opened file (so a file swapped in between is caught), and at most `maxBytes` are read: a file past the bound, or
 * one that grows past it while read, is refused with `code` naming the file and the bound. A missing file is `code`
 * too; other failures to read are E_IO.
 */
export function readRegularBytes(path: string, code: ErrorCode = 'E_CHECKPOINT', maxBytes = 512 * 2 ** 20): Buffer {
  const cannot = (e: unknown): LamerError => {
    const err = e as NodeJS.ErrnoException;
    return new LamerError(err.code === 'ENOENT' ? code : 'E_IO', `${path}: cannot read: ${err.code ?? err.message}`, { cause: e });
  };
  const check = (st: Stats): void => {
    if (!st.isFile()) throw new LamerError(code, `${path}: expected a regular file, found ${kindOf(st)}`);
    if (st.size > maxBytes) throw new LamerError(code, `${path}: ${st.size} bytes, more than the ${maxBytes} this file may have`);
  };
  let fd: number;
  try {
    check(statSync(path));
    fd = openSync(path, OPEN_NOW);
  } catch (e) {
    throw e instanceof LamerError ? e : cannot(e);
  }
  try {
    const st = fstatSync(fd);
    check(st);
    let buf = Buffer.allocUnsafe(st.size + 1);
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        if (n > maxBytes) throw new LamerError(code, `${path}: grew past the ${maxBytes} bytes this file may have while it was read`);
        const bigger = Buffer.allocUnsafe(Math.min(2 * buf.length, maxBytes + 1));
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    return buf.subarray(0, n);
  } catch (e) {
    throw e instanceof LamerError ? e : cannot(e);
  } finally {
    closeSync(fd);
  }
}

/** The text (UTF-8) of a checkpoint's, config's or run's file, read as readRegularBytes reads it. */
export function readRegularFile(path: string, code: ErrorCode = 'E_CHECKPOINT', maxBytes = 512 * 2 ** 20): string {
  return readRegularBytes(path, code, maxBytes).toString('utf8');
}

/**
 * The values of a JSON-lines file (a run's metrics.jsonl), read as readRegularFile reads it: blank lines skipped, and
 * lines that do not parse (one a kill tore, an edited line) left out and counted.
 */
export function readJsonLines(path: string, code: ErrorCode = 'E_CHECKPOINT'): { values: unknown[]; torn: number } {
  const values: unknown[] = [];
  let torn = 0;
  for (const line of readRegularFile(path, code).split('\n')) {
    if (!line.trim()) continue;
    try {
      values.push(JSON.parse(line));
    } catch {
      torn++;
    }
  }
  return { values, torn };
}

/**
 * The most arrays and objects a JSON file may nest. JSON.parse itself takes any depth, but what reads the value after it
 * (JSON.stringify in an error message, a recursive check or copy) recurses once per level and overflows the stack
 * (an uncoded RangeError) near 10,000; the files read here nest a few levels.
 */
export const MAX_JSON_DEPTH = 1_000;

/** The deepest nesting of arrays and objects in JSON text (brackets inside strings not counted), up to `limit` + 1. */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: skip to its closing quote, past escaped characters
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/**
 * A JSON file of a checkpoint, parsed (E_CHECKPOINT naming the file when it is not a regular file, not JSON, or nests
 * deeper than MAX_JSON_DEPTH).
 */
export function readJsonFile(path: string, code: ErrorCode = 'E_CHECKPOINT', maxBytes = 512 * 2 ** 20): unknown {
  const text = readRegularFile(path, code, maxBytes);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new LamerError(code, `${path}: not valid JSON (${(e as Error).message.replace(/"[^"]*"/g, '...').slice(0, 120)})`, { cause: e });
  }
  if (jsonDepth(text) > MAX_JSON_DEPTH) throw new LamerError(code, `${path}: arrays and objects nested more than ${MAX_JSON_DEPTH} deep`);
  return value;
}
