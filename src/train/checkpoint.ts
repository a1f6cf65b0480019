// Checkpoints are folders written under a temporary name and renamed into place, and `latest` is a small file
// replaced by rename: a process killed at any moment leaves the previous checkpoint intact and resumable.
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { LamerError } from '../errors.js';
import { makeDirs, readRegularFile, writeFileAtomic } from '../util/fs.js';
import { processAlive } from '../util/process.js';

export { writeFileAtomic };

export const LATEST_FILE = 'latest';
/** Bytes `latest` may have (it holds a folder name). */
export const LATEST_MAX_BYTES = 4096;

function fsyncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  }
}

export function checkpointName(iteration: number): string {
  return `ckpt-${String(iteration).padStart(6, '0')}`;
}

/**
 * Writes folder `dir` whole or not at all: `write(tmpDir)` fills `.NAME.tmp-PID` beside it, which then replaces `dir`
 * by rename. A process killed meanwhile leaves the previous `dir` (if any) and a temporary folder behind.
 */
export async function writeDirAtomic(dir: string, write: (tmpDir: string) => Promise<void>): Promise<void> {
  const parent = dirname(dir);
  makeDirs(parent);
  const tmpDir = join(parent, `.${basename(dir)}.tmp-${process.pid}`);
  rmSync(tmpDir, { recursive: true, force: true });
  makeDirs(tmpDir);
  try {
    await write(tmpDir);
    fsyncDir(tmpDir);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmpDir, dir);
    fsyncDir(parent);
  } catch (e) {
    rmSync(tmpDir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Creates checkpoint `iteration` in `checkpointsDir`: `write(tmpDir)` fills a temporary folder, which is then
 * renamed to its final name, and only after that does `latest` point at it. Older checkpoints beyond `keep` are
 * removed last.
 */
export async function saveCheckpoint(checkpointsDir: string, iteration: number, write: (dir: string) => Promise<void>, keep = 2): Promise<string> {
  const name = checkpointName(iteration);
  const finalDir = join(checkpointsDir, name);
  await writeDirAtomic(finalDir, write);
  writeFileAtomic(join(checkpointsDir, LATEST_FILE), name + '\n');
  const complete = listCheckpoints(checkpointsDir);
  for (const old of complete.slice(0, Math.max(0, complete.length - keep))) {
    rmSync(join(checkpointsDir, old), { recursive: true, force: true });
  }
  return finalDir;
}

/** Complete checkpoint folders, oldest first (temporary folders of interrupted writes are ignored). */
export function listCheckpoints(checkpointsDir: string): string[] {
  if (!existsSync(checkpointsDir)) return [];
  return readdirSync(checkpointsDir)
    .filter((n) => /^ckpt-\d+$/.test(n))
    .sort();
}

/**
 * The folder of the newest complete checkpoint, or undefined when there is none. `latest` is read only when it is a
 * regular file of at most LATEST_MAX_BYTES (E_CHECKPOINT otherwise: a named pipe would block, a device never end).
 */
export function latestCheckpoint(checkpointsDir: string): string | undefined {
  const pointer = join(checkpointsDir, LATEST_FILE);
  if (existsSync(pointer)) {
    const name = readRegularFile(pointer, 'E_CHECKPOINT', LATEST_MAX_BYTES).trim();
    if (/^ckpt-\d+$/.test(name) && existsSync(join(checkpointsDir, name))) return join(checkpointsDir, name);
  }
  // `latest` lost or pointing nowhere: fall back to the newest complete folder.
  const all = listCheckpoints(checkpointsDir);
  return all.length ? join(checkpointsDir, all[all.length - 1]) : undefined;
}

/**
 * Removes the temporary files and folders that atomic writes of this process or of a process no longer running left
 * in `dir` and its subfolders (`depth` levels): `.NAME.tmp-PID` folders and `NAME.tmp-PID-TIME` files of writes cut
 * short by a kill. Runs when a run starts and when it ends; a live process's writes in flight are left alone.
 */
export function removeStaleTemporaries(dir: string, depth = 2): number {
  if (!existsSync(dir)) return 0;
  let removed = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const m = /\.tmp-(\d+)(?:-\d+)?$/.exec(entry.name);
    if (m && (Number(m[1]) === process.pid || !processAlive(Number(m[1])))) {
      rmSync(path, { recursive: true, force: true });
      removed++;
    } else if (entry.isDirectory() && depth > 0) {
      removed += removeStaleTemporaries(path, depth - 1);
    }
  }
  return removed;
}

/** Removes temporary folders left by interrupted checkpoint writes. */
export function cleanInterruptedCheckpoints(checkpointsDir: string): number {
  if (!existsSync(checkpointsDir)) return 0;
  let removed = 0;
  for (const n of readdirSync(checkpointsDir)) {
    if (/^\.ckpt-\d+\.tmp-\d+$/.test(n) || /\.tmp-\d+-\d+$/.test(n)) {
      rmSync(join(checkpointsDir, n), { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}

/** Bytes a run's JSON state file (config.json, eval.json, a checkpoint's metadata) may have. */
export const RUN_JSON_MAX_BYTES = 64 * 2 ** 20;

/** A run's JSON file, read as a regular file of at most RUN_JSON_MAX_BYTES; E_CHECKPOINT naming it otherwise. */
export function readJson<T>(path: string, what: string): T {
  try {
    return JSON.parse(readRegularFile(path, 'E_CHECKPOINT', RUN_JSON_MAX_BYTES)) as T;
  } catch (e) {
    throw new LamerError('E_CHECKPOINT', `${what} ${path} could not be read: ${(e as Error).message}`, { cause: e });
  }
}
