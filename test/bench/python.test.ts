// The benches' Python choice (bench/python.ts): the interpreter it returns is an absolute path that exists (the
// benches test it with existsSync and run it by that path), and when none passes the check, the reason names each
// candidate and what it lacked.
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPython } from '../../bench/python.js';

describe('findPython', () => {
  it('resolves a bare name on PATH to the absolute interpreter it runs', () => {
    const { python, reason } = findPython(['python3'], 'import sys');
    expect(reason).toBe('');
    expect(python).not.toBeNull();
    expect(isAbsolute(python!)).toBe(true);
    expect(existsSync(python!)).toBe(true);
  });

  it('names every candidate and why it was refused when none passes', () => {
    const { python, reason } = findPython(['/nonexistent/bin/python', 'python3'], "raise SystemExit('torch sees no GPU')");
    expect(python).toBeNull();
    expect(reason).toContain('/nonexistent/bin/python');
    expect(reason).toContain('python3: torch sees no GPU');
  });

  it('skips a candidate that fails and takes the next', () => {
    const { python } = findPython(['/nonexistent/bin/python', 'python3'], 'import sys');
    expect(python).not.toBeNull();
    expect(existsSync(python!)).toBe(true);
  });
});
