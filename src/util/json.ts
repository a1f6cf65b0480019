// JSON for files people read: indented objects, arrays of plain numbers kept on one line (per-task outcomes would
// otherwise take a line per task).

/** `JSON.stringify(value, null, 2)` with every array of numbers written on a single line; ends with a newline. */
export function readableJson(value: unknown): string {
  return (
    JSON.stringify(value, null, 2).replace(
      /\[\n\s*(-?[\d.e+-]+(?:,\n\s*-?[\d.e+-]+)*)\n\s*\]/g,
      (_, items: string) => `[${items.split(/,\n\s*/).join(', ')}]`,
    ) + '\n'
  );
}
