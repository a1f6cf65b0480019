// The `lamer` command: dispatches to the subcommands in src/cli/commands/.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { closest } from './args.js';
import type { Command } from './command.js';

const commandsDir = join(dirname(fileURLToPath(import.meta.url)), 'commands');

async function loadCommands(): Promise<Map<string, Command>> {
  const files = readdirSync(commandsDir)
    .filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'))
    .sort();
  const map = new Map<string, Command>();
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(commandsDir, f)).href)) as { command?: Command };
    if (mod.command) map.set(mod.command.name, mod.command);
  }
  return map;
}

function helpText(commands: Map<string, Command>): string {
  const width = Math.max(...[...commands.keys()].map((n) => n.length));
  return [
    'usage: lamer <command> [options]',
    '',
    'commands:',
    ...[...commands.values()].map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    '`lamer help <command>` shows the options of one command; `lamer --version` the version.',
  ].join('\n');
}

/** The package's version (package.json two folders up, from src/cli or dist/cli). */
export function version(): string {
  const pkg = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

export async function main(argv: string[]): Promise<number> {
  const commands = await loadCommands();
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    console.log(`lamer ${version()}`);
    return 0;
  }
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    if (rest[0] && !commands.has(rest[0])) {
      const guess = closest(rest[0], [...commands.keys()]);
      console.error(`lamer help: unknown command '${rest[0]}'${guess ? `; did you mean '${guess}'?` : ''}\n\n${helpText(commands)}`);
      return 2;
    }
    console.log(rest[0] ? commands.get(rest[0])!.usage : helpText(commands));
    return 0;
  }
  const command = commands.get(name);
  if (!command) {
    const guess = closest(name, [...commands.keys()]);
    console.error(`lamer: unknown command '${name}'${guess ? `; did you mean '${guess}'?` : ''}\n\n${helpText(commands)}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.usage);
    return 0;
  }
  return command.run(rest);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly || process.env.LAMER_CLI_ENTRY === '1') {
  // Output into a closed pipe (`lamer -h | head -2`) ends the command quietly, as for any Unix tool.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw e;
    });
  }
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      const e = err as Error & { code?: string };
      console.error(`lamer: ${e.code ? `[${e.code}] ` : ''}${e.message}`);
      if (process.env.LAMER_DEBUG) console.error(e.stack);
      process.exitCode = 1;
    },
  );
}
