// Extraction of the tagged parts of a model response (SPEC §2): the action inside <action>...</action> and the
// reflection inside <remark>...</remark>. Shared by every environment so they all read responses the same way.

import type { Reflection } from '../types.js';

/** A reflection longer than this is cut (SPEC §2), so one rambling reflection cannot flood later prompts. */
export const REMARK_MAX_CHARS = 2000;

/**
 * The text inside the first complete `<tag>...</tag>` pair (tag names matched case-insensitively), trimmed, or null
 * when there is no complete pair. The first pair wins because the answer format puts the action after the reasoning
 * and a model that repeats the tag usually restates the same action; taking the first keeps parsing predictable.
 */
export function extractTag(response: string, tag: string): string | null {
  if (typeof response !== 'string') return null;
  const lower = response.toLowerCase();
  const open = `<${tag.toLowerCase()}>`;
  const close = `</${tag.toLowerCase()}>`;
  const start = lower.indexOf(open);
  if (start < 0) return null;
  const from = start + open.length;
  const end = lower.indexOf(close, from);
  if (end < 0) return null;
  return response.slice(from, end).trim();
}

/** The action text inside `<action>...</action>`, or null when the response has no complete action tag pair. */
export function extractAction(response: string): string | null {
  return extractTag(response, 'action');
}

/**
 * The reflection inside `<remark>...</remark>`, truncated to REMARK_MAX_CHARS. Missing tags or an empty remark give
 * an empty, invalid reflection: an empty remark carries nothing into the next episode, so it is not rewarded as valid.
 * So does a response that is not a string at all.
 */
export function extractRemark(response: string): Reflection {
  const inner = extractTag(response, 'remark');
  if (inner === null || inner.length === 0) return { text: '', valid: false };
  return { text: inner.slice(0, REMARK_MAX_CHARS), valid: true };
}
