// Prompt style `paper`: LaMer's own prompt templates. Their text is not part of lamer: an environment reads the
// template constants at run time from a LaMer checkout the user points to (the env option `lamerSource`), from
// `agent_system/environments/<env>/prompt.py`, and fills them the way LaMer's environment managers do. This file holds
// what the four environments share: reading the module-level string constants of a Python file, Python's
// `str.format` with named fields, the history text of LaMer's `SimpleMemory.fetch`, the current-trajectory and memory
// selection of `parse_current_trajectory` / `parse_reflection`, and the file's identity for the run's records.

import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LamerError } from '../../errors.js';
import { readRegularFile } from '../../util/fs.js';
import { sha256 } from '../../util/hash.js';
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

// ---- reading Python string constants ----

interface Token {
  kind: 'name' | 'string' | 'op';
  text: string;
  /** For strings: the value. */
  value?: string;
  /** For strings: an f-string (its value needs the code run) or a bytes literal (not text). */
  notText?: boolean;
  /** Column of the token's first character. */
  column: number;
  line: number;
}

const IDENT_START = /[A-Za-z_]/;
const IDENT = /[A-Za-z0-9_]/;

/**
 * The module-level string constants of a Python source: `NAME = '...'`, with any of Python's quotes, prefixes r/u/b,
 * escapes, adjacent literals and parentheses (`NAME = ('a' 'b')`), and an optional annotation (`NAME: str = ...`).
 * Other statements are skipped; f-strings (their value depends on running the code) and bytes are left out.
 */
export function readPythonStrings(text: string, file = 'python source'): Map<string, string> {
  const lines = logicalLines(tokenize(text, file));
  const out = new Map<string, string>();
  for (const toks of lines) {
    if (toks.length < 3 || toks[0].column !== 0 || toks[0].kind !== 'name') continue;
    let i = 1;
    if (toks[i].text === ':') {
      if (toks[i + 1]?.kind !== 'name') continue;
      i += 2;
    }
    if (toks[i]?.text !== '=') continue;
    i++;
    let parens = 0;
    while (toks[i]?.text === '(') {
      parens++;
      i++;
    }
    const parts: Token[] = [];
    while (toks[i]?.kind === 'string') parts.push(toks[i++]);
    while (parens > 0 && toks[i]?.text === ')') {
      parens--;
      i++;
    }
    if (parts.length === 0 || parens !== 0 || i !== toks.length) continue;
    if (parts.some((p) => p.notText)) {
      out.delete(toks[0].text);
      continue;
    }
    out.set(toks[0].text, parts.map((p) => p.value as string).join(''));
  }
  return out;
}

/** Tokens grouped into logical lines: a newline ends one unless brackets are open or a backslash continues it. */
function logicalLines(tokens: Array<Token | 'newline'>): Token[][] {
  const lines: Token[][] = [];
  let current: Token[] = [];
  let depth = 0;
  for (const t of tokens) {
    if (t === 'newline') {
      if (depth === 0 && current.length > 0) {
        lines.push(current);
        current = [];
      }
      continue;
    }
    if (t.kind === 'op' && '([{'.includes(t.text)) depth++;
    if (t.kind === 'op' && ')]}'.includes(t.text)) depth = Math.max(0, depth - 1);
    current.push(t);
  }
  if (current.length > 0) lines.push(current);
  return lines;
}

function tokenize(text: string, file: string): Array<Token | 'newline'> {
  const out: Array<Token | 'newline'> = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '\n') {
      out.push('newline');
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (ch === '\\' && text[i + 1] === '\n') {
      i += 2; // explicit line joining
      line++;
      lineStart = i;
      continue;
    }
    if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\f') {
      i++;
      continue;
    }
    if (ch === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    const column = i - lineStart;
    if (IDENT_START.test(ch)) {
      let j = i;
      while (j < text.length && IDENT.test(text[j])) j++;
      const word = text.slice(i, j);
      if ((text[j] === '"' || text[j] === "'") && /^(?:[rRuUbBfF]|[rR][bBfF]|[bBfF][rR])$/.test(word)) {
        const s = readString(text, j, word.toLowerCase(), file, line);
        out.push({ kind: 'string', text: text.slice(i, s.end), value: s.value, notText: /[fb]/i.test(word), column, line });
        line += s.newlines;
        if (s.newlines > 0) lineStart = text.lastIndexOf('\n', s.end - 1) + 1;
        i = s.end;
        continue;
      }
      out.push({ kind: 'name', text: word, column, line });
      i = j;
      continue;
    }
    if (ch === '"' || ch === "'") {
      const s = readString(text, i, '', file, line);
      out.push({ kind: 'string', text: text.slice(i, s.end), value: s.value, column, line });
      line += s.newlines;
      if (s.newlines > 0) lineStart = text.lastIndexOf('\n', s.end - 1) + 1;
      i = s.end;
      continue;
    }
    out.push({ kind: 'op', text: ch, column, line });
    i++;
  }
  return out;
}

const SIMPLE_ESCAPES: Record<string, string> = { '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** One string literal starting at its opening quote: its value (escapes applied unless raw) and where it ends. */
function readString(text: string, start: number, prefix: string, file: string, line: number): { value: string; end: number; newlines: number } {
  const quote = text[start];
  const triple = text.startsWith(quote.repeat(3), start);
  const delim = triple ? quote.repeat(3) : quote;
  const raw = prefix.includes('r');
  let i = start + delim.length;
  let value = '';
  let newlines = 0;
  for (;;) {
    if (i >= text.length) throw new LamerError('E_ENV', `${file}:${line}: a string literal is not closed`);
    if (text.startsWith(delim, i)) return { value, end: i + delim.length, newlines };
    const ch = text[i];
    if (ch === '\n') {
      if (!triple) throw new LamerError('E_ENV', `${file}:${line}: a string literal is not closed on its line`);
      newlines++;
    }
    if (ch !== '\\') {
      value += ch;
      i++;
      continue;
    }
    const next = text[i + 1];
    if (next === undefined) throw new LamerError('E_ENV', `${file}:${line}: a string literal is not closed`);
    if (raw) {
      // A raw string keeps the backslash and the character after it (which cannot close the string).
      value += ch + next;
      if (next === '\n') newlines++;
      i += 2;
      continue;
    }
    if (next === '\n') {
      newlines++;
      i += 2; // a backslash-newline inside a string continues it
      continue;
    }
    if (next in SIMPLE_ESCAPES) {
      value += SIMPLE_ESCAPES[next];
      i += 2;
      continue;
    }
    const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1, i + 4));
    if (octal) {
      value += String.fromCodePoint(parseInt(octal[0], 8));
      i += 1 + octal[0].length;
      continue;
    }
    const hexLength = next === 'x' ? 2 : next === 'u' ? 4 : next === 'U' ? 8 : 0;
    if (hexLength > 0) {
      const hex = text.slice(i + 2, i + 2 + hexLength);
      if (!new RegExp(`^[0-9a-fA-F]{${hexLength}}$`).test(hex)) {
        throw new LamerError('E_ENV', `${file}:${line}: a \\${next} escape needs ${hexLength} hex digits`);
      }
      value += String.fromCodePoint(parseInt(hex, 16));
      i += 2 + hexLength;
      continue;
    }
    if (next === 'N') throw new LamerError('E_ENV', `${file}:${line}: \\N{...} escapes are not supported in prompt templates`);
    // Python keeps an unknown escape as it is.
    value += ch + next;
    i += 2;
  }
}

// ---- Python's str.format, named fields only ----

/**
 * `template.format(**fields)` as Python computes it for plain named fields: `{name}` replaced, `{{` and `}}` give
 * braces. A field that is not given, or a format spec, conversion, index or attribute (which LaMer's templates do not
 * use), stops with E_ENV naming the template.
 */
export function pyFormat(template: string, fields: Record<string, string | number>, where: string): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const ch = template[i];
    if (ch === '{') {
      if (template[i + 1] === '{') {
        out += '{';
        i += 2;
        continue;
      }
      const close = template.indexOf('}', i);
      if (close < 0) throw new LamerError('E_ENV', `${where}: a '{' has no matching '}'`);
      const name = template.slice(i + 1, close);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        throw new LamerError('E_ENV', `${where}: field {${name}} is not a plain name (formats, conversions and indexes are not supported)`);
      }
      if (!Object.hasOwn(fields, name)) {
        throw new LamerError('E_ENV', `${where}: field {${name}} is not one LaMer fills here (it fills ${Object.keys(fields).join(', ') || 'none'})`);
      }
      out += String(fields[name]);
      i = close + 1;
      continue;
    }
    if (ch === '}') {
      if (template[i + 1] !== '}') throw new LamerError('E_ENV', `${where}: a single '}' (write '}}' for a brace)`);
      out += '}';
      i += 2;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

/** The characters Python's `str.isspace()` accepts. */
const PY_SPACE = '[\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const PY_STRIP = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, 'gu');

/** Python's `str.strip()` with no argument. */
export function pyStrip(text: string): string {
  return text.replace(PY_STRIP, '');
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

/** repr() of a Python str: single quotes unless the text has ' and no ", backslash escapes for control characters. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || (c >= 0x7f && c <= 0xa0) || c === 0xad) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

/** The Python `repr` of a list of strings, as LaMer's memory prints Sokoban's moves: `['up', 'left']`. */
export function pyStringList(items: readonly string[]): string {
  return `[${items.map(pyStrRepr).join(', ')}]`;
}
