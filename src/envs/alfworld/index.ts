// ALFWorld: the environment and its expert.

import { LamerError } from '../../errors.js';
import type { Environment, Expert } from '../types.js';
import { AlfWorldEnv, type AlfWorldOptions } from './env.js';
import { AlfWorldExpert } from './expert.js';

export { AlfWorldEnv, NOTHING_HAPPENS, admissibleCommands, executeCommand, type AlfWorldOptions } from './env.js';
export { AlfWorldExpert, expertCommand, expertPlan } from './expert.js';
export { IN_DISTRIBUTION_TYPES, OUT_OF_DISTRIBUTION_TYPES, TASK_TYPES, isAccomplished, type AlfWorldSplit, type Task, type TaskType } from './tasks.js';
export { generateHousehold, type Household, type WorldState } from './world.js';

export function createAlfWorldEnv(options?: AlfWorldOptions): AlfWorldEnv {
  return new AlfWorldEnv(options);
}

/** The scripted expert for an ALFWorld environment (it reads the env's world state, so it must be an AlfWorldEnv). */
export function createAlfWorldExpert(env: Environment): Expert {
  if (!(env instanceof AlfWorldEnv)) {
    throw new LamerError('E_ENV', `createAlfWorldExpert: expected an alfworld environment, found ${env?.name ?? String(env)}`);
  }
  return new AlfWorldExpert(env);
}
