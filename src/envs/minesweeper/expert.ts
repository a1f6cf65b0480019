// MineSweeper players. `MineSweeperExpert` is told the mines: it always opens the safe cell that opens the most, so it
// wins every board (within the turn limit on the default sizes; the tests check that). `MineSweeperLogicPlayer` sees
// only the board: it opens a cell proven safe by single-cell deductions, else guesses with a seeded Rng, and can
// remember mines and safe cells from earlier episodes of a trial (the "memory" of SPEC §10).
// Both write the same scripted reflection: only what the failed episode showed (the mine hit, the cells opened
// safely), so a model trained on these reflections learns to carry observed facts, not to invent them.

import { Rng } from '../../util/rng.js';
import type { Expert, PromptStyle, TrajectoryStep } from '../types.js';
import type { MineSweeperEnv } from './env.js';
import { parseCellAction } from './parse.js';
import { allSafeOpened, bestKnownClick, cellLabel, deduce, reveal } from './solver.js';

// Compact prompts (tiny models trained from scratch) ask for the action alone; full prompts for reasoning first.
function answer(reason: string, cols: number, cell: number, style: PromptStyle = 'full'): string {
  const action = `<action>${cellLabel(cols, cell)}</action>`;
  return style === 'compact' ? action : `${reason}\n${action}`;
}

/** What a failed episode showed, replayed from the initial board: the mine hit and the cells clicked safely. */
export interface EpisodeFacts {
  /** Index of the mine hit, or -1 when the episode ran out of turns. */
  mineHit: number;
  /** Cells opened by a click, in click order (repeats and bad actions left out). */
  safeClicks: number[];
  /** Turns that opened nothing (already open, off the board, unparsable). */
  wasted: number;
}

export function mineSweeperEpisodeFacts(env: MineSweeperEnv, steps: readonly TrajectoryStep[]): EpisodeFacts {
  const { board } = env;
  const { rows, cols } = env.settings;
  const opened = new Uint8Array(rows * cols);
  reveal(board, opened, env.firstReveal);
  const safeClicks: number[] = [];
  let mineHit = -1;
  let wasted = 0;
  for (const step of steps) {
    const cell = parseCellAction(step.action);
    if (cell === null || cell.row < 1 || cell.col < 1 || cell.row > rows || cell.col > cols) {
      wasted++;
      continue;
    }
    const i = (cell.row - 1) * cols + (cell.col - 1);
    if (opened[i] === 1) {
      wasted++;
      continue;
    }
    if (board.mines[i] === 1) {
      mineHit = i;
      break;
    }
    reveal(board, opened, i);
    safeClicks.push(i);
    if (allSafeOpened(board, opened)) break;
  }
  return { mineHit, safeClicks, wasted };
}

/** The scripted reflection: only the facts of the failed episode (mineSweeperEpisodeFacts) and, in full style, a plan. */
export function mineSweeperReflectionText(env: MineSweeperEnv, steps: readonly TrajectoryStep[], style: PromptStyle = 'full'): string {
  const { cols } = env.settings;
  const { mineHit, safeClicks, wasted } = mineSweeperEpisodeFacts(env, steps);
  const safeList = safeClicks.length > 0 ? safeClicks.map((i) => cellLabel(cols, i)).join(', ') : 'none';
  if (style === 'compact') {
    // Terse form for tiny models: the two facts that carry over to the next episode.
    return `${mineHit >= 0 ? `mine ${cellLabel(cols, mineHit)}` : 'out of turns'}; safe ${safeList}`;
  }
  const parts: string[] = [];
  if (mineHit >= 0) parts.push(`mine at ${cellLabel(cols, mineHit)}; safe cells: ${safeList}.`);
  else parts.push(`no mine hit but turns ran out (${wasted} wasted); safe cells: ${safeList}.`);
  parts.push(
    mineHit >= 0
      ? `Plan: open the safe cells first, never ${cellLabel(cols, mineHit)}, then only cells the numbers prove safe.`
      : 'Plan: open the safe cells first, prefer cells that open blank areas, never repeat an open cell.',
  );
  return parts.join(' ');
}

export interface ExpertOptions {
  /** `compact` writes terse reflections for tiny models (the compact prompt style); default `full`. */
  style?: PromptStyle;
}

export class MineSweeperExpert implements Expert {
  readonly style: PromptStyle;

  constructor(
    readonly env: MineSweeperEnv,
    options: ExpertOptions = {},
  ) {
    this.style = options.style ?? 'full';
  }

  act(): string {
    const cols = this.env.settings.cols;
    const cell = bestKnownClick(this.env.board, this.env.openedCells);
    if (cell < 0) return answer('Every safe cell is already open.', cols, 0);
    return answer('This cell is safe and opens the most cells.', cols, cell);
  }

  reflect(steps: TrajectoryStep[]): string {
    const remark = `<remark>${mineSweeperReflectionText(this.env, steps, this.style)}</remark>`;
    return this.style === 'compact' ? remark : `I review the trial.\n${remark}`;
  }
}

/** How the logic player guesses when nothing is proven safe (LogicPlayerOptions.guess). */
export type LogicGuess = 'random' | 'ordered';

export interface LogicPlayerOptions {
  /** Seed of the guesses. */
  seed?: number;
  /** Reflection style, as for MineSweeperExpert. */
  style?: PromptStyle;
  /** Carry mines hit and cells clicked safely into later episodes (call `endEpisode(steps)` between episodes). */
  memory?: boolean;
  /**
   * How it guesses when nothing is proven safe: `random` (seeded, any unopened cell not known to be a mine) or
   * `ordered` (the first such cell in reading order, so a board always gets the same guess and only what the player
   * knows, e.g. a remembered mine, changes it). Default `random`.
   */
  guess?: LogicGuess;
}

export class MineSweeperLogicPlayer implements Expert {
  private readonly rng: Rng;
  private readonly rememberedMines = new Set<number>();
  /** Cells clicked safely in earlier episodes, in click order: what the reflections list, replayed first. */
  private readonly rememberedSafe: number[] = [];
  readonly memory: boolean;
  readonly style: PromptStyle;
  readonly guess: LogicGuess;

  constructor(
    readonly env: MineSweeperEnv,
    options: LogicPlayerOptions = {},
  ) {
    this.rng = new Rng(options.seed ?? 0);
    this.memory = options.memory ?? false;
    this.style = options.style ?? 'full';
    this.guess = options.guess ?? 'random';
  }

  /** The cell this player opens next, from what it sees (and remembers). */
  chooseCell(): number {
    const { rows, cols } = this.env.settings;
    const visible = this.env.visible();
    const known = deduce(rows, cols, visible, this.memory ? this.rememberedMines : []);
    // Memory first: the cells earlier episodes clicked safely, in the order the reflections list them.
    const replay = this.memory ? this.rememberedSafe.find((i) => visible[i] < 0) : undefined;
    if (replay !== undefined) return replay;
    if (known.safe.length > 0) return known.safe[0];
    const mines = new Set([...known.mines, ...(this.memory ? this.rememberedMines : [])]);
    const candidates: number[] = [];
    visible.forEach((v, i) => {
      if (v < 0 && !mines.has(i)) candidates.push(i);
    });
    if (candidates.length === 0) return 0;
    return this.guess === 'ordered' ? candidates[0] : this.rng.pick(candidates);
  }

  act(): string {
    return answer('The numbers shown decide this cell (or it is my best guess).', this.env.settings.cols, this.chooseCell(), this.style);
  }

  /**
   * Remember what a failed episode showed, exactly what its scripted reflection states (the mine hit, the cells
   * clicked safely), so a model imitating this player sees in its prompt everything the player's next moves rely on.
   */
  endEpisode(steps: readonly TrajectoryStep[]): void {
    if (!this.memory) return;
    const { mineHit, safeClicks } = mineSweeperEpisodeFacts(this.env, steps);
    if (mineHit >= 0) this.rememberedMines.add(mineHit);
    for (const cell of safeClicks) if (!this.rememberedSafe.includes(cell)) this.rememberedSafe.push(cell);
  }

  reflect(steps: TrajectoryStep[]): string {
    const remark = `<remark>${mineSweeperReflectionText(this.env, steps, this.style)}</remark>`;
    return this.style === 'compact' ? remark : `I review the trial.\n${remark}`;
  }
}

export function createMineSweeperExpert(env: MineSweeperEnv, options?: ExpertOptions): MineSweeperExpert {
  return new MineSweeperExpert(env, options);
}
