// Content hashes recorded in a run's config.json (data files, game problems, prompt templates).

import { createHash } from 'node:crypto';

/** SHA-256 of a text (as UTF-8) or of bytes, in lower-case hex. */
export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
