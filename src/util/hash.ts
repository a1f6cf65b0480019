// Content hashes: recorded in a run's config.json (data files, game problems, prompt templates) and in a checkpoint's
// trainer state (the model's files and the base the run started from).

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** SHA-256 of a text (as UTF-8) or of bytes, in lower-case hex. */
export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * SHA-256 of a file's bytes, in lower-case hex, read in chunks without holding the event loop (a multi-gigabyte
 * weight file leaves signals and timers free to run). The caller checks that `path` is a regular file.
 */
export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 22 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
