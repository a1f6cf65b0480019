// One writer per run folder, enclosing folders included: a run claims its folder before it writes anything in it,
// with a lock file created atomically (a complete file linked into place, which fails when one is there already) that
// names its holder: pid, host, start time and command. A second `train` or `--resume` on a claimed folder stops at once
// with E_LOCKED naming the holder, and so does one on a folder inside a claimed one (a comparison job holds its folder
// while its methods' runs write inside it) or on a folder that holds a claimed one. The lock goes at exit; one left by
// a process that died (killed, out of memory) names a pid that is no longer running on this host: the next run takes
// it over and says so, and such a lock above or below a folder does not block it.
import { hostname } from 'node:os';
import { linkSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { LamerError } from '../errors.js';
import { makeDirs, readRegularFile } from '../util/fs.js';
import { processAlive, processStartTicks } from '../util/process.js';

/** The lock's name inside a run folder. */
export const LOCK_FILE = '.lock';

/** Who holds a run folder. */
export interface LockHolder {
  pid: number;
  host: string;
  /** When the claim was made (ISO time). */
  since: string;
  /** The holder's start time in clock ticks since boot (Linux), which tells it apart from a later process of its pid. */
  start?: string;
  command: string;
}

export interface RunFolderClaim {
  readonly dir: string;
  /** The lock this claim took over from a process that had died, if any. */
  readonly tookOver?: LockHolder;
  /** Gives the folder up (removes the lock if it is still this claim's); a second call does nothing. */
  release(): void;
}

/** Folders this process holds, so a run inside a job's folder (a method of a comparison) does not claim it again. */
const held = new Map<string, LockHolder>();

function releaseAll(): void {
  for (const dir of [...held.keys()]) removeIfOurs(dir);
}
process.on('exit', releaseAll);

function describeHolder(h: LockHolder): string {
  return `process ${h.pid} on ${h.host} since ${h.since} (${h.command})`;
}

function readHolder(path: string): LockHolder | 'unreadable' | 'missing' {
  let text: string;
  try {
    // A regular file of a lock's size only: a named pipe of that name would block the read.
    text = readRegularFile(path, 'E_LOCKED', 64 * 1024);
  } catch (e) {
    return ((e as Error).cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT' ? 'missing' : 'unreadable';
  }
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (Number.isInteger(h.pid) && typeof h.host === 'string' && typeof h.since === 'string' && typeof h.command === 'string') return h as LockHolder;
  } catch {
    // not JSON
  }
  return 'unreadable';
}

const sameHolder = (a: LockHolder, b: LockHolder) => a.pid === b.pid && a.host === b.host && a.since === b.since && a.start === b.start;

/** A holder on this host whose process is gone (or whose pid now belongs to a process started later). */
function isStale(h: LockHolder): boolean {
  if (h.host !== hostname()) return false;
  if (!processAlive(h.pid)) return true;
  const start = processStartTicks(h.pid);
  return h.start !== undefined && start !== undefined && start !== h.start;
}

function removeIfOurs(dir: string): void {
  const mine = held.get(dir);
  held.delete(dir);
  if (!mine) return;
  const path = join(dir, LOCK_FILE);
  const now = readHolder(path);
  if (typeof now === 'object' && sameHolder(now, mine)) rmSync(path, { force: true });
}

const inside = (dir: string, parent: string) => dir === parent || dir.startsWith(parent + sep);

/** A lock naming a live holder (a lock file that names none is not a run's: another program's `.lock`). */
function liveHolder(path: string): LockHolder | undefined {
  const h = readHolder(path);
  return typeof h === 'object' && !isStale(h) ? h : undefined;
}

/** Folders below a claimed one that are looked at for locks (a run folder's own tree is a few levels deep). */
const MAX_INNER_DEPTH = 8;

/**
 * Another process's live claim on a folder enclosing `target`, or inside it (folders are walked without following
 * links, down to MAX_INNER_DEPTH levels): the E_LOCKED refusal naming it, or undefined.
 */
function nestedClaim(target: string): LamerError | undefined {
  const refuse = (relation: string, dir: string, h: LockHolder) =>
    new LamerError(
      'E_LOCKED',
      `${target} ${relation} ${dir}, which is in use by ${describeHolder(h)}: one run writes a run folder and the folders in it at a time. ` +
        `Wait for it to end or stop it${h.host === hostname() ? '' : `; if it no longer runs on ${h.host}, remove ${join(dir, LOCK_FILE)}`}`,
    );
  for (let up = dirname(target); ; up = dirname(up)) {
    const h = held.has(up) ? undefined : liveHolder(join(up, LOCK_FILE));
    if (h) return refuse('is inside', up, h);
    if (dirname(up) === up) break;
  }
  const walk = (dir: string, depth: number): LamerError | undefined => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return undefined; // removed meanwhile, or not readable: nothing there to write
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const sub = join(dir, e.name);
      const h = held.has(sub) ? undefined : liveHolder(join(sub, LOCK_FILE));
      if (h) return refuse('holds', sub, h);
      if (depth < MAX_INNER_DEPTH) {
        const found = walk(sub, depth + 1);
        if (found) return found;
      }
    }
    return undefined;
  };
  return walk(target, 1);
}

/**
 * Claims `dir` for this process (creating it if needed), or throws E_LOCKED naming the process that holds it. A
 * folder at or inside one this process holds already is not claimed again (a comparison job's method runs).
 */
export function claimRunFolder(dir: string): RunFolderClaim {
  const target = resolve(dir);
  const parent = [...held.keys()].find((p) => inside(target, p));
  if (parent) return { dir: target, release: () => {} };
  makeDirs(target);
  const path = join(target, LOCK_FILE);
  const me: LockHolder = {
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    ...(processStartTicks(process.pid) ? { start: processStartTicks(process.pid) } : {}),
    command: process.argv
      .slice(1)
      .map((a) => relative(process.cwd(), a) || a)
      .join(' ')
      .slice(0, 300),
  };
  let tookOver: LockHolder | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    // The whole file first, then linked into place: a reader never sees a half-written lock.
    const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
    writeFileSync(tmp, JSON.stringify(me) + '\n');
    try {
      linkSync(tmp, path);
      held.set(target, me);
      // Then the folders above and below: two processes claiming a folder and one inside it at the same moment each
      // place their lock before they look, so at least one of them sees the other's and gives way.
      const nested = nestedClaim(target);
      if (nested) {
        removeIfOurs(target);
        throw nested;
      }
      const claim: RunFolderClaim = { dir: target, ...(tookOver ? { tookOver } : {}), release: () => removeIfOurs(target) };
      return claim;
    } catch (e) {
      if (e instanceof LamerError) throw e;
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new LamerError('E_IO', `cannot create the lock ${path}: ${(e as Error).message}`);
    } finally {
      rmSync(tmp, { force: true });
    }
    const holder = readHolder(path);
    if (holder === 'missing') continue; // released between the two calls: try again
    if (holder === 'unreadable') {
      throw new LamerError('E_LOCKED', `${target} is locked by ${path}, which does not say who holds it; if no run is using the folder, remove that file`);
    }
    if (!isStale(holder)) {
      throw new LamerError(
        'E_LOCKED',
        `${target} is in use by ${describeHolder(holder)}: one run writes a run folder at a time. Wait for it to end or stop it` +
          (holder.host === hostname() ? '' : `; if it no longer runs on ${holder.host}, remove ${path}`),
      );
    }
    // Taken over from a process that died: moved aside first, so that of two processes taking it over only one does.
    const aside = `${path}.stale-${process.pid}`;
    try {
      renameSync(path, aside);
    } catch {
      continue; // another process moved it first
    }
    const moved = readHolder(aside);
    if (typeof moved === 'object' && sameHolder(moved, holder)) {
      tookOver = holder;
      rmSync(aside, { force: true });
    } else {
      // A live claim made in between: put it back where it was.
      try {
        linkSync(aside, path);
      } catch {
        // a third claim is in place; ours will fail against it
      }
      rmSync(aside, { force: true });
    }
  }
  throw new LamerError('E_LOCKED', `${target}: could not claim the folder (its lock kept changing hands); try again`);
}
