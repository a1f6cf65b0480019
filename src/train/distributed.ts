// Data-parallel training across processes (and GPUs, and machines) on PyTorch's c10d process groups, started by
// torchrun or anything that sets its variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), or by
// `lamer train --nproc N`. Each rank plays its share of an iteration's tasks (a task's whole group stays on one rank),
// the train step normalises by the global mini-batch and all-reduces gradients, so every rank takes the same step;
// evaluations are split the same way and gathered. Rank 0 alone writes the run folder.
//
//   const dist = await DistContext.fromEnv();        // null without WORLD_SIZE (one process)
//   const mine = dist.shard(tasks.length);            // indices of this rank's tasks
//   const all = await dist.gather(myResults);         // every rank's, in rank order
import { LamerError } from '../errors.js';
import { addon } from '../native/addon.js';
import type { NativeDistGroup, NativeDistGroupOptions } from '../native/types.js';
import { resolveDevice } from '../model/device.js';

/** A process group's settings: exactly what the native group takes (every field required; the defaults are here). */
export type DistSettings = NativeDistGroupOptions;

/** Default timeout of a collective: long enough for the slowest rank's rollouts between two collectives. */
export const DEFAULT_DIST_TIMEOUT_MS = 30 * 60 * 1000;

function envInt(env: NodeJS.ProcessEnv, name: string, min: number, fallback?: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    if (fallback !== undefined) return fallback;
    throw new LamerError('E_DIST', `distributed: ${name} is not set (WORLD_SIZE is, so the launcher must set ${name} too, as torchrun does)`);
  }
  const v = Number(raw);
  if (!Number.isSafeInteger(v) || v < min) throw new LamerError('E_DIST', `distributed: ${name} must be an integer >= ${min}, found '${raw}'`);
  return v;
}

/**
 * The process group settings from torchrun's environment variables; null when WORLD_SIZE is not set (a single
 * process). LAMER_DIST_TIMEOUT (seconds) sets the collective timeout; LAMER_DIST_BACKEND picks gloo or nccl (default:
 * nccl when the model runs on CUDA and the addon has NCCL, else gloo).
 */
export function distSettingsFromEnv(env: NodeJS.ProcessEnv = process.env, device: 'cpu' | 'cuda' = 'cpu'): DistSettings | null {
  if (env.WORLD_SIZE === undefined || env.WORLD_SIZE === '') return null;
  const worldSize = envInt(env, 'WORLD_SIZE', 1);
  const rank = envInt(env, 'RANK', 0);
  if (rank >= worldSize) throw new LamerError('E_DIST', `distributed: RANK ${rank} is not below WORLD_SIZE ${worldSize}`);
  const localRank = envInt(env, 'LOCAL_RANK', 0, rank);
  const masterAddr = env.MASTER_ADDR || (worldSize === 1 ? '127.0.0.1' : '');
  if (!masterAddr) throw new LamerError('E_DIST', 'distributed: MASTER_ADDR is not set (the address of rank 0, as torchrun sets it)');
  const masterPort = envInt(env, 'MASTER_PORT', 1, worldSize === 1 ? 29500 : undefined);
  if (masterPort > 65535) throw new LamerError('E_DIST', `distributed: MASTER_PORT must be at most 65535, found ${masterPort}`);
  const timeoutS = env.LAMER_DIST_TIMEOUT === undefined || env.LAMER_DIST_TIMEOUT === '' ? DEFAULT_DIST_TIMEOUT_MS / 1000 : Number(env.LAMER_DIST_TIMEOUT);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0)
    throw new LamerError('E_DIST', `distributed: LAMER_DIST_TIMEOUT must be a number of seconds > 0, found '${env.LAMER_DIST_TIMEOUT}'`);
  const backends = addon().distBackends;
  const wanted = env.LAMER_DIST_BACKEND || (device === 'cuda' && backends.includes('nccl') ? 'nccl' : 'gloo');
  if (wanted !== 'gloo' && wanted !== 'nccl') throw new LamerError('E_DIST', `distributed: LAMER_DIST_BACKEND must be gloo or nccl, found '${wanted}'`);
  if (!backends.includes(wanted)) throw new LamerError('E_DIST', `distributed: this addon has no ${wanted} backend (it has ${backends.join(', ')})`);
  return {
    rank,
    worldSize,
    localRank,
    masterAddr,
    masterPort,
    timeoutMs: Math.round(timeoutS * 1000),
    backend: wanted,
    agentStore: /^(1|true)$/i.test(env.TORCHELASTIC_USE_AGENT_STORE ?? ''),
    restartCount: envInt(env, 'TORCHELASTIC_RESTART_COUNT', 0, 0),
  };
}

/** One process's membership of the data-parallel group. */
export class DistContext {
  readonly settings: DistSettings;
  #group: NativeDistGroup | null;

  private constructor(settings: DistSettings, group: NativeDistGroup) {
    this.settings = settings;
    this.#group = group;
  }

  /** Joins the group: returns once every rank joined, or throws E_DIST after the timeout. */
  static join(settings: DistSettings): DistContext {
    const group = new (addon().NativeDistGroup)(settings);
    return new DistContext(settings, group);
  }

  /** The group of torchrun's variables, or null in a single process (no WORLD_SIZE). */
  static fromEnv(env: NodeJS.ProcessEnv = process.env, device: 'cpu' | 'cuda' = 'cpu'): DistContext | null {
    const s = distSettingsFromEnv(env, device);
    return s ? DistContext.join(s) : null;
  }

  get rank(): number {
    return this.settings.rank;
  }

  get size(): number {
    return this.settings.worldSize;
  }

  /** Rank 0: the one that writes the run folder and prints. */
  get isMain(): boolean {
    return this.settings.rank === 0;
  }

  /** The native group, for the train step's `group` option. */
  get native(): NativeDistGroup {
    if (!this.#group) throw new LamerError('E_DIST', 'distributed: the process group was closed');
    return this.#group;
  }

  /** Indices of this rank's share of `n` items: i with i mod size = rank (interleaved, so shares differ by at most one). */
  shard(n: number): number[] {
    const out: number[] = [];
    for (let i = this.rank; i < n; i += this.size) out.push(i);
    return out;
  }

  /** Element-wise sums over the ranks. */
  async sum(values: readonly number[]): Promise<number[]> {
    return Array.from(await this.native.allReduce(Float64Array.from(values)));
  }

  /** Every rank's value (JSON-serialisable), in rank order. */
  async gather<T>(value: T): Promise<T[]> {
    const parts = await this.native.allGather(new TextEncoder().encode(JSON.stringify(value)));
    const decoder = new TextDecoder();
    return parts.map((p) => JSON.parse(decoder.decode(p)) as T);
  }

  async barrier(): Promise<void> {
    await this.native.barrier();
  }

  /** Leaves the group (idempotent). */
  async close(): Promise<void> {
    const g = this.#group;
    this.#group = null;
    if (g) await g.close();
  }
}

/**
 * The group a command joins under torchrun's variables (undefined without them), for a run whose model.device is
 * `modelDevice`; with CUDA and several ranks, `device` is the GPU of this rank (cuda:LOCAL_RANK) to override it with.
 */
export function joinRunGroup(modelDevice: string, env: NodeJS.ProcessEnv = process.env): { dist?: DistContext; device?: string } {
  const resolved = resolveDevice(modelDevice).device;
  const settings = distSettingsFromEnv(env, resolved.startsWith('cuda') ? 'cuda' : 'cpu');
  if (!settings) return {};
  const device = settings.worldSize > 1 && resolved === 'cuda' ? `cuda:${settings.localRank}` : undefined;
  return { dist: DistContext.join(settings), ...(device ? { device } : {}) };
}
