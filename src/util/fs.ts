// File writes that never leave a half-written file behind: a reader sees the old content or the new, whole.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
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

/**
 * The text of a checkpoint's (or config's) file, refusing anything but a regular file first: reading a named pipe
 * would block until something writes to it, a device forever. `maxBytes` bounds what is read into memory.
 */
export function readRegularFile(path: string, code: ErrorCode = 'E_CHECKPOINT', maxBytes = 512 * 2 ** 20): string {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new LamerError(err.code === 'ENOENT' ? code : 'E_IO', `${path}: cannot read: ${err.code ?? err.message}`, { cause: e });
  }
  if (!st.isFile()) throw new LamerError(code, `${path}: expected a regular file, found ${kindOf(st)}`);
  if (st.size > maxBytes) throw new LamerError(code, `${path}: ${st.size} bytes, more than the ${maxBytes} this file may have`);
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new LamerError('E_IO', `${path}: cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
  }
}

/** A JSON file of a checkpoint, parsed (E_CHECKPOINT naming the file when it is not a regular file or not JSON). */
export function readJsonFile(path: string, code: ErrorCode = 'E_CHECKPOINT'): unknown {
  const text = readRegularFile(path, code);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new LamerError(code, `${path}: not valid JSON (${(e as Error).message.replace(/"[^"]*"/g, '...').slice(0, 120)})`, { cause: e });
  }
}
