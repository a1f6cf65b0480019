// Reading a command out of a model response as LaMer's ALFWorld projection does: the response is lowercased, the
// command is the text between the first `<action>` and the first `</action>` (stripped); without both tags it is the
// response's last 30 characters, and the turn is invalid. The command goes to the game as it is, and the game answers
// "Nothing happens." unless it is exactly an admissible command. One stated difference: LaMer counts a response as
// tagged when both tags occur in any order; here a `</action>` before the first `<action>` is not a tag pair (the
// command, empty, is still sent as LaMer sends it), as no environment of the project counts a response without a
// complete pair as valid.

/** LaMer's projection of a response: the command sent to the game, and whether it had an `<action>...</action>` pair. */
export function projectAction(response: string): { command: string; tagged: boolean } {
  const lower = (typeof response === 'string' ? response : '').toLowerCase();
  const start = lower.indexOf('<action>');
  const end = lower.indexOf('</action>');
  if (start < 0 || end < 0) return { command: lower.slice(-30), tagged: false };
  return { command: lower.slice(start + '<action>'.length, end).trim(), tagged: end >= start + '<action>'.length };
}
