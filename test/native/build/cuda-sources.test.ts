// The CUDA kernels are plain CUDA over raw pointers, so each .cu compiles on its own with nvcc, even on a machine
// with no GPU and a CPU-only libtorch. Where nvcc exists, this compiles every one (and links the standalone
// CUDA-vs-CPU checker); it cannot run them without a GPU.
//
// And, read from the sources (a wrong device shows only on a machine with two GPUs or more): every CUDA stream the
// addon looks up names its device, inside a function that makes that device current first (custom operators get no
// device guard from the dispatcher), and the executor of cuda:N makes N current on its thread.
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { root } from '../../helpers/index.js';


function findNvcc(): string | undefined {
  const fromPath = spawnSync('sh', ['-c', 'command -v nvcc'], { encoding: 'utf8' }).stdout.trim();
  if (fromPath) return fromPath;
  return ['/usr/local/cuda/bin/nvcc', '/usr/local/cuda-13.0/bin/nvcc'].find((p) => existsSync(p));
}

function filesEnding(dir: string, ends: string[]): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesEnding(p, ends));
    else if (ends.some((e) => name.endsWith(e))) out.push(p);
  }
  return out;
}
const cuFiles = (dir: string): string[] => filesEnding(dir, ['.cu']);

/** Each `pattern` match in the native C++ sources: file, line, and the text of its function up to it (from the
 * function's first line, the last line above it that starts in column 0 and is not a brace, a preprocessor line, a
 * comment or a namespace: clang-format indents everything inside a function). */
function sitesOf(pattern: RegExp): { where: string; text: string; before: string }[] {
  const out: { where: string; text: string; before: string }[] = [];
  for (const file of filesEnding(join(root, 'native'), ['.cpp', '.h'])) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (!pattern.test(line) || /^\s*\/\//.test(line)) return;
      let start = i;
      while (start > 0 && !(/^\S/.test(lines[start]) && !/^(}|#|\/\/|namespace\b)/.test(lines[start]))) start--;
      out.push({ where: `${relative(root, file)}:${i + 1}`, text: line.trim(), before: lines.slice(start, i + 1).join('\n') });
    });
  }
  return out;
}

describe('CUDA work names its device (read from the sources)', () => {
  const lookups = sitesOf(/getCurrentCUDAStream\(/);
  const launches = sitesOf(/\bcuda::(rotary|swiglu|kv_write)\(|_efficient_attention_forward\(/);

  it('there are CUDA stream lookups and kernel launches to check', () => {
    expect(lookups.length).toBeGreaterThan(0);
    expect(launches.length).toBeGreaterThan(0);
  });

  it("every stream lookup names the device (getCurrentCUDAStream(index), never the calling thread's current device)", () => {
    expect(lookups.filter((s) => /getCurrentCUDAStream\(\s*\)/.test(s.text)).map((s) => `${s.where}: ${s.text}`)).toEqual([]);
  });

  it("every stream lookup and kernel launch comes after a device guard in its function", () => {
    const unguarded = [...lookups, ...launches].filter((s) => !/\bCUDAGuard\b|\bOptionalCUDAGuard\b/.test(s.before));
    expect(unguarded.map((s) => `${s.where}: ${s.text}`)).toEqual([]);
  });

  it('the executor of cuda:N makes device N current on its thread before its first job', () => {
    const src = readFileSync(join(root, 'native', 'bridge', 'executor.cpp'), 'utf8');
    const loop = src.slice(src.indexOf('void Executor::Loop()'));
    expect(src).toMatch(/c10::cuda::set_device\(/);
    expect(loop.indexOf('MakeDeviceCurrent(device_)')).toBeGreaterThan(0);
    expect(loop.indexOf('MakeDeviceCurrent(device_)')).toBeLessThan(loop.indexOf('job->work()'));
  });
});

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
