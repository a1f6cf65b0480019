// `lamer config show`: the resolved config (a named config or file, with --set overrides applied) as YAML, each field
// with its meaning and default from the config schema, so the fields are discoverable without reading the source.
import { configSchema, loadConfig, runSeeds } from '../../train/config.js';
import { parseCommandLine } from '../args.js';
import type { Command } from '../command.js';

const usage = `usage: lamer config show [--config NAME|FILE] [--set FIELD=VALUE ...]

Prints the config that \`lamer train\` with the same options would run, as YAML: every field, its value, what it
means and its default. The output is itself a valid config file.
  --config   a name in configs/ (default: default) or a path to a YAML file
  --set      override a field, e.g. --set optim.lr=1e-5 (repeatable)`;

// A zod schema seen through its wrappers (default, optional, nullable): the description and default of the field
// and the schema inside.
interface ZodLike {
  description?: string;
  shape?: Record<string, ZodLike>;
  _zod: { def: { type: string; innerType?: ZodLike; defaultValue?: unknown } };
}

function peel(schema: ZodLike): { inner: ZodLike; description?: string; fallback?: unknown; hasDefault: boolean } {
  let s = schema;
  let description = schema.description;
  let fallback: unknown;
  let hasDefault = false;
  for (;;) {
    const def = s._zod.def;
    if (def.type === 'default' || def.type === 'prefault') {
      hasDefault = true;
      fallback = typeof def.defaultValue === 'function' ? (def.defaultValue as () => unknown)() : def.defaultValue;
    }
    if (!def.innerType || !['default', 'prefault', 'optional', 'nullable'].includes(def.type)) break;
    s = def.innerType;
    description ??= s.description;
  }
  return { inner: s, description, fallback, hasDefault };
}

const scalar = (v: unknown): string => (v === undefined ? '~' : JSON.stringify(v));

function render(schema: ZodLike, value: Record<string, unknown>, indent: string, out: string[]): void {
  for (const [key, field] of Object.entries(schema.shape ?? {})) {
    const { inner, description, fallback, hasDefault } = peel(field);
    const v = value[key];
    const note = [description, hasDefault && inner._zod.def.type !== 'object' ? `default ${scalar(fallback)}` : ''].filter(Boolean).join('; ');
    const comment = note ? `  # ${note}` : '';
    if (inner._zod.def.type === 'object' && inner.shape && v !== null && typeof v === 'object') {
      out.push(`${indent}${key}:${comment}`);
      render(inner, v as Record<string, unknown>, indent + '  ', out);
    } else if (v === undefined) {
      out.push(`${indent}# ${key}: (not set)${comment}`);
    } else {
      out.push(`${indent}${key}: ${scalar(v)}${comment}`);
    }
  }
}

/** The resolved config as commented YAML. */
export function showConfig(nameOrPath: string, overrides: readonly string[]): string {
  const config = loadConfig(nameOrPath, overrides);
  const out: string[] = [`# resolved from ${nameOrPath}${overrides.length ? ` with --set ${overrides.join(' ')}` : ''}`];
  // What the run seed decides here (SPEC §11: a seed varies what a replication varies), field by field.
  const seeds = runSeeds(config);
  const decided = (field: string, value: number | null, derived: number) => `${field} ${derived}${value === null ? ' (from the seed)' : ' (pinned)'}`;
  out.push(
    `# seed ${config.seed}: ${decided('model.init.seed', config.model.init.seed, seeds.init)}, ${decided('rollout.taskSeed', config.rollout.taskSeed, seeds.rolloutTasks)}, ` +
      `${decided('sft.taskSeed', config.sft.taskSeed, seeds.demonstrationTasks)}, and the sampling and shuffles; the evaluation tasks are the same for every seed`,
  );
  render(configSchema as unknown as ZodLike, config as unknown as Record<string, unknown>, '', out);
  return out.join('\n') + '\n';
}

export const command: Command = {
  name: 'config',
  summary: 'show a resolved config with every field, its meaning and its default',
  usage,
  async run(argv) {
    const parsed = parseCommandLine('config', usage, argv, {
      config: { type: 'string', default: 'default' },
      set: { type: 'string', multiple: true, default: [] },
    });
    if (!parsed) return 2;
    if (parsed.positionals.length !== 1 || parsed.positionals[0] !== 'show') {
      console.error(`lamer config: expected 'show', found ${JSON.stringify(parsed.positionals.join(' '))}\n\n${usage}`);
      return 2;
    }
    process.stdout.write(showConfig(parsed.values.config!, parsed.values.set ?? []));
    return 0;
  },
};
