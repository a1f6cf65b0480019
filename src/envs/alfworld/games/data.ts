// Games from a folder laid out as ALFWorld's downloads are (`json_2.1.1/<split>/<task>-.../trial_*/`), collected by
// ALFWorld's rules (AlfredTWEnv.collect_game_files): folders holding traj_data.json, except those whose path names
// `movable` or `Sliced`, of an allowed task type, with a game.tw-pddl whose `solvable` is true. Unlike ALFWorld (which
// takes os.walk's file-system order), games are ordered by sorted path, so a list is the same on every machine.
// Each game is named by content: the SHA-256 of its problem (what makes two games the same task) and of its file.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { LamerError } from '../../../errors.js';
import { readRegularBytes, readRegularFile } from '../../../util/fs.js';
import { sha256 } from '../../../util/hash.js';
import { readGameFile, type GameFile } from '../engine/game.js';
import { MAX_GAME_FILE_BYTES, MAX_TRAJ_DATA_BYTES } from '../engine/limits.js';
import { isTaskType, type TaskType } from './tasks.js';

export interface GameEntry {
  /** The game's folder, relative to the data folder, with `/` separators. */
  path: string;
  /** Absolute path of the game.tw-pddl file. */
  file: string;
  taskType: TaskType;
  /** SHA-256 of the problem text: the game's content (two games with the same problem are the same task). */
  problemHash: string;
  /** SHA-256 of the game file's bytes. */
  fileHash: string;
  /** The grammar's version (grammarVersion). */
  grammar: string;
}

export interface Collection {
  games: GameEntry[];
  /** Folders passed over, by reason (ALFWorld's skips, and missing or unreadable files). */
  skipped: Record<string, number>;
}

/**
 * The grammar's version as far as its text tells: `2.1.1` (`put {o} in/on {r}`, no help) or `2.1.2+` (`move {o} to
 * {r}` and a help action; 2.1.2 and 2.1.3 share one grammar and differ in their regenerated data), then the SHA-256
 * of the grammar with the task sentence taken out (the same for every game of one release).
 */
export function grammarVersion(grammar: string): string {
  const version =
    /action\s+help\s*\{/.test(grammar) && /move \{o\} to \{r\}/.test(grammar) ? '2.1.2+' : /put \{o\} in\/on \{r\}/.test(grammar) ? '2.1.1' : 'unknown';
  const generic = grammar.replace(/Your task is to: [^"\n]*/g, 'Your task is to: TASK');
  return `${version} ${sha256(generic).slice(0, 16)}`;
}

/** Folders under `root` (any depth), sorted by path, that hold `marker`. */
export function foldersWith(root: string, marker: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      throw new LamerError('E_ENV', `cannot read the folder ${dir}: ${(e as Error).message}`);
    }
    if (entries.some((e) => e.name === marker && !e.isDirectory())) out.push(dir);
    for (const e of entries) if (e.isDirectory()) walk(join(dir, e.name));
  };
  walk(root);
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The task type of a game folder from its traj_data.json (a regular file of at most MAX_TRAJ_DATA_BYTES), or an error text. */
export function trajTaskType(folder: string): TaskType | string {
  try {
    const text = readRegularFile(join(folder, 'traj_data.json'), 'E_ENV', MAX_TRAJ_DATA_BYTES);
    const t = (JSON.parse(text) as { task_type?: unknown } | null)?.task_type;
    return isTaskType(t) ? t : `traj_data.json task_type ${JSON.stringify(t)} is none of the six`;
  } catch (e) {
    return `traj_data.json unreadable (${(e as Error).message.split('\n')[0]})`;
  }
}

/**
 * Reads a game file, checked (E_ENV naming the file when it is not one): a regular file of at most
 * MAX_GAME_FILE_BYTES, read only then (a named pipe or a device is refused before reading; E_IO when it cannot be
 * read).
 */
export function loadGameFile(file: string): { game: GameFile; bytes: Buffer } {
  const bytes = readRegularBytes(file, 'E_ENV', MAX_GAME_FILE_BYTES);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8')) as unknown;
  } catch (e) {
    throw new LamerError('E_ENV', `${file}: not JSON (${(e as Error).message})`);
  }
  return { game: readGameFile(json, file), bytes };
}

/** The games of the given split folders under `dataDir` (e.g. ['train']), by ALFWorld's rules (file comment). */
export function collectGames(dataDir: string, splits: readonly string[], taskTypes: readonly TaskType[]): Collection {
  const root = resolve(dataDir);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new LamerError('E_ENV', `alfworld option dataDir: ${root} is not a folder; point it at an ALFWorld download's json_2.1.1 folder`);
  }
  const games: GameEntry[] = [];
  const skipped: Record<string, number> = {};
  const skip = (why: string) => (skipped[why] = (skipped[why] ?? 0) + 1);
  for (const split of splits) {
    const dir = resolve(root, split);
    // Inside by whole path segments: `../d1x/train` under `.../d1` starts with the text of `.../d1` but is not in it.
    const rel = relative(root, dir);
    const inside = rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
    if (!inside || !existsSync(dir) || !statSync(dir).isDirectory()) {
      throw new LamerError('E_ENV', `alfworld: the split folder ${JSON.stringify(split)} is not a folder under ${root} (e.g. train, valid_seen, valid_unseen)`);
    }
    for (const folder of foldersWith(dir, 'traj_data.json')) {
      const rel = relative(root, folder).split(sep).join('/');
      if (rel.includes('movable') || rel.includes('Sliced')) {
        skip('movable or Sliced');
        continue;
      }
      const type = trajTaskType(folder);
      if (!isTaskType(type)) {
        skip(type);
        continue;
      }
      if (!taskTypes.includes(type)) {
        skip('task type not asked for');
        continue;
      }
      const file = join(folder, 'game.tw-pddl');
      if (!existsSync(file)) {
        skip('no game.tw-pddl');
        continue;
      }
      let loaded: { game: GameFile; bytes: Buffer };
      try {
        loaded = loadGameFile(file);
      } catch {
        skip('game.tw-pddl unreadable');
        continue;
      }
      if (loaded.game.solvable === undefined) {
        skip('no solvable key');
        continue;
      }
      if (!loaded.game.solvable) {
        skip('unsolvable');
        continue;
      }
      games.push({
        path: rel,
        file,
        taskType: type,
        problemHash: sha256(loaded.game.pddl_problem),
        fileHash: sha256(loaded.bytes),
        grammar: grammarVersion(loaded.game.grammar),
      });
    }
  }
  return { games, skipped };
}
