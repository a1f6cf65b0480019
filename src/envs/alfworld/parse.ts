// Reading ALFWorld commands out of a model response. A command is valid when, after normalising spacing, case,
// a trailing period and the spelling of "put" ("put X in Y", "put X on Y", "move X to Y" all mean "put X in/on Y"),
// it is one of the admissible commands of the current state; everything else is "Nothing happens.".

import { extractAction } from '../common/tags.js';

/** The canonical spelling of a command as the environment lists it. */
export function canonicalCommand(text: string): string {
  let cmd = text
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.!]+$/, '')
    .trim();
  const put = /^(?:put|place|move) (.+?) (?:in\/on|in|on|into|onto|to) (.+)$/.exec(cmd);
  if (put !== null) cmd = `put ${put[1]} in/on ${put[2]}`;
  const goTo = /^go (?:to )?(.+)$/.exec(cmd);
  if (goTo !== null) cmd = `go to ${goTo[1].replace(/^the /, '')}`;
  return cmd;
}

/** The canonical command inside <action>...</action>, or null when the tags are missing or empty. */
export function parseAlfWorldResponse(response: string): string | null {
  const raw = extractAction(typeof response === 'string' ? response : '');
  if (raw === null) return null;
  const cmd = canonicalCommand(raw);
  return cmd.length > 0 ? cmd : null;
}
