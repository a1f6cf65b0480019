// File writes that never leave a half-written file behind: a reader sees the old content or the new, whole.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LamerError } from '../errors.js';

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
  for (let d = resolve(dir); !existsSync(d); ) {
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
