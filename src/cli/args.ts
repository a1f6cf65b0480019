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
