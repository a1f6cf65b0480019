// `lamer doctor`: what the native side runs on, and advice when something is broken.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { addon, addonCandidates } from '../../native/addon.js';
import { resolveDevice } from '../../model/device.js';
import type { NativeBuildInfo } from '../../native/types.js';
import { parseCommandArgs } from '../args.js';
import type { Command } from '../command.js';

interface Check {
  ok: boolean;
  label: string;
  detail: string;
  advice?: string;
}

/** Lines of `ldd` that name a library the loader cannot find, or torch/c10 libraries from another folder. */
function lddProblems(addonPath: string, torchLibDir: string): string[] {
  let out: string;
  try {
    out = execFileSync('ldd', [addonPath], { encoding: 'utf8' });
  } catch {
    return []; // no ldd on this system: nothing to add
  }
  const problems: string[] = [];
  for (const line of out.split('\n')) {
    if (line.includes('not found')) problems.push(line.trim());
    const m = /^\s*(lib(?:torch|c10)[^\s]*)\s*=>\s*(\S+)/.exec(line);
    if (m && !m[2].startsWith(torchLibDir)) problems.push(`${m[1]} resolves to ${m[2]}, outside ${torchLibDir}`);
  }
  return problems;
}

export function runChecks(): { checks: Check[]; info?: NativeBuildInfo } {
  const checks: Check[] = [];
  const [major, minor] = process.versions.node.split('.').map(Number);
  checks.push({
    ok: major > 20 || (major === 20 && minor >= 17),
    label: 'node',
    detail: process.version,
    advice: 'install Node.js 20.17 or newer',
  });
  let info: NativeBuildInfo | undefined;
  const addonPath = addonCandidates().find((p) => existsSync(p));
  try {
    info = addon().buildInfo();
    checks.push({ ok: true, label: 'addon', detail: addonPath ?? '(loaded)' });
  } catch (e) {
    checks.push({ ok: false, label: 'addon', detail: (e as Error).message, advice: 'run `npm run setup`' });
    return { checks };
  }
  checks.push({
    ok: info.torchVersion === info.torchVersionBuilt,
    label: 'torch',
    detail: `${info.torchVersion} (built against ${info.torchVersionBuilt})`,
    advice: 'the libtorch on disk changed since the build: run `npm run setup` to rebuild',
  });
  checks.push({ ok: true, label: 'libtorch from', detail: `${info.torchSource}: ${info.torchLibDir}` });
  const loadedOk = [info.loadedLibraries.torch_cpu, info.loadedLibraries.c10].every((p) => p.startsWith(info!.torchLibDir));
  checks.push({
    ok: loadedOk,
    label: 'loaded libraries',
    detail: `torch_cpu ${info.loadedLibraries.torch_cpu}; c10 ${info.loadedLibraries.c10}`,
    advice: 'another libtorch was loaded first (a system libtorch or LD_PRELOAD): remove it from the library path',
  });
  if (addonPath) {
    const problems = lddProblems(addonPath, info.torchLibDir);
    checks.push({
      ok: problems.length === 0,
      label: 'ldd',
      detail: problems.length === 0 ? 'all libraries resolve from the expected places' : problems.join('; '),
      advice: 'rebuild with `npm run setup`; check that no other libtorch is on LD_LIBRARY_PATH',
    });
  }
  checks.push({
    ok: !info.cudaCompiled || info.cudaAvailable,
    label: 'cuda',
    detail: `${info.cudaAvailable ? `available, ${info.cudaDeviceCount} device(s)` : 'not available'}; ${!info.cudaCompiled ? 'CPU build' : `CUDA build, ${info.cudaKernels ? 'with' : 'without'} the .cu kernels`}`,
    advice: 'the addon was built with CUDA but no GPU is usable: check the driver (nvidia-smi)',
  });
  const auto = resolveDevice('auto');
  checks.push({ ok: true, label: 'device', detail: `model.device auto picks ${auto.device} (${auto.reason.replace('model.device auto: ', '')})` });
  checks.push({ ok: true, label: 'threads', detail: `${info.threads} intra-op, ${info.interopThreads} inter-op` });
  const backends = addon().distBackends ?? [];
  checks.push({
    ok: !info.cudaCompiled || backends.includes('nccl'),
    label: 'distributed',
    detail: `c10d backends: ${backends.join(', ') || 'none'} (lamer train --nproc N, or torchrun)`,
    advice: 'the addon has CUDA but no NCCL: data parallelism on GPUs falls back to Gloo; rebuild where nccl.h is found (pip nvidia-nccl)',
  });
  checks.push({ ok: true, label: 'blas', detail: `${info.blas || 'unknown'} (lapack: ${info.lapack || 'unknown'})` });
  checks.push({
    ok: true,
    label: 'build',
    detail: `${info.buildType}, ${info.compiler}, C++ ABI ${info.cxxAbi}, N-API ${info.napiVersion}, flags '${info.cxxFlags.trim()}'`,
  });
  checks.push({ ok: true, label: 'native concerns', detail: (addon().concerns ?? []).join(', ') });
  return { checks, info };
}

export const command: Command = {
  name: 'doctor',
  summary: 'show the torch build, devices and threads the addon uses; advice when something is broken',
  usage: 'usage: lamer doctor [--json]\n\nExit code 1 when a check fails, with what to do.',
  async run(argv) {
    const values = parseCommandArgs('doctor', this.usage, argv, { json: { type: 'boolean', default: false } });
    if (!values) return 2;
    const { checks, info } = runChecks();
    if (values.json) {
      const { torchConfig: _omit, ...rest } = info ?? ({} as Partial<NativeBuildInfo>);
      console.log(JSON.stringify({ checks, info: rest }, null, 2));
    } else {
      const width = Math.max(...checks.map((c) => c.label.length));
      for (const c of checks) {
        console.log(`${c.ok ? ' ok ' : 'FAIL'}  ${c.label.padEnd(width)}  ${c.detail}`);
        if (!c.ok && c.advice) console.log(`      ${' '.repeat(width)}  -> ${c.advice}`);
      }
    }
    return checks.every((c) => c.ok) ? 0 : 1;
  },
};
