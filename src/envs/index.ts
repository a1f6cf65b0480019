// Public API of the environments: the interface, the registry, each environment with its expert, and the helpers
// shared by all of them.
export type { Environment, Expert, Observation, PlayPromptInput, PromptStyle, ReflectPromptInput, Reflection, StepResult, TrajectoryStep } from './types.js';
export { ENV_NAMES, createEnv, createExpert, isEnvName } from './registry.js';
export type { AlfWorldEnvOptions, EnvName, EnvOptionsByName, ExpertOptions, WebShopEnvOptions } from './registry.js';
export * from './common/index.js';

export { SOKOBAN_DEFAULTS, SOKOBAN_REWARDS, SokobanEnv, createSokobanEnv, generateSokobanTask } from './sokoban/env.js';
export type { SokobanOptions, SokobanSettings, SokobanTask } from './sokoban/env.js';
export { SokobanExpert, createSokobanExpert } from './sokoban/expert.js';
export { parseSokobanMoves, parseSokobanRoom } from './sokoban/parse.js';
export { MOVES, SokobanGraph, applyMove, renderRoom } from './sokoban/solver.js';
export type { Move, SokobanRoom, SokobanState } from './sokoban/solver.js';

export { MINESWEEPER_DEFAULTS, MINESWEEPER_REWARDS, MineSweeperEnv, createMineSweeperEnv } from './minesweeper/env.js';
export type { MineSweeperOptions, MineSweeperSettings } from './minesweeper/env.js';
export { MineSweeperExpert, MineSweeperLogicPlayer, createMineSweeperExpert, mineSweeperReflectionText } from './minesweeper/expert.js';
export type { LogicPlayerOptions } from './minesweeper/expert.js';
export { parseCellAction } from './minesweeper/parse.js';
export { deduce, layoutContent, makeBoard, seededLayout } from './minesweeper/solver.js';
export type { MineBoard } from './minesweeper/solver.js';
