#!/usr/bin/env node
// Builds the native addon with cmake-js against the libtorch that scripts/setup.sh found.
// Incremental: cmake only recompiles what changed, so a re-run with nothing to do takes a few seconds.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// The libtorch of the last configure (kept in CMake's cache) or the project-local one, unless told otherwise.
function cachedTorchDir() {
  const cache = join(process.env.LAMER_BUILD_DIR ? resolve(root, process.env.LAMER_BUILD_DIR) : join(root, 'build'), 'CMakeCache.txt');
  if (existsSync(cache)) {
    const m = /^Torch_DIR:[A-Z]+=(.*)$/m.exec(readFileSync(cache, 'utf8'));
    if (m && existsSync(join(m[1], 'TorchConfig.cmake'))) return m[1];
  }
  const local = join(root, 'libtorch', 'share', 'cmake', 'Torch');
  return existsSync(join(local, 'TorchConfig.cmake')) ? local : undefined;
}
const torchDir = process.env.LAMER_TORCH_DIR ?? process.env.Torch_DIR ?? cachedTorchDir();
if (!torchDir || !existsSync(join(torchDir, 'TorchConfig.cmake'))) {
  console.error('[build] no libtorch: run `npm run setup` (it finds or fetches libtorch), or set Torch_DIR to the folder holding TorchConfig.cmake');
  process.exit(1);
}
const cmakeJs = join(root, 'node_modules', 'cmake-js', 'bin', 'cmake-js');
const parallel = String(Math.max(1, Number(process.env.LAMER_BUILD_JOBS ?? cpus().length)));
// LAMER_BUILD_DIR: build somewhere other than ./build (e.g. to keep a second configuration side by side).
const outDir = process.env.LAMER_BUILD_DIR ? resolve(root, process.env.LAMER_BUILD_DIR) : join(root, 'build');
const args = [
  cmakeJs,
  'build',
  '--out',
  outDir,
  '--log-level',
  'warn',
  '--parallel',
  parallel,
  `--CDTorch_DIR=${torchDir}`,
  ...(process.env.LAMER_TORCH_SOURCE ? [`--CDLAMER_TORCH_SOURCE=${process.env.LAMER_TORCH_SOURCE}`] : []),
];
if (process.env.LAMER_CUDA === '0') args.push('--CDLAMER_CUDA=OFF');
console.log('[build] building the native addon (first build takes a few minutes)');
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
if (r.status !== 0) {
  console.error('[build] native build failed; see the compiler output above');
  process.exit(r.status ?? 1);
}
