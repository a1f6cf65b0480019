// The shape of one `lamer` subcommand. Each file in src/cli/commands/ exports `command`.
export interface Command {
  name: string;
  /** One line for `lamer help`. */
  summary: string;
  /** Usage text shown by `lamer help NAME` and on bad arguments. */
  usage: string;
  /** Runs the command with the arguments after its name; resolves to the process exit code. */
  run(argv: string[]): Promise<number>;
}
