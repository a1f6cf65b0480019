// vitest globalSetup: creates the project-local Python reference environment (.venv with torch and transformers)
// once, before any test worker starts, so parity test files do not race to install it. A missing environment is
// reported here; each parity file then skips, or under CI fails (parityPython in python.ts).
import { ensurePython, isCi } from './python.js';

export default function setup(): void {
  const s = ensurePython();
  if (!s.ok) console.warn(`[parity tests] ${s.reason}\nthe parity tests (test/parity/) will ${isCi() ? 'fail: CI is set' : 'be skipped'}`);
}
