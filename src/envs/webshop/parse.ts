// Reading a WebShop action the way the original does (engine.py's parse_action, the regular expression
// `(.+)\[(.+)\]` matched at the start): the name runs to the last `[` that has a `]` at least one character later, the
// argument from there to the last `]`; anything after that `]` is ignored, and the match cannot cross a line break.
// Done in linear time, without the expression's backtracking.

export interface ParsedAction {
  /** Everything before the bracket (or the whole text when there is no bracket pair). */
  name: string;
  /** The text inside the brackets, or null when the text has no `name[arg]` form. */
  arg: string;
}

/** parse_action: `name[arg]`, or null when the text does not have that form. */
export function parseAction(text: string): ParsedAction | null {
  const newline = text.indexOf('\n');
  const line = newline < 0 ? text : text.slice(0, newline);
  const close = line.lastIndexOf(']');
  if (close < 3) return null;
  const open = line.lastIndexOf('[', close - 2);
  if (open < 1) return null;
  return { name: line.slice(0, open), arg: line.slice(open + 1, close) };
}
