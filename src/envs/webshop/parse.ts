// Reading WebShop actions out of a model response: `search[query]` or `click[button or product]` inside
// <action>...</action>. Anything else is no action at all (the env then answers with valid = 0).

import { extractAction } from '../common/tags.js';

export type WebShopAction = { kind: 'search'; query: string } | { kind: 'click'; target: string };

/**
 * Parse the text inside <action> (already extracted): `search[...]` or `click[...]`, case and surrounding spaces
 * ignored, one optional full stop after the closing bracket; the argument runs to the last `]`. In linear time: no
 * regular expression with adjacent optional runs (a 100k-character response once took seconds to reject).
 */
export function parseWebShopCommand(text: string): WebShopAction | null {
  let s = text.trim();
  if (s.endsWith('.')) s = s.slice(0, -1).trimEnd();
  if (!s.endsWith(']')) return null;
  const head = /^(search|click)\s*\[/i.exec(s);
  if (head === null) return null;
  const arg = s.slice(head[0].length, -1).trim().replace(/\s+/g, ' ');
  if (arg.length === 0) return null;
  return head[1].toLowerCase() === 'search' ? { kind: 'search', query: arg } : { kind: 'click', target: arg };
}

/** The action in a full model response, or null when the tags are missing or the command does not parse. */
export function parseWebShopResponse(response: string): { action: WebShopAction | null; raw: string | null } {
  const raw = extractAction(response);
  return { action: raw === null ? null : parseWebShopCommand(raw), raw };
}
