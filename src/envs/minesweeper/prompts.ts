// MineSweeper prompt texts (SPEC §2, §8): rules, answer format and the compact board form; the framing (memory,
// trial line, trajectory) is common to all environments. For the `paper` style: how LaMer's MineSweeper manager fills
// its templates.

import { LamerError } from '../../errors.js';
import { composePlayPrompt, composeReflectPrompt, type CompactObservation } from '../common/framing.js';
import {
  CURRENT_TRAJECTORY_TEMPLATES,
  GRID_PLAY_HISTORY,
  GRID_REFLECT_HISTORY,
  MEMORY_TEMPLATES,
  lamerPlayParts,
  lamerReflectTrajectory,
  type LamerTemplates,
} from '../common/paper-prompts.js';
import { pyFormat, pyStrip } from '../common/python.js';
import type { PlayPromptInput, ReflectPromptInput } from '../types.js';

export interface MineSweeperPromptSettings {
  rows: number;
  cols: number;
  mines: number;
  maxTurns: number;
  /** Compact board form (MineSweeperOptions.compactBoard); default `grid`. */
  compactBoard?: 'grid' | 'cells' | 'lists';
}

export function mineSweeperRules(s: MineSweeperPromptSettings): string {
  return [
    `You are an expert agent playing MineSweeper on a ${s.rows}x${s.cols} board with ${s.mines} hidden mines.`,
    'Symbols: ? unopened cell, . opened cell with no mine around it, 1-8 opened cell showing how many of its 8',
    'neighbours are mines. Rows and columns are numbered from 1, starting at the top left.',
    'Goal: open every cell that is not a mine.',
    'Rules: each turn you open one cell. Opening a mine ends the game. Opening a cell with no mine around it also',
    'opens its neighbours, spreading across the blank area. One cell is already opened for you at the start.',
    'Rewards: +10 for opening every safe cell, -0.1 for a mine, +0.5 for opening one cell, +2 for opening several at',
    `once, -1 for a cell that is already open, off the board, or an unreadable answer. You have ${s.maxTurns} turns.`,
  ].join('\n');
}

export function mineSweeperAnswerFormat(): string {
  return (
    'First reason about which unopened cells the numbers prove safe, and which are mines. Then give the one cell to' +
    ' open as (row, col) inside <action> and </action>, for example: <action>(2, 3)</action>'
  );
}

const REFLECT_HINT = 'Say where the mine you hit was, which cells turned out safe, and the order of cells to open next time.';

/** Compact board: `Row r:` prefixes dropped, rows joined by ` / `; a message line (e.g. a mine hit) stays last. */
export const compactMineBoard: CompactObservation = (text) =>
  text
    .split('\n')
    .map((line) => line.replace(/^\s*Row\s+\d+\s*:\s*/, '').trim())
    .filter((line) => line.length > 0)
    .join(' / ');

/**
 * Compact board naming every cell: `(r, c)` followed by its symbol, with no space between cells (each cell name is
 * one token of the compact tokenizer), e.g. `(1, 1)?(1, 2).(1, 3)1`; a message line stays last after ` / `.
 */
export const compactMineCells: CompactObservation = (text) => {
  const { cells, messages } = boardCells(text);
  return [cells.map((c) => `${c.name}${c.symbol}`).join(''), ...messages].join(' / ');
};

/** The cells of a rendered board (`Row r: ...` lines) by name and symbol, in reading order, and its other lines. */
function boardCells(text: string): { cells: { name: string; symbol: string }[]; messages: string[] } {
  const cells: { name: string; symbol: string }[] = [];
  const messages: string[] = [];
  for (const line of text.split('\n')) {
    const row = /^\s*Row\s+(\d+)\s*:\s*(.*)$/.exec(line);
    if (row) {
      row[2]
        .trim()
        .split(/\s+/)
        .forEach((symbol, c) => cells.push({ name: `(${row[1]}, ${c + 1})`, symbol }));
    } else if (line.trim().length > 0) {
      messages.push(line.trim());
    }
  }
  return { cells, messages };
}

/**
 * Compact board as two lists: the opened cells that show a number, each name followed by its number, then `closed:`
 * and the unopened cells (blank opened cells are left out: they say nothing a number does not), e.g.
 * `(2, 3)1(3, 3)2 closed: (3, 4)(4, 4)`. Every cell of the closed list is a move that opens something, so a model
 * that copies one of them never wastes a turn on an open cell; a message line stays last after ` / `.
 */
export const compactMineLists: CompactObservation = (text) => {
  const { cells, messages } = boardCells(text);
  const numbers = cells.filter((c) => c.symbol !== '?' && c.symbol !== '.').map((c) => `${c.name}${c.symbol}`);
  const closed = cells.filter((c) => c.symbol === '?').map((c) => c.name);
  return [`${numbers.join('')} closed: ${closed.join('')}`, ...messages].join(' / ');
};

function compactBoardOf(s: MineSweeperPromptSettings): CompactObservation {
  return s.compactBoard === 'cells' ? compactMineCells : s.compactBoard === 'lists' ? compactMineLists : compactMineBoard;
}

export function mineSweeperPlayPrompt(input: PlayPromptInput, s: MineSweeperPromptSettings): string {
  return composePlayPrompt({
    input,
    rules: mineSweeperRules(s),
    answerFormat: mineSweeperAnswerFormat(),
    compactTag: 'mine',
    compactObservation: compactBoardOf(s),
  });
}

export function mineSweeperReflectPrompt(input: ReflectPromptInput, s: MineSweeperPromptSettings): string {
  return composeReflectPrompt({
    input,
    rules: mineSweeperRules(s),
    reflectHint: REFLECT_HINT,
    compactTag: 'mine',
    compactObservation: compactBoardOf(s),
  });
}

// ---- promptStyle `paper`: LaMer's MineSweeper templates (read from the user's LaMer checkout) ----

/** The constants of LaMer's minesweeper/prompt.py that the paper prompts fill. */
export const MINESWEEPER_PAPER_TEMPLATES = [
  'MINESWEEPER_PLAY_PROMPT',
  'MINESWEEPER_REFLECT_PROMPT',
  ...MEMORY_TEMPLATES,
  ...CURRENT_TRAJECTORY_TEMPLATES,
] as const;

/** LaMer's templates describe a square board by one size. */
function boardSize(s: MineSweeperPromptSettings): number {
  if (s.rows !== s.cols) {
    throw new LamerError('E_ENV', `minesweeper: LaMer's prompt describes a square board; rows ${s.rows} and cols ${s.cols} differ`);
  }
  return s.rows;
}

/** The play prompt as LaMer's MineSweeper environment manager builds it, stripped. */
export function mineSweeperPaperPlayPrompt(input: PlayPromptInput, t: LamerTemplates, s: MineSweeperPromptSettings): string {
  const where = t.file;
  const fields = {
    board_size: boardSize(s),
    n_mines: s.mines,
    init_observation: input.initial.text,
    ...lamerPlayParts(input, t.templates, GRID_PLAY_HISTORY, where),
  };
  return pyStrip(pyFormat(t.templates.MINESWEEPER_PLAY_PROMPT, fields, `${where} MINESWEEPER_PLAY_PROMPT`));
}

/** The reflect prompt as LaMer builds it: the first board and the failed trial's history (7 boards), stripped. */
export function mineSweeperPaperReflectPrompt(input: ReflectPromptInput, t: LamerTemplates, s: MineSweeperPromptSettings): string {
  const where = t.file;
  const current = lamerReflectTrajectory(input, t.templates, GRID_REFLECT_HISTORY, where);
  const fields = { board_size: boardSize(s), n_mines: s.mines, init_observation: input.initial.text, current_trajectory: current };
  return pyStrip(pyFormat(t.templates.MINESWEEPER_REFLECT_PROMPT, fields, `${where} MINESWEEPER_REFLECT_PROMPT`));
}
