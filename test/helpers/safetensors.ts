// Safetensors files as tests and the probe edit them: read into a header (metadata, and per tensor its dtype, shape and
// bytes) and written back from one, and a one-rank ZeRO optimizer save cut into the files a save over more ranks
// writes (rank 0's chunk in the main file, rank r's in optimizer.shard-r-of-W), as ZeroAdamW::Save cuts them.
import { readFileSync, writeFileSync } from 'node:fs';

export interface SafetensorsEntry {
  dtype: string;
  shape: number[];
  bytes: Buffer;
}

export interface Safetensors {
  metadata: Record<string, string>;
  tensors: Map<string, SafetensorsEntry>;
}

export function readSafetensors(file: string): Safetensors {
  const buf = readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8')) as Record<string, unknown>;
  const tensors = new Map<string, SafetensorsEntry>();
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const { dtype, shape, data_offsets } = e as { dtype: string; shape: number[]; data_offsets: [number, number] };
    tensors.set(name, { dtype, shape, bytes: Buffer.from(buf.subarray(8 + n + data_offsets[0], 8 + n + data_offsets[1])) });
  }
  return { metadata: (header.__metadata__ ?? {}) as Record<string, string>, tensors };
}

export function writeSafetensors(file: string, st: Safetensors): void {
  const header: Record<string, unknown> = { __metadata__: st.metadata };
  const parts: Buffer[] = [];
  let at = 0;
  for (const [name, e] of st.tensors) {
    header[name] = { dtype: e.dtype, shape: e.shape, data_offsets: [at, at + e.bytes.length] };
    parts.push(e.bytes);
    at += e.bytes.length;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  writeFileSync(file, Buffer.concat([len, Buffer.from(text), ...parts]));
}

/** Reads, edits in place and writes back a safetensors file. */
export function editSafetensors(file: string, edit: (st: Safetensors) => void): void {
  const st = readSafetensors(file);
  edit(st);
  writeSafetensors(file, st);
}

/** The file rank `r` of a `world`-rank save writes beside the main file `main`. */
export function zeroShardName(main: string, r: number, world: number): string {
  return main.replace(/\.safetensors$/, `.shard-${String(r).padStart(5, '0')}-of-${String(world).padStart(5, '0')}.safetensors`);
}

/** Cuts a one-rank sharded save (`from`) into `world` files at `to`, as a save over `world` ranks writes them. */
export function cutZeroSave(from: string, to: string, world: number): void {
  const whole = readSafetensors(from);
  const chunks: number[] = [];
  const state = [...whole.tensors].filter(([name]) => /^(exp_avg|exp_avg_sq|master)\.\d+$/.test(name));
  for (const [name, e] of state) chunks[Number(name.slice(name.lastIndexOf('.') + 1))] = Math.max(1, Math.ceil(e.shape[0] / world));
  const meta: Record<string, string> = { ...whole.metadata, zero_world: String(world), zero_chunks: chunks.join(',') };
  for (let r = 0; r < world; r++) {
    const tensors = new Map<string, SafetensorsEntry>();
    for (const [name, e] of state) {
      const c = chunks[Number(name.slice(name.lastIndexOf('.') + 1))];
      const width = e.bytes.length / e.shape[0];
      const bytes = Buffer.alloc(c * width);
      e.bytes.copy(bytes, 0, Math.min(r * c, e.shape[0]) * width, Math.min((r + 1) * c, e.shape[0]) * width);
      tensors.set(name, { dtype: e.dtype, shape: [c], bytes });
    }
    if (r === 0) {
      for (const [name, e] of whole.tensors) if (!tensors.has(name) && !state.some(([s]) => s === name)) tensors.set(name, e);
      writeSafetensors(to, { metadata: meta, tensors });
    } else {
      const shardMeta: Record<string, string> = { zero_rank: String(r) };
      for (const k of ['zero_world', 'zero_signature', 'zero_chunks', 'zero_dtypes', 'zero_save', 'step'] as const) {
        if (meta[k] !== undefined) shardMeta[k] = meta[k];
      }
      writeSafetensors(zeroShardName(to, r, world), { metadata: shardMeta, tensors });
    }
  }
}
