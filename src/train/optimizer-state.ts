// Checks on an optimizer state file (safetensors) made before the native reader loads it: the counters in its
// metadata must be counts written in plain digits. The native reader parsed `step` as the leading number of the text,
// so "1e9" continued from step 1 and "-3" or "2.5" were taken: the learning-rate schedule and AdamW's bias correction
// then restarted or ran backwards without a word.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { LamerError } from '../errors.js';

/** The largest header read here (a state file's header lists its tensors; the native reader bounds it too). */
const MAX_HEADER_BYTES = 100 * 2 ** 20;

/** The counters of an optimizer state's metadata that are read back as integers. */
const COUNTERS = ['step'] as const;

/**
 * The `__metadata__` of safetensors file `path`, or undefined when the file has no readable header (the native
 * reader then says what is wrong with it). E_CHECKPOINT when `path` is not a regular file.
 */
function stateMetadata(path: string): Record<string, unknown> | undefined {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new LamerError('E_CHECKPOINT', `${path}: an optimizer state must be a regular file`);
    size = st.size;
  } catch (e) {
    if (e instanceof LamerError) throw e;
    return undefined;
  }
  if (size < 8) return undefined;
  const fd = openSync(path, 'r');
  try {
    const prefix = Buffer.alloc(8);
    readSync(fd, prefix, 0, 8, 0);
    const n = prefix.readBigUInt64LE(0);
    if (n > BigInt(Math.min(MAX_HEADER_BYTES, size - 8))) return undefined;
    const header = Buffer.alloc(Number(n));
    readSync(fd, header, 0, header.length, 8);
    const parsed = JSON.parse(header.toString('utf8')) as { __metadata__?: unknown };
    const meta = parsed?.__metadata__;
    return meta !== null && typeof meta === 'object' && !Array.isArray(meta) ? (meta as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Refuses an optimizer state file whose counters (`step`) are not counts in plain digits within the exact integer
 * range: E_CHECKPOINT naming the file, the field and what it holds.
 */
export function checkOptimizerStateCounters(path: string): void {
  const meta = stateMetadata(path);
  if (!meta) return;
  for (const key of COUNTERS) {
    const v = meta[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
      throw new LamerError(
        'E_CHECKPOINT',
        `${path}: metadata '${key}' must be a count of optimizer steps in plain digits (0 to ${Number.MAX_SAFE_INTEGER}), found ${JSON.stringify(v)}; ` +
          'the file was not written by this program, or was edited',
      );
    }
  }
}
