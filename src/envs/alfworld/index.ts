// ALFWorld: the environment over the `.tw-pddl` engine, its expert, the data-folder loader and the generator.

import { LamerError } from '../../errors.js';
import type { Environment, Expert } from '../types.js';
import { AlfWorldEnv, type AlfWorldOptions } from './env.js';
import { AlfWorldExpert } from './expert.js';

export { AlfWorldEnv, NOTHING_HAPPENS, type AlfWorldOptions } from './env.js';
export { AlfWorldExpert } from './expert.js';
export { GameLogic, TwPddlGame, readGameFile, type GameFile } from './game.js';
export { collectGames, foldersWith, grammarVersion, loadGameFile, type GameEntry } from './data.js';
export { householdGame, householdProblem, householdTrajData, withWalkthrough } from './generate.js';
export { GENERATED_DOMAIN, GENERATED_GRAMMAR_VERSION, generatedGrammar } from './logic-text.js';
export { planOperators } from './planner.js';
export { projectAction } from './parse.js';
export { demangleNames } from './demangle.js';
export { IN_DISTRIBUTION_TYPES, OUT_OF_DISTRIBUTION_TYPES, TASK_TYPES, readTaskTypes, type Task, type TaskType } from './tasks.js';
export { generateHousehold, type Household } from './world.js';
export { replayGame, replayGames, writeGeneratedGames, type ReplayResult, type WriteOptions } from './check.js';

export function createAlfWorldEnv(options?: AlfWorldOptions): AlfWorldEnv {
  return new AlfWorldEnv(options);
}

/** The scripted expert for an ALFWorld environment (it reads the env's game, so it must be an AlfWorldEnv). */
export function createAlfWorldExpert(env: Environment): Expert {
  if (!(env instanceof AlfWorldEnv)) {
    throw new LamerError('E_ENV', `createAlfWorldExpert: expected an alfworld environment, found ${env?.name ?? String(env)}`);
  }
  return new AlfWorldExpert(env);
}
