// vitest globalSetup: creates the project-local Python reference environment (.venv with torch and transformers)
// once, before any model test worker starts, so test files do not race to install it.
import { ensurePython } from './python.js';

export default function setup(): void {
  const s = ensurePython();
  if (!s.ok) console.warn(`[model tests] ${s.reason}\nmodel parity tests will be skipped`);
}
