// Command-line options of the `lamer` subcommands: node's parseArgs, strict, with the command's usage on errors.
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** The parsed option values, or undefined after printing what was wrong and the usage (exit code 2). */
export function parseCommandArgs<O extends Options>(command: string, usage: string, argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, strict: true }).values;
  } catch (e) {
    console.error(`lamer ${command}: ${(e as Error).message}\n\n${usage}`);
    return undefined;
  }
}

/** As parseCommandArgs, for commands that also take operands (e.g. run folders): the values and the operands. */
export function parseCommandLine<O extends Options>(command: string, usage: string, argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (e) {
    console.error(`lamer ${command}: ${(e as Error).message}\n\n${usage}`);
    return undefined;
  }
}

/**
 * A list of seeds: ranges and single seeds separated by commas ("0-4", "0,2,7", "0-2,9"), in the order given without
 * repeats; undefined when the text is not such a list.
 */
export function parseSeedList(spec: string): number[] | undefined {
  const seeds: number[] = [];
  for (const part of spec.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) return undefined;
    const [from, to] = [Number(m[1]), Number(m[2] ?? m[1])];
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || to < from || to - from >= 10_000) return undefined;
    for (let s = from; s <= to; s++) if (!seeds.includes(s)) seeds.push(s);
  }
  return seeds;
}
