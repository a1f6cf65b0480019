// Sokoban prompt texts (SPEC §2, §8). The framing (memory, trial line, trajectory) is common to all environments;
// this file holds only what is Sokoban's own: rules, answer format, and the compact board form; and, for the `paper`
// style, how LaMer's Sokoban manager fills its templates.

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
import { SYMBOLS } from './solver.js';

export interface SokobanPromptSettings {
  width: number;
  height: number;
  boxes: number;
  movesPerTurn: number;
  maxMoves: number;
  maxTurns: number;
}

export function sokobanRules(s: SokobanPromptSettings): string {
  return [
    `You are an expert agent playing Sokoban on a ${s.height}x${s.width} grid with ${s.boxes} box(es).`,
    'Symbols: # wall, _ floor, O target, X box, √ box on a target, P you (the player), S you standing on a target.',
    'Rows are numbered from the top; columns count from the left.',
    'Goal: push every box onto a target.',
    'Rules: you move up, down, left or right. Walking into a box pushes it one cell if the cell behind it is free',
    '(floor or target); you cannot pull a box, push two boxes at once, or walk through walls. A box pushed into a',
    'corner, or against a wall with no target along it, is stuck for good and ends the episode.',
    `Rewards: each move -0.1, a box pushed onto a target +1, off a target -1, all boxes placed +10.`,
    `Each turn you give ${s.movesPerTurn} moves; the episode ends after ${s.maxMoves} moves or ${s.maxTurns} turns.`,
  ].join('\n');
}

export function sokobanAnswerFormat(s: SokobanPromptSettings): string {
  return (
    `First reason about where each box must go and which moves get it there. Then give your next ${s.movesPerTurn}` +
    ` moves, separated by commas, inside <action> and </action>, for example: <action>up, left, left</action>`
  );
}

const REFLECT_HINT = 'Name the box that got stuck (or the moves that were wasted) and write the sequence of moves to try from the start.';

/**
 * Compact board: rows without their numbers, cells space-separated, rows joined by ` / `, then where the pieces are
 * as cells `(r, c)` (1-based, counted in the picture): `; P (r, c)` for the player, `X` for each box off a target,
 * `O` for each free target (also under the player), `√` for each box on one. A tiny model reads "the box is below
 * me" from two cell tokens next to the answer far more easily than by locating symbols in the picture; the picture
 * stays for the walls.
 */
export const compactSokobanBoard: CompactObservation = (text) => {
  const rows = text
    .split('\n')
    .map((line) => line.replace(/^\s*\d+\s*:\s*/, '').trim())
    .filter((line) => line.length > 0);
  const player: string[] = [];
  const boxes: string[] = [];
  const targets: string[] = [];
  const placed: string[] = [];
  rows.forEach((row, r) =>
    row.split(/\s+/).forEach((symbol, c) => {
      const cell = `(${r + 1}, ${c + 1})`;
      if (symbol === SYMBOLS.player || symbol === SYMBOLS.playerOnTarget) player.push(cell);
      if (symbol === SYMBOLS.box) boxes.push(cell);
      if (symbol === SYMBOLS.target || symbol === SYMBOLS.playerOnTarget) targets.push(cell);
      if (symbol === SYMBOLS.boxOnTarget) placed.push(cell);
    }),
  );
  const where = [
    ...player.map((c) => `${SYMBOLS.player} ${c}`),
    ...boxes.map((c) => `${SYMBOLS.box} ${c}`),
    ...targets.map((c) => `${SYMBOLS.target} ${c}`),
    ...placed.map((c) => `${SYMBOLS.boxOnTarget} ${c}`),
  ];
  const picture = rows.join(' / ');
  return where.length > 0 ? `${picture} ; ${where.join(' ')}` : picture;
};

export function sokobanPlayPrompt(input: PlayPromptInput, s: SokobanPromptSettings): string {
  return composePlayPrompt({
    input,
    rules: sokobanRules(s),
    answerFormat: sokobanAnswerFormat(s),
    compactTag: 'sok',
    compactObservation: compactSokobanBoard,
  });
}

export function sokobanReflectPrompt(input: ReflectPromptInput, s: SokobanPromptSettings): string {
  return composeReflectPrompt({
    input,
    rules: sokobanRules(s),
    reflectHint: REFLECT_HINT,
    compactTag: 'sok',
    compactObservation: compactSokobanBoard,
  });
}

// ---- promptStyle `paper`: LaMer's Sokoban templates (read from the user's LaMer checkout) ----

/** The constants of LaMer's sokoban/prompt.py that the paper prompts fill. */
export const SOKOBAN_PAPER_TEMPLATES = ['SOKOBAN_PLAY_PROMPT', 'SOKOBAN_REFLECT_PROMPT', ...MEMORY_TEMPLATES, ...CURRENT_TRAJECTORY_TEMPLATES] as const;

/** LaMer's prompt spells the number of moves per turn. */
const COUNT_WORDS = ['ONE', 'TWO', 'THREE', 'FOUR', 'FIVE'];

/**
 * The play prompt as LaMer's Sokoban environment manager builds it: the play template with the initial room, the
 * memory of earlier trials (reflections, trajectories or both) and the current trial's history, stripped.
 */
export function sokobanPaperPlayPrompt(input: PlayPromptInput, t: LamerTemplates, movesPerTurn: number): string {
  const where = t.file;
  const count = COUNT_WORDS[movesPerTurn - 1];
  if (count === undefined) {
    throw new LamerError('E_ENV', `sokoban: LaMer's prompt spells 1 to 5 moves per turn; movesPerTurn is ${movesPerTurn}`);
  }
  const fields = { init_observation: input.initial.text, ...lamerPlayParts(input, t.templates, GRID_PLAY_HISTORY, where), num_actions_per_turn: count };
  return pyStrip(pyFormat(t.templates.SOKOBAN_PLAY_PROMPT, fields, `${where} SOKOBAN_PLAY_PROMPT`));
}

/** The reflect prompt as LaMer builds it: the initial room and the failed trial's history (7 observations), stripped. */
export function sokobanPaperReflectPrompt(input: ReflectPromptInput, t: LamerTemplates): string {
  const where = t.file;
  const fields = { init_observation: input.initial.text, current_trajectory: lamerReflectTrajectory(input, t.templates, GRID_REFLECT_HISTORY, where) };
  return pyStrip(pyFormat(t.templates.SOKOBAN_REFLECT_PROMPT, fields, `${where} SOKOBAN_REFLECT_PROMPT`));
}
