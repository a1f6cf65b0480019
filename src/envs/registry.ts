// The environment registry: one place that maps an environment name (configs, CLI) to its constructor and expert.

import { LamerError } from '../errors.js';
import { createAlfWorldEnv, createAlfWorldExpert } from './alfworld/index.js';
import { MineSweeperEnv, type MineSweeperOptions } from './minesweeper/env.js';
import { MineSweeperExpert } from './minesweeper/expert.js';
import { SokobanEnv, type SokobanOptions } from './sokoban/env.js';
import { SokobanExpert } from './sokoban/expert.js';
import type { Environment, Expert, PromptStyle } from './types.js';
import { createWebShopEnv, createWebShopExpert } from './webshop/index.js';

export const ENV_NAMES = ['sokoban', 'minesweeper', 'webshop', 'alfworld'] as const;
export type EnvName = (typeof ENV_NAMES)[number];

/** The environments that fill LaMer's own prompt templates (promptStyle 'paper', env option lamerSource). */
export const PAPER_PROMPT_ENVS: readonly EnvName[] = Object.freeze(['sokoban', 'minesweeper', 'webshop', 'alfworld']);

export type WebShopEnvOptions = NonNullable<Parameters<typeof createWebShopEnv>[0]>;
export type AlfWorldEnvOptions = NonNullable<Parameters<typeof createAlfWorldEnv>[0]>;

export interface EnvOptionsByName {
  sokoban: SokobanOptions;
  minesweeper: MineSweeperOptions;
  webshop: WebShopEnvOptions;
  alfworld: AlfWorldEnvOptions;
}

export function isEnvName(name: unknown): name is EnvName {
  return typeof name === 'string' && (ENV_NAMES as readonly string[]).includes(name);
}

/** A new environment by name; options are the environment's own (sizes, limits), validated by it. */
export function createEnv(name: 'sokoban', options?: SokobanOptions): SokobanEnv;
export function createEnv(name: 'minesweeper', options?: MineSweeperOptions): MineSweeperEnv;
export function createEnv(name: string, options?: object): Environment;
export function createEnv(name: string, options?: object): Environment {
  switch (name) {
    case 'sokoban':
      return new SokobanEnv(options as SokobanOptions);
    case 'minesweeper':
      return new MineSweeperEnv(options as MineSweeperOptions);
    case 'webshop':
      return createWebShopEnv(options as WebShopEnvOptions);
    case 'alfworld':
      return createAlfWorldEnv(options as AlfWorldEnvOptions);
    default:
      throw new LamerError('E_ENV', `unknown environment ${JSON.stringify(name)}; expected one of ${ENV_NAMES.join(', ')}`);
  }
}

export interface ExpertOptions {
  /** Reflection style: `compact` gives terse reflections for tiny models. Sokoban, MineSweeper and WebShop honour it. */
  style?: PromptStyle;
}

/**
 * The scripted expert of an environment made by createEnv: it reads the environment's current task, so it follows
 * reset() and restart() of that same environment object.
 */
export function createExpert(env: Environment, options: ExpertOptions = {}): Expert {
  if (env instanceof SokobanEnv) return new SokobanExpert(env, options);
  if (env instanceof MineSweeperEnv) return new MineSweeperExpert(env, options);
  switch (env?.name) {
    case 'webshop':
      return createWebShopExpert(env as Parameters<typeof createWebShopExpert>[0], options);
    case 'alfworld':
      return createAlfWorldExpert(env as Parameters<typeof createAlfWorldExpert>[0]);
    default:
      throw new LamerError('E_ENV', `createExpert: no expert for environment ${JSON.stringify(env?.name)}`);
  }
}
