// The one place that loads the native addon. Other modules call `addon()` and get the typed exports.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LamerError } from '../errors.js';
import type { NativeAddon } from './types.js';

export type * from './types.js';

// Two folders up from this file: from src/native/ in a checkout (tsx, vitest) and from dist/native/ in the compiled
// package (tsconfig.build.json keeps dist/ the same shape as src/), so the build folder is found from either.
const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where the built addon is looked for: $LAMER_ADDON, else the Release and Debug outputs of the build folder
 * ($LAMER_BUILD_DIR, default ./build). */
export function addonCandidates(): string[] {
  const fromEnv = process.env.LAMER_ADDON;
  if (fromEnv) return [fromEnv];
  const buildDir = process.env.LAMER_BUILD_DIR ? resolve(projectRoot, process.env.LAMER_BUILD_DIR) : join(projectRoot, 'build');
  return [join(buildDir, 'Release', 'lamer.node'), join(buildDir, 'Debug', 'lamer.node')];
}

let loaded: NativeAddon | undefined;

/** The native addon, loaded on first use. Throws E_NATIVE with what to do when it is missing or broken. */
export function addon(): NativeAddon {
  if (loaded) return loaded;
  const candidates = addonCandidates();
  const path = candidates.find((p) => existsSync(p));
  if (!path) {
    throw new LamerError('E_NATIVE', `the native addon is not built (looked for ${candidates.join(', ')}); run \`npm run setup\` in ${projectRoot}`);
  }
  // OpenMP's default is to busy-wait at every barrier. When the cores are shared (other processes, parallel test
  // workers, the JS thread itself), a spinning thread that is descheduled stalls every op: a 2-token forward of a
  // small model took 190 ms instead of 3 ms here. Threads that sleep at barriers cost little when the machine is
  // idle. libgomp reads this when it loads, with the addon, so it is set just before; a user's choice wins.
  process.env.OMP_WAIT_POLICY ??= 'PASSIVE';
  const require = createRequire(import.meta.url);
  try {
    loaded = require(path) as NativeAddon;
  } catch (e) {
    throw new LamerError(
      'E_NATIVE',
      `could not load the native addon ${path}: ${(e as Error).message}. ` +
        'Rebuild it with `npm run setup`; `ldd` on the file shows which libraries fail to resolve.',
      { cause: e },
    );
  }
  return loaded;
}
