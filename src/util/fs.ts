// File writes that never leave a half-written file behind: a reader sees the old content or the new, whole.
import { closeSync, fsyncSync, openSync, renameSync, writeFileSync } from 'node:fs';

/** Writes `data` to `path` atomically (temporary file beside it, fsync, rename). */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  writeFileSync(tmp, data);
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}
