// Checks of game folders (`lamer env check --env alfworld`) and the writer of generated games as files
// (`lamer env generate --env alfworld`). A check replays each game's walkthrough from the initial state: every command
// must be admissible at its step (never "Nothing happens."), and the goal must hold after the last command and not
// before. That exercises the parser, the grounding with its quirks, the grammar, the names and the goal together.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { LamerError } from '../../../errors.js';
import { contentSplit, taskSeed } from '../../common/seeds.js';
import { foldersWith, loadGameFile, trajTaskType } from './data.js';
import { GameLogic, NOTHING_HAPPENS, TwPddlGame } from '../engine/game.js';
import { householdGame, householdProblem, householdTrajData, withWalkthrough } from './generate.js';
import { IN_DISTRIBUTION_TYPES, TASK_TYPES, isTaskType, type TaskType } from './tasks.js';
import { generateHousehold, type HouseholdSize } from './world.js';

export interface ReplayResult {
  /** The game's folder relative to the checked folder (`.` for the folder itself). */
  path: string;
  ok: boolean;
  /** Walkthrough commands replayed. */
  steps: number;
  taskType: string | null;
  /** What failed, when it did. */
  problem?: string;
}

/** Replays one game's walkthrough (see the file comment). */
export function replayGame(file: string, path: string, taskType: string | null): ReplayResult {
  const base = { path, taskType, steps: 0 };
  try {
    const { game: data } = loadGameFile(file);
    const walkthrough = data.walkthrough;
    if (!walkthrough || walkthrough.length === 0) return { ...base, ok: false, problem: 'the game file has no walkthrough' };
    const game = new TwPddlGame(new GameLogic(data, path));
    game.reset();
    if (game.won()) return { ...base, ok: false, problem: 'the goal holds before any command' };
    for (let i = 0; i < walkthrough.length; i++) {
      const command = walkthrough[i];
      const admissible = game.admissible();
      if (!admissible.includes(command.trim())) {
        return { ...base, steps: i, ok: false, problem: `step ${i + 1} ${JSON.stringify(command)} is not admissible (admissible: ${admissible.join(', ')})` };
      }
      const { feedback } = game.step(command);
      if (feedback === NOTHING_HAPPENS) return { ...base, steps: i, ok: false, problem: `step ${i + 1} ${JSON.stringify(command)} gives "Nothing happens."` };
      const won = game.won();
      const last = i === walkthrough.length - 1;
      if (won && !last) return { ...base, steps: i + 1, ok: false, problem: `the goal holds after step ${i + 1} of ${walkthrough.length}` };
      if (!won && last) return { ...base, steps: i + 1, ok: false, problem: `the goal does not hold after the last step (${walkthrough.length})` };
    }
    return { ...base, steps: walkthrough.length, ok: true };
  } catch (e) {
    return { ...base, ok: false, problem: (e as Error).message };
  }
}

/** Replays every game under `dir` (a folder holding game.tw-pddl, at any depth), in sorted path order. */
export function replayGames(dir: string, onResult?: (r: ReplayResult) => void): ReplayResult[] {
  const root = resolve(dir);
  const results: ReplayResult[] = [];
  for (const folder of foldersWith(root, 'game.tw-pddl')) {
    const path = relative(root, folder).split(sep).join('/') || '.';
    const t = existsSync(join(folder, 'traj_data.json')) ? trajTaskType(folder) : null;
    const type = t !== null && isTaskType(t) ? t : null;
    const r = replayGame(join(folder, 'game.tw-pddl'), path, type);
    results.push(r);
    onResult?.(r);
  }
  return results;
}

export interface WriteOptions {
  /** Training games (train/, task types `taskTypes`, training seeds). */
  train: number;
  /** Evaluation games (valid_unseen/, task types `evalTaskTypes`, evaluation seeds). */
  eval: number;
  taskTypes?: readonly TaskType[];
  evalTaskTypes?: readonly TaskType[];
  /** The households' size (default `standard`), as the environment's `household` option. */
  household?: HouseholdSize;
}

/**
 * Writes generated games as ALFWorld lays its data out: `<out>/<split>/<task_type>-<Object>-<Receptacle>-<seed>/
 * trial_<seed>/{game.tw-pddl, traj_data.json}`, split `train` from training seeds and `valid_unseen` from evaluation
 * seeds, each game of its seed's content split (as the environment plays them). Returns the folders written.
 */
export function writeGeneratedGames(out: string, options: WriteOptions): string[] {
  for (const [k, v] of [
    ['train', options.train],
    ['eval', options.eval],
  ] as const) {
    if (!Number.isInteger(v) || v < 0) throw new LamerError('E_ARG', `--${k}: expected a number of games >= 0, found ${v}`);
  }
  const written: string[] = [];
  const plan: Array<[string, 'train' | 'eval', number, readonly TaskType[]]> = [
    ['train', 'train', options.train, options.taskTypes ?? IN_DISTRIBUTION_TYPES],
    ['valid_unseen', 'eval', options.eval, options.evalTaskTypes ?? TASK_TYPES],
  ];
  for (const [folder, split, count, types] of plan) {
    for (let i = 0; i < count; i++) {
      const seed = taskSeed(split, i);
      let problem = '';
      const house = generateHousehold(seed, types, (h) => contentSplit((problem = householdProblem(h))) === split, options.household ?? 'standard');
      const logic = new GameLogic(householdGame(house, problem), `generated seed ${seed}`);
      const file = withWalkthrough(logic);
      const traj = householdTrajData(house);
      const p = traj.pddl_params;
      const dir = join(
        resolve(out),
        folder,
        `${traj.task_type}-${String(p.object_target)}-${String(p.parent_target || p.toggle_target)}-${seed}`,
        `trial_${seed}`,
      );
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'game.tw-pddl'), JSON.stringify(file));
      writeFileSync(join(dir, 'traj_data.json'), JSON.stringify({ ...traj, lamer: { seed } }, null, 2) + '\n');
      written.push(dir);
    }
  }
  return written;
}
