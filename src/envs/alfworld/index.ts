// ALFWorld: the environment over the `.tw-pddl` engine, its expert, the data-folder loader and the generator.
// Three floors, each importing only those below it (eslint.config.js, test/build/layers.test.ts):
//   engine/  plays one `.tw-pddl` game as TextWorld's PDDL backend does: the PDDL reader (pddl), Fast Downward's
//            grounding (ground), the `.twl2` grammar (grammar), the game (game), the planner, ALFWorld's name
//            demangler (demangle) and the domain and grammar of generated games (logic-text);
//   games/   where games come from: an ALFWorld download's folders (data), lamer's households (world, generate),
//            the task types (tasks) and the walkthrough replay of `lamer env check` (check);
//   the top  what LaMer sees: the environment (env), the expert, the search player of the warm start (searcher), the
//            prompts and the action projection (parse).

import { LamerError } from '../../errors.js';
import type { Environment, Expert } from '../types.js';
import { AlfWorldEnv, type AlfWorldOptions } from './env.js';
import { AlfWorldExpert } from './expert.js';

export { AlfWorldEnv, NOTHING_HAPPENS, type AlfWorldOptions } from './env.js';
export { AlfWorldExpert } from './expert.js';
export { AlfWorldSearchPlayer, type SearchFacts } from './searcher.js';
export { GameLogic, TwPddlGame, readGameFile, type GameFile } from './engine/game.js';
export { collectGames, foldersWith, grammarVersion, loadGameFile, type GameEntry } from './games/data.js';
export { householdGame, householdProblem, householdTrajData, withWalkthrough } from './games/generate.js';
export { GENERATED_DOMAIN, GENERATED_GRAMMAR_VERSION, generatedGrammar } from './engine/logic-text.js';
export { planOperators } from './engine/planner.js';
export { projectAction } from './parse.js';
export { demangleNames } from './engine/demangle.js';
export { IN_DISTRIBUTION_TYPES, OUT_OF_DISTRIBUTION_TYPES, TASK_TYPES, readTaskTypes, type Task, type TaskType } from './games/tasks.js';
export { HOUSEHOLD_SIZES, generateHousehold, type Household, type HouseholdSize } from './games/world.js';
export { replayGame, replayGames, writeGeneratedGames, type ReplayResult, type WriteOptions } from './games/check.js';

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
