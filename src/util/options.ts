// A library call's options read through their schema (zod): the defaults filled in and every value checked once, so
// the library, the config and the native side share one declaration of each option. An unknown option (a typo such
// as `gamma_step`) or a bad value is a LamerError naming it, what was expected and what was found.
import type { z } from 'zod';
import { LamerError, type ErrorCode } from '../errors.js';

/** True exactly when A and B are the same type: `const check: Same<A, B> = true` compiles only then. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

function shown(v: unknown): string {
  if (typeof v === 'string') return `'${v}'`;
  if (typeof v === 'number' || typeof v === 'boolean' || v === undefined || v === null) return String(v);
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

/**
 * `options` parsed by `schema` (an object schema, strict); `what` names them in messages ("engine option",
 * "optimizer option"). Throws `code` for the first unknown or bad option.
 */
export function parseOptions<S extends z.ZodObject>(schema: S, options: unknown, what: string, code: ErrorCode = 'E_ARG'): z.output<S> {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new LamerError(code, `${what}s: expected an object, found ${shown(options)}`);
  }
  const r = schema.safeParse(options);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  if (issue.code === 'unrecognized_keys') {
    throw new LamerError(code, `unknown ${what} '${issue.keys[0]}'; known: ${Object.keys(schema.shape).join(', ')}`);
  }
  let found: unknown = options;
  for (const key of issue.path) found = found !== null && typeof found === 'object' ? (found as Record<PropertyKey, unknown>)[key] : undefined;
  throw new LamerError(code, `${what} '${issue.path.join('.')}': ${issue.message}, found ${shown(found)}`);
}
