// The CUDA kernels are plain CUDA over raw pointers, so each .cu compiles on its own with nvcc, even on a machine
// with no GPU and a CPU-only libtorch. Where nvcc exists, this compiles every one (and links the standalone
// CUDA-vs-CPU checker); it cannot run them without a GPU.
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { root } from '../../helpers/index.js';


function findNvcc(): string | undefined {
  const fromPath = spawnSync('sh', ['-c', 'command -v nvcc'], { encoding: 'utf8' }).stdout.trim();
  if (fromPath) return fromPath;
  return ['/usr/local/cuda/bin/nvcc', '/usr/local/cuda-13.0/bin/nvcc'].find((p) => existsSync(p));
}

function cuFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...cuFiles(p));
    else if (name.endsWith('.cu')) out.push(p);
  }
  return out;
}

const nvcc = findNvcc();

describe.skipIf(!nvcc)('CUDA sources compile with nvcc alone', () => {
  const files = cuFiles(join(root, 'native'));
  const outDir = mkdtempSync(join(tmpdir(), 'lamer-nvcc-'));

  it('there are CUDA kernels to compile', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  for (const file of files) {
    it(`nvcc -c ${relative(root, file)}`, () => {
      const obj = join(outDir, relative(root, file).replace(/[/.]/g, '_') + '.o');
      execFileSync(nvcc!, ['-std=c++17', '-O2', '-arch=sm_80', '-I', join(root, 'native'), '-c', file, '-o', obj], {
        stdio: 'pipe',
      });
      expect(statSync(obj).size).toBeGreaterThan(0);
    }, 300_000);
  }

  it('the standalone CUDA-vs-CPU advantage checker links', () => {
    const exe = join(outDir, 'adv_check');
    execFileSync(
      nvcc!,
      ['-std=c++17', '-O2', '-arch=sm_80', '-I', join(root, 'native'), '-o', exe,
        join(root, 'test/native/algo/cuda_kernel_check.cu'), join(root, 'native/algo/kernels/advantages.cu'), join(root, 'native/algo/advantages.cpp')],
      { stdio: 'pipe' },
    );
    expect(statSync(exe).size).toBeGreaterThan(0);
  }, 300_000);
});
