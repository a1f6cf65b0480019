// Prompt style `paper`: LaMer's own prompt templates. Their text is not part of lamer: an environment reads the
// template constants at run time from a LaMer checkout the user points to (the env option `lamerSource`), from
// `agent_system/environments/<env>/prompt.py`, and fills them the way LaMer's environment managers do. This file holds
// what the four environments share: finding and reading the templates (the Python reader and `str.format` are in
// python.ts), the history text of LaMer's `SimpleMemory.fetch`, the current-trajectory and memory selection of
// `parse_current_trajectory` / `parse_reflection`, and the file's identity for the run's records.

import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LamerError } from '../../errors.js';
import { readRegularFile } from '../../util/fs.js';
import { sha256 } from '../../util/hash.js';
import { pyFormat, readPythonStrings } from './python.js';
import type { MemoryMode, PastEpisode, PlayPromptInput, ReflectPromptInput, TrajectoryStep } from '../types.js';

/** The environment folders of LaMer's `agent_system/environments/`. */
export type LamerEnvFolder = 'sokoban' | 'minesweeper' | 'webshop' | 'alfworld';

/** prompt.py files are a few kB; anything far larger is not one. */
const MAX_PROMPT_FILE_BYTES = 4 * 2 ** 20;

export interface LamerTemplates {
  /** The prompt.py that was read (absolute path). */
  file: string;
  /** SHA-256 of its bytes, recorded by runs (provenance). */
  sha256: string;
  /** The requested constants by name. */
  templates: Record<string, string>;
}

const cache = new Map<string, { mtimeMs: number; size: number; sha256: string; strings: Map<string, string> }>();

/**
 * Where LaMer's prompt.py of `env` is under `source`: the file itself, a folder holding prompt.py, or a LaMer checkout
 * (its `agent_system/environments/<env>/prompt.py`).
 */
export function lamerPromptFile(source: string, env: LamerEnvFolder): string {
  if (typeof source !== 'string' || source.length === 0) {
    throw new LamerError('E_ENV', `${env} option lamerSource: expected the path of a LaMer checkout, found ${JSON.stringify(source)}`);
  }
  const path = resolve(source);
  const candidates = [path, join(path, 'prompt.py'), join(path, 'agent_system', 'environments', env, 'prompt.py')];
  for (const c of candidates) {
    if (existsSync(c) && statSync(c).isFile()) return c;
  }
  throw new LamerError(
    'E_ENV',
    `${env} option lamerSource: no prompt.py at ${path} (looked for ${candidates.slice(1).join(' and ')}); promptStyle 'paper' reads ` +
      `LaMer's templates from a checkout of github.com/mlbio-epfl/LaMer: clone it and set env.options.lamerSource to its folder`,
  );
}

/** Reads the named string constants of `env`'s LaMer prompt.py; a missing constant names the file and what it lacks. */
export function loadLamerTemplates(source: string, env: LamerEnvFolder, names: readonly string[]): LamerTemplates {
  const file = lamerPromptFile(source, env);
  const st = statSync(file);
  let entry = cache.get(file);
  if (entry === undefined || entry.mtimeMs !== st.mtimeMs || entry.size !== st.size) {
    const text = readRegularFile(file, 'E_ENV', MAX_PROMPT_FILE_BYTES);
    entry = { mtimeMs: st.mtimeMs, size: st.size, sha256: sha256(text), strings: readPythonStrings(text, file) };
    cache.set(file, entry);
  }
  const missing = names.filter((n) => !entry.strings.has(n));
  if (missing.length > 0) {
    throw new LamerError(
      'E_ENV',
      `${file}: no string constant ${missing.join(', ')} at the top level (LaMer's ${env} prompt.py defines them; is lamerSource a LaMer checkout?)`,
    );
  }
  const templates: Record<string, string> = {};
  for (const n of names) templates[n] = entry.strings.get(n) as string;
  return { file, sha256: entry.sha256, templates };
}

// ---- LaMer's history and memory text ----

export interface LamerHistoryOptions {
  /** Steps shown (the most recent ones); LaMer's `history_length`, 7. */
  historyLength: number;
  /** Of those, the most recent ones whose observation is shown in full; LaMer's `obs_length` (2 in play, 7 to reflect). */
  obsLength: number;
}

/** The action of a step as LaMer's memory recorded it. */
export function lamerAction(step: TrajectoryStep): string {
  return step.historyAction ?? step.action;
}

/**
 * The text of LaMer's `SimpleMemory.fetch`: the last `historyLength` steps, numbered by their place in the episode
 * (from 1); the most recent `obsLength` show their observation after `Observation k:` and a newline, the earlier ones
 * `Observation k: ...`; steps are joined by newlines.
 */
export function lamerHistory(steps: readonly { action: string; observation: string }[], options: LamerHistoryOptions): string {
  const recent = steps.slice(Math.max(0, steps.length - options.historyLength));
  const first = steps.length - recent.length;
  return recent
    .map((s, j) => {
      const k = first + j + 1;
      return recent.length - j > options.obsLength
        ? `Action ${k}: ${s.action}\nObservation ${k}: ...`
        : `Action ${k}: ${s.action}\nObservation ${k}:\n${s.observation}`;
    })
    .join('\n');
}

/** `lamerHistory` of a trial's steps, each action as LaMer's memory recorded it. */
export function lamerStepsHistory(steps: readonly TrajectoryStep[], options: LamerHistoryOptions): string {
  return lamerHistory(
    steps.map((s) => ({ action: lamerAction(s), observation: s.observation })),
    options,
  );
}

/** The windows of LaMer's Sokoban and MineSweeper managers: 7 steps, 2 observations in play, all 7 to reflect. */
export const GRID_PLAY_HISTORY: LamerHistoryOptions = Object.freeze({ historyLength: 7, obsLength: 2 });
export const GRID_REFLECT_HISTORY: LamerHistoryOptions = Object.freeze({ historyLength: 7, obsLength: 7 });

/** The three current-trajectory templates of a LaMer prompt.py. */
export const CURRENT_TRAJECTORY_TEMPLATES = ['CURR_TRAJ_AT_TRAJ1', 'CURR_TRAJ_AT_TRAJ2toN', 'TRAJ_2toN_INIT'] as const;

/**
 * `parse_current_trajectory`: nothing at the first turn of the first trial; the trajectory so far in the first trial;
 * "on trial #k, from the initial state" at the first turn of a later trial, and trial #k with the trajectory after it.
 * `trial` is 0-based; `turn` is the number of turns already taken.
 */
export function lamerCurrentTrajectory(templates: Record<string, string>, turn: number, trial: number, trajectory: string, where: string): string {
  if (trial === 0) {
    return turn === 0 ? '' : pyFormat(templates.CURR_TRAJ_AT_TRAJ1, { current_trajectory: trajectory }, `${where} CURR_TRAJ_AT_TRAJ1`);
  }
  return turn === 0
    ? pyFormat(templates.TRAJ_2toN_INIT, { traj_idx: trial + 1 }, `${where} TRAJ_2toN_INIT`)
    : pyFormat(templates.CURR_TRAJ_AT_TRAJ2toN, { traj_idx: trial + 1, current_trajectory: trajectory }, `${where} CURR_TRAJ_AT_TRAJ2toN`);
}

/** The three memory templates of the Sokoban, MineSweeper and ALFWorld prompt.py files. */
export const MEMORY_TEMPLATES = ['PAST_TRAJECTORY_AND_REFLECTION_TEMPLATE', 'HISTORY_ONLY_TEMPLATE', 'REFLECTION_ONLY_TEMPLATE'] as const;

/**
 * `parse_reflection` of the Sokoban, MineSweeper and ALFWorld prompts: a newline in the first trial (or with nothing
 * remembered), else one block per earlier trial from the template of the memory mode. `pastTrajectory(k)` is the
 * trajectory text of the k-th earlier episode.
 */
export function lamerMemory(
  templates: Record<string, string>,
  trial: number,
  past: readonly PastEpisode[],
  mode: MemoryMode,
  pastTrajectory: (episode: PastEpisode) => string,
  where: string,
): string {
  if (trial === 0 || past.length === 0) return '\n';
  return past
    .map((p) => {
      const k = p.episode + 1;
      if (mode === 'history_and_reflection') {
        return pyFormat(
          templates.PAST_TRAJECTORY_AND_REFLECTION_TEMPLATE,
          { traj_idx: k, past_trajectory: pastTrajectory(p), reflection: p.reflection },
          `${where} PAST_TRAJECTORY_AND_REFLECTION_TEMPLATE`,
        );
      }
      if (mode === 'history_only') {
        return pyFormat(templates.HISTORY_ONLY_TEMPLATE, { traj_idx: k, past_trajectory: pastTrajectory(p) }, `${where} HISTORY_ONLY_TEMPLATE`);
      }
      return pyFormat(templates.REFLECTION_ONLY_TEMPLATE, { traj_idx: k, reflection: p.reflection }, `${where} REFLECTION_ONLY_TEMPLATE`);
    })
    .join('');
}

/**
 * The two variable parts of a play prompt of the Sokoban, MineSweeper and ALFWorld managers: the memory of earlier
 * trials (`past_trajectories_reflections`) and the current trial's history (`current_trajectory`); `history` gives
 * both the past and the current trajectories' windows.
 */
export function lamerPlayParts(
  input: PlayPromptInput,
  templates: Record<string, string>,
  history: LamerHistoryOptions,
  where: string,
): { past_trajectories_reflections: string; current_trajectory: string } {
  const memory = lamerMemory(
    templates,
    input.episode,
    input.past ?? [],
    input.memoryMode ?? 'reflection_only',
    (p) => lamerStepsHistory(p.steps, history),
    where,
  );
  const trajectory = input.steps.length > 0 ? lamerStepsHistory(input.steps, history) : '';
  return { past_trajectories_reflections: memory, current_trajectory: lamerCurrentTrajectory(templates, input.steps.length, input.episode, trajectory, where) };
}

/** The current trajectory of a reflect prompt: the failed trial's history under its trial line. */
export function lamerReflectTrajectory(input: ReflectPromptInput, templates: Record<string, string>, history: LamerHistoryOptions, where: string): string {
  return lamerCurrentTrajectory(templates, input.steps.length, input.episode, lamerStepsHistory(input.steps, history), where);
}

/** The error of an environment asked for `paper` prompts without a LaMer checkout to read them from. */
export function noPaperTemplates(env: string): LamerError {
  return new LamerError(
    'E_ENV',
    `${env}: promptStyle 'paper' reads LaMer's prompt templates from a LaMer checkout: set env.options.lamerSource to a clone of ` +
      `github.com/mlbio-epfl/LaMer (or use promptStyle 'full')`,
  );
}

/** The `lamerSource` option of an environment: a non-empty path, or null when absent. */
export function lamerSourceOption(env: string, options: Record<string, unknown> | undefined): string | null {
  const value = options?.lamerSource;
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0) {
    throw new LamerError('E_ENV', `${env} option lamerSource: expected the path of a LaMer checkout, found ${JSON.stringify(value)}`);
  }
  return value;
}
