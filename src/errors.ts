// Errors that cross the public API carry a stable `code`, so callers can branch on it without parsing messages.

export type ErrorCode =
  | 'E_TORCH' // libtorch raised (shape mismatch, bad dtype, ...)
  | 'E_OOM' // out of memory (host or device)
  | 'E_ARG' // a bad argument to an API call
  | 'E_DISPOSED' // a disposed object was used
  | 'E_NATIVE' // the addon could not be loaded, or another native failure
  | 'E_CHECKPOINT' // a checkpoint file or config is malformed
  | 'E_ROWS' // a row table is malformed
  | 'E_ENV' // an environment was misused
  | 'E_CONFIG' // a configuration value is invalid
  | 'E_TRAIN' // a train step could not be applied (e.g. a non-finite gradient); parameters unchanged
  | 'E_IO' // a file could not be read or written
  | 'E_INTERRUPTED' // stopped by a signal (SIGINT, SIGTERM) or an abort before it finished
  | 'E_EXISTS' // a run folder already holds a run (resume it, name the new one otherwise, or force)
  | 'E_LOCKED' // a run folder is claimed by another running process (its lock names the holder)
  | 'E_TASKS' // records of evaluations on different task lists (or without a record of their tasks) were to be paired
  | 'E_DIST'; // distributed training: a rank died or stopped answering, a collective timed out, a bad rendezvous

export class LamerError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LamerError';
    this.code = code;
  }
}

/** True when `e` is an Error carrying the given stable code (native errors are plain Errors with `code`). */
export function hasCode(e: unknown, code: ErrorCode): boolean {
  return e instanceof Error && (e as Error & { code?: unknown }).code === code;
}
