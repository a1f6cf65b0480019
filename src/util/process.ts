// Facts about other processes on this machine, for telling a live holder of a file from one that died.
import { readFileSync } from 'node:fs';

/** True when a process with this pid exists (EPERM: it exists and belongs to another user). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When the process started, in clock ticks since boot (field 22 of /proc/PID/stat on Linux), or undefined where
 * /proc does not say: with the pid, it tells a process apart from a later one that was given the same pid.
 */
export function processStartTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: the fields after it start past the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}
