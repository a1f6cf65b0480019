// The `lamer` command: dispatches to the subcommands in src/cli/commands/.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Command } from './command.js';

const commandsDir = join(dirname(fileURLToPath(import.meta.url)), 'commands');

async function loadCommands(): Promise<Map<string, Command>> {
  const files = readdirSync(commandsDir).filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts')).sort();
  const map = new Map<string, Command>();
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(commandsDir, f)).href)) as { command?: Command };
    if (mod.command) map.set(mod.command.name, mod.command);
  }
  return map;
}

function printHelp(commands: Map<string, Command>): void {
  const width = Math.max(...[...commands.keys()].map((n) => n.length));
  console.log('usage: lamer <command> [options]\n\ncommands:');
  for (const c of commands.values()) console.log(`  ${c.name.padEnd(width)}  ${c.summary}`);
  console.log('\n`lamer help <command>` shows the options of one command.');
}

export async function main(argv: string[]): Promise<number> {
  const commands = await loadCommands();
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    const which = rest[0] ? commands.get(rest[0]) : undefined;
    if (which) console.log(which.usage);
    else printHelp(commands);
    return 0;
  }
  const command = commands.get(name);
  if (!command) {
    console.error(`lamer: unknown command '${name}'`);
    printHelp(commands);
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
