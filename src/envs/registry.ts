// The environment registry: one table row per environment (its class, how to make one from a config's options, its
// scripted expert, whether it fills LaMer's own prompt templates). The names (configs, CLI), the option types,
// createEnv and createExpert are all read from the table, so a new environment is its folder plus one row.

import { LamerError } from '../errors.js';
import { AlfWorldEnv, AlfWorldExpert } from './alfworld/index.js';
import { MineSweeperEnv } from './minesweeper/env.js';
import { MineSweeperExpert } from './minesweeper/expert.js';
import { SokobanEnv } from './sokoban/env.js';
import { SokobanExpert } from './sokoban/expert.js';
import type { Environment, Expert, PromptStyle } from './types.js';
import { WebShopEnv, WebShopExpert } from './webshop/index.js';

export interface ExpertOptions {
  /** Reflection style: `compact` gives terse reflections for tiny models. Sokoban, MineSweeper and WebShop honour it. */
  style?: PromptStyle;
}

/** One row of the table: an environment's class (made with the config's `env.options`) and its expert. */
export interface EnvRow<E extends Environment, O> {
  /** The class; its constructor takes the environment's options (validated by the environment itself). */
  type: new (options?: O) => E;
  /** The scripted expert of an environment of this class; it reads the environment's current task. */
  expert: (env: E, options: ExpertOptions) => Expert;
  /** It fills LaMer's own prompt templates (promptStyle 'paper', env option lamerSource). */
  paperPrompts: boolean;
}

/** A row with what the registry derives from it: `create`, and `expertOf` (the expert of an env of this class, or null). */
function row<E extends Environment, O>(r: EnvRow<E, O>) {
  return {
    ...r,
    create: (options?: O): E => new r.type(options),
    expertOf: (env: Environment, options: ExpertOptions): Expert | null => (env instanceof r.type ? r.expert(env, options) : null),
  };
}

const ENVIRONMENTS = {
  sokoban: row({ type: SokobanEnv, expert: (env, o) => new SokobanExpert(env, o), paperPrompts: true }),
  minesweeper: row({ type: MineSweeperEnv, expert: (env, o) => new MineSweeperExpert(env, o), paperPrompts: true }),
  webshop: row({ type: WebShopEnv, expert: (env, o) => new WebShopExpert(env, o), paperPrompts: true }),
  alfworld: row({ type: AlfWorldEnv, expert: (env) => new AlfWorldExpert(env), paperPrompts: true }),
};

type Registry = typeof ENVIRONMENTS;
export type EnvName = keyof Registry;
type OptionsOf<N extends EnvName> = NonNullable<Parameters<Registry[N]['create']>[0]>;

/** The environments by name, in the table's order. */
export const ENV_NAMES = Object.freeze(Object.keys(ENVIRONMENTS)) as readonly [EnvName, ...EnvName[]];

/** Each environment's options (its `env.options` in a config). */
export type EnvOptionsByName = { [N in EnvName]: unknown extends OptionsOf<N> ? Record<string, never> : OptionsOf<N> };
export type WebShopEnvOptions = EnvOptionsByName['webshop'];
export type AlfWorldEnvOptions = EnvOptionsByName['alfworld'];

/** The environments that fill LaMer's own prompt templates (promptStyle 'paper', env option lamerSource). */
export const PAPER_PROMPT_ENVS: readonly EnvName[] = Object.freeze(ENV_NAMES.filter((name) => ENVIRONMENTS[name].paperPrompts));

export function isEnvName(name: unknown): name is EnvName {
  return typeof name === 'string' && Object.hasOwn(ENVIRONMENTS, name);
}

/** A new environment by name; options are the environment's own (sizes, limits), validated by it. */
export function createEnv<N extends EnvName>(name: N, options?: EnvOptionsByName[N]): ReturnType<Registry[N]['create']>;
/** A name known only at run time (a config's); a registry name written out takes the typed form above. */
export function createEnv<S extends string>(name: S extends EnvName ? never : S, options?: object): Environment;
export function createEnv(name: string, options?: object): Environment {
  if (!isEnvName(name)) throw new LamerError('E_ENV', `unknown environment ${JSON.stringify(name)}; expected one of ${ENV_NAMES.join(', ')}`);
  return ENVIRONMENTS[name].create(options as never);
}

/**
 * The scripted expert of an environment made by createEnv: it reads the environment's current task, so it follows
 * reset() and restart() of that same environment object.
 */
export function createExpert(env: Environment, options: ExpertOptions = {}): Expert {
  for (const name of ENV_NAMES) {
    const expert = ENVIRONMENTS[name].expertOf(env, options);
    if (expert !== null) return expert;
  }
  throw new LamerError('E_ENV', `createExpert: no expert for environment ${JSON.stringify(env?.name)} (the registry's are ${ENV_NAMES.join(', ')})`);
}
