// Which Python a bench runs for its reference side (transformers), chosen among candidates by a check. The choice is
// the interpreter's own absolute path (sys.executable), never a bare name: the benches test it with existsSync and
// run it by that path. When none passes, the reason names every candidate and what it lacked, for the bench to say
// why its reference rows are missing.
import { spawnSync } from 'node:child_process';

export interface PythonChoice {
  /** Absolute path of the first candidate that passed the check, or null. */
  python: string | null;
  /** Empty when one passed; else "CANDIDATE: why; CANDIDATE: why". */
  reason: string;
}

/**
 * The first of `candidates` (paths, or names looked up on PATH) for which `check` (Python code; it refuses with
 * `raise SystemExit("why")`) runs without error.
 */
export function findPython(candidates: string[], check: string): PythonChoice {
  const refused: string[] = [];
  for (const candidate of candidates) {
    const r = spawnSync(candidate, ['-c', `${check}\nimport sys\nprint(sys.executable)`], { encoding: 'utf8', timeout: 120_000 });
    if (r.error) {
      const code = (r.error as NodeJS.ErrnoException).code;
      refused.push(`${candidate}: ${code === 'ENOENT' ? 'not found' : r.error.message}`);
      continue;
    }
    if (r.status !== 0) {
      const lines = (r.stderr || r.stdout || '').trim().split('\n');
      refused.push(`${candidate}: ${lines.at(-1) || `exit ${r.status}`}`);
      continue;
    }
    const executable = r.stdout.trim().split('\n').at(-1) ?? '';
    if (!executable.startsWith('/')) {
      refused.push(`${candidate}: sys.executable is '${executable}', not an absolute path`);
      continue;
    }
    return { python: executable, reason: '' };
  }
  return { python: null, reason: refused.join('; ') };
}
