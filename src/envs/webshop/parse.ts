// Reading WebShop actions out of a model response: `search[query]` or `click[button or product]` inside
// <action>...</action>. Anything else is no action at all (the env then answers with valid = 0).

import { extractAction } from '../common/tags.js';

export type WebShopAction = { kind: 'search'; query: string } | { kind: 'click'; target: string };

/** Parse the text inside <action> (already extracted). Case and surrounding spaces do not matter. */
export function parseWebShopCommand(text: string): WebShopAction | null {
  const m = /^\s*(search|click)\s*\[([\s\S]*)\]\s*\.?\s*$/i.exec(text);
  if (m === null) return null;
  const arg = m[2].trim().replace(/\s+/g, ' ');
  if (arg.length === 0) return null;
  return m[1].toLowerCase() === 'search' ? { kind: 'search', query: arg } : { kind: 'click', target: arg };
}

/** The action in a full model response, or null when the tags are missing or the command does not parse. */
export function parseWebShopResponse(response: string): { action: WebShopAction | null; raw: string | null } {
  const raw = extractAction(response);
  return { action: raw === null ? null : parseWebShopCommand(raw), raw };
}
