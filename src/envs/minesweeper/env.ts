// The MineSweeper environment (SPEC §8): a seeded mine layout and a seeded first reveal (the same for every trial of a
// task), one cell opened per turn, blank cells cascade, and the rewards of SPEC §8.

import { LamerError } from '../../errors.js';
import { checkSeed, intOption, rejectUnknownOptions } from '../common/options.js';
import { contentSplitOfSeed } from '../common/seeds.js';
import { extractAction, extractRemark } from '../common/tags.js';
import type { Environment, Observation, PlayPromptInput, ReflectPromptInput, Reflection, StepResult, TrajectoryStep } from '../types.js';
import { mineSweeperEpisodeFacts } from './expert.js';
import { lamerSourceOption, loadLamerTemplates, noPaperTemplates, type LamerTemplates } from '../common/paper-prompts.js';
import { parseCellAction, parsePaperCellAction, type CellAction } from './parse.js';
import {
  MINESWEEPER_PAPER_TEMPLATES,
  mineSweeperPaperPlayPrompt,
  mineSweeperPaperReflectPrompt,
  mineSweeperPlayPrompt,
  mineSweeperReflectPrompt,
} from './prompts.js';
import { paperLayout } from './paper.js';
import { allSafeOpened, cellLabel, layoutContent, makeBoard, reveal, seededLayout, type MineBoard, type VisibleBoard } from './solver.js';

export interface MineSweeperOptions {
  rows?: number;
  cols?: number;
  mines?: number;
  maxTurns?: number;
  /**
   * How compact prompts show the board: `grid` (the symbols row by row, `? ? 1 . / ...`) or `cells` (each cell's
   * name followed by its symbol, `(1, 1)?(1, 2)?(1, 3)1...`), so a model reads a cell's state next to the one token
   * it answers with instead of counting its way along a row; or `lists` (the cells showing a number, then
   * `closed:` and the unopened cells, `(2, 3)1(3, 3)2 closed: (3, 4)(4, 4)`), where every closed cell named is a move
   * that opens something. Full prompts always show the grid.
   */
  compactBoard?: CompactBoard;
  /**
   * `lamer` (default): lamer's own layouts (held out by content) and its notes after a move. `paper`: the paper's
   * layout for a seed (numpy's `rand` with the first click excluded; src/envs/minesweeper/paper.ts), a seeded first
   * click, LaMer's action rule (a `(row, col)` pair inside the first `<action>` ... `</action>`), the hit mine shown
   * as `*`, and no notes (docs/spec.md §8).
   */
  fidelity?: Fidelity;
  /** A LaMer checkout (or its minesweeper prompt.py) whose templates `promptStyle: 'paper'` fills; null: none. */
  lamerSource?: string | null;
}

export type Fidelity = 'lamer' | 'paper';

/** LaMer's memory records an action without a cell as this. */
const NO_OPERATION = 'no operation';

export type CompactBoard = 'grid' | 'cells' | 'lists';

export type MineSweeperSettings = Required<MineSweeperOptions>;

export const MINESWEEPER_DEFAULTS: MineSweeperSettings = Object.freeze({
  rows: 6,
  cols: 6,
  mines: 3,
  maxTurns: 7,
  compactBoard: 'grid',
  fidelity: 'lamer',
  lamerSource: null,
});

export const MINESWEEPER_REWARDS = Object.freeze({
  win: 10,
  mine: -0.1,
  openOne: 0.5,
  openSeveral: 2.0,
  /** Already open, off the board, or unparsable. */
  other: -1.0,
});

export function mineSweeperSettings(options?: MineSweeperOptions): MineSweeperSettings {
  const o = options as Record<string, unknown> | undefined;
  rejectUnknownOptions('minesweeper', o, Object.keys(MINESWEEPER_DEFAULTS));
  const d = MINESWEEPER_DEFAULTS;
  const rows = intOption('minesweeper', o, 'rows', d.rows, 2, 30);
  const cols = intOption('minesweeper', o, 'cols', d.cols, 2, 30);
  // At least two safe cells: one for the first reveal and one still to open.
  const mines = intOption('minesweeper', o, 'mines', d.mines, 1, rows * cols - 2);
  const maxTurns = intOption('minesweeper', o, 'maxTurns', d.maxTurns, 1, 1000);
  const compactBoard = o?.compactBoard ?? d.compactBoard;
  if (compactBoard !== 'grid' && compactBoard !== 'cells' && compactBoard !== 'lists') {
    throw new LamerError('E_ENV', `minesweeper option compactBoard: expected 'grid', 'cells' or 'lists', found ${JSON.stringify(compactBoard)}`);
  }
  const fidelity = o?.fidelity ?? d.fidelity;
  if (fidelity !== 'lamer' && fidelity !== 'paper') {
    throw new LamerError('E_ENV', `minesweeper option fidelity: expected 'lamer' or 'paper', found ${JSON.stringify(fidelity)}`);
  }
  return { rows, cols, mines, maxTurns, compactBoard, fidelity, lamerSource: lamerSourceOption('minesweeper', o) };
}

interface MineTask {
  board: MineBoard;
  firstReveal: number;
}

export class MineSweeperEnv implements Environment {
  readonly name = 'minesweeper';
  readonly maxTurns: number;
  readonly settings: MineSweeperSettings;
  private task: MineTask | null = null;
  private opened = new Uint8Array(0);
  private turnsTaken = 0;
  private finished = false;
  /** The mine the episode ended on (shown as `*` under fidelity paper), else -1. */
  private exploded = -1;
  /** The last step's action as LaMer's memory records it. */
  private historyAction = NO_OPERATION;

  /** LaMer's templates, read at construction when `lamerSource` is set (promptStyle 'paper'). */
  private readonly paperTemplates: LamerTemplates | null;

  constructor(options?: MineSweeperOptions) {
    this.settings = mineSweeperSettings(options);
    this.maxTurns = this.settings.maxTurns;
    const source = this.settings.lamerSource;
    this.paperTemplates = source === null ? null : loadLamerTemplates(source, 'minesweeper', MINESWEEPER_PAPER_TEMPLATES);
  }

  reset(seed: number): Observation {
    checkSeed('minesweeper', seed);
    const { rows, cols, mines, fidelity } = this.settings;
    // Training seeds get training layouts and evaluation seeds evaluation layouts (held out by content, SPEC §11);
    // the paper's seeds map to the paper's layouts.
    this.task = fidelity === 'paper' ? paperLayout(seed, rows, cols, mines) : seededLayout(seed, rows, cols, mines, contentSplitOfSeed(seed));
    return this.restart();
  }

  /** Start a hand-built task: mine cells (0-based row-major) and the first reveal; for tests and custom boards. */
  load(mineCells: readonly number[], firstReveal: number): Observation {
    const { rows, cols } = this.settings;
    const board = makeBoard(rows, cols, mineCells);
    if (!Number.isInteger(firstReveal) || firstReveal < 0 || firstReveal >= rows * cols || board.mines[firstReveal]) {
      throw new LamerError('E_ENV', `minesweeper.load: first reveal ${firstReveal} must be a safe cell on the board`);
    }
    this.task = { board, firstReveal };
    return this.restart();
  }

  restart(): Observation {
    const task = this.requireTask('restart');
    this.opened = new Uint8Array(task.board.rows * task.board.cols);
    reveal(task.board, this.opened, task.firstReveal);
    this.turnsTaken = 0;
    this.finished = false;
    this.exploded = -1;
    return this.observe();
  }

  step(response: string): StepResult {
    const task = this.requireTask('step');
    if (this.finished) {
      throw new LamerError('E_ENV', 'minesweeper.step: the episode is over; call restart() or reset(seed) first');
    }
    const { rows, cols } = this.settings;
    this.turnsTaken++;
    const outOfTurns = this.turnsTaken >= this.maxTurns;
    const text = typeof response === 'string' ? response : '';
    let cell: CellAction | null;
    let note: string;
    if (this.settings.fidelity === 'paper') {
      const parsed = parsePaperCellAction(text);
      cell = parsed?.cell ?? null;
      this.historyAction = parsed?.shown ?? NO_OPERATION;
      note = 'No (row, col) inside <action>...</action>.';
    } else {
      const actionText = extractAction(text);
      cell = actionText === null ? null : parseCellAction(actionText);
      this.historyAction = cell === null ? NO_OPERATION : `(${cell.row}, ${cell.col})`;
      note = actionText === null ? 'No <action>...</action> found.' : 'No (row, col) found in the action.';
    }
    if (cell === null) {
      return this.result(MINESWEEPER_REWARDS.other, outOfTurns, false, false, note, { error: note }, outOfTurns);
    }
    const label = `(${cell.row}, ${cell.col})`;
    if (cell.row < 1 || cell.col < 1 || cell.row > rows || cell.col > cols) {
      const note = `${label} is off the board.`;
      return this.result(MINESWEEPER_REWARDS.other, outOfTurns, false, true, note, { error: note }, outOfTurns);
    }
    const index = (cell.row - 1) * cols + (cell.col - 1);
    if (this.opened[index] === 1) {
      const note = `${label} is already open.`;
      return this.result(MINESWEEPER_REWARDS.other, outOfTurns, false, true, note, { error: note, cell: index }, outOfTurns);
    }
    if (task.board.mines[index] === 1) {
      this.exploded = index;
      return this.result(MINESWEEPER_REWARDS.mine, true, false, true, `${label} was a mine. Game over.`, {
        cell: index,
        mine: true,
      });
    }
    const newly = reveal(task.board, this.opened, index);
    if (allSafeOpened(task.board, this.opened)) {
      return this.result(MINESWEEPER_REWARDS.win, true, true, true, 'Every safe cell is open. You won.', {
        cell: index,
        opened: newly.length,
      });
    }
    const reward = newly.length > 1 ? MINESWEEPER_REWARDS.openSeveral : MINESWEEPER_REWARDS.openOne;
    return this.result(reward, outOfTurns, false, true, null, { cell: index, opened: newly.length }, outOfTurns);
  }

  admissibleActions(): string[] {
    const cols = this.settings.cols;
    if (this.task === null) return [];
    const out: string[] = [];
    this.opened.forEach((o, i) => {
      if (o === 0) out.push(cellLabel(cols, i));
    });
    return out;
  }

  taskType(): string | undefined {
    return undefined;
  }

  /** The task's content: the mine layout and the first reveal (two seeds with the same key are the same task). */
  taskKey(): string {
    const task = this.requireTask('taskKey');
    return `minesweeper:${layoutContent(task.board)}@${task.firstReveal}`;
  }

  playPrompt(input: PlayPromptInput): string {
    if (input.style === 'paper') return mineSweeperPaperPlayPrompt(input, this.requirePaperTemplates(), this.settings);
    return mineSweeperPlayPrompt(input, this.settings);
  }

  reflectPrompt(input: ReflectPromptInput): string {
    if (input.style === 'paper') return mineSweeperPaperReflectPrompt(input, this.requirePaperTemplates(), this.settings);
    return mineSweeperReflectPrompt(input, this.settings);
  }

  /** What a run records of this environment: its fidelity and, with paper prompts, the template file read. */
  provenance(): Record<string, unknown> {
    const t = this.paperTemplates;
    return { fidelity: this.settings.fidelity, ...(t === null ? {} : { paperPrompts: { file: t.file, sha256: t.sha256 } }) };
  }

  parseReflection(response: string): Reflection {
    return extractRemark(response);
  }

  /** A failed episode that hit a mine: the reflection's first cell called a mine must be that one. */
  checkReflection(steps: readonly TrajectoryStep[], reflection: string): boolean | undefined {
    const { mineHit } = mineSweeperEpisodeFacts(this, steps);
    if (mineHit < 0) return undefined;
    const named = /\bmine\b(?:\s+(?:at|is|was))?:?\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)/i.exec(String(reflection));
    if (!named) return false;
    const { rows, cols } = this.settings;
    const [row, col] = [Number(named[1]), Number(named[2])];
    return row >= 1 && row <= rows && col >= 1 && col <= cols && (row - 1) * cols + (col - 1) === mineHit;
  }

  // ---- read access for players, experts and tests ----

  /** The true board (mines and counts): for the expert that is told the mines, and for tests. */
  get board(): MineBoard {
    return this.requireTask('board').board;
  }

  get firstReveal(): number {
    return this.requireTask('firstReveal').firstReveal;
  }

  /** A copy of the opened-cell mask (1 = opened). */
  get openedCells(): Uint8Array {
    this.requireTask('openedCells');
    return this.opened.slice();
  }

  /** What a player sees: -1 unopened, else the count shown. */
  visible(): VisibleBoard {
    const board = this.requireTask('visible').board;
    const out = new Int8Array(this.opened.length).fill(-1);
    this.opened.forEach((o, i) => {
      if (o === 1) out[i] = board.counts[i];
    });
    return out;
  }

  get done(): boolean {
    return this.finished;
  }

  private result(
    reward: number,
    done: boolean,
    won: boolean,
    valid: boolean,
    note: string | null,
    info: Record<string, unknown>,
    /** Ended by the turn limit alone (a mine or a win ends an episode by the rules, even on the last turn). */
    truncated = false,
  ): StepResult {
    this.finished = done;
    const observation = this.observe();
    // The paper shows the board alone; lamer says what happened.
    if (note !== null && this.settings.fidelity !== 'paper') observation.text = `${observation.text}\n${note}`;
    return { observation, reward, done, won, valid, historyAction: this.historyAction, ...(truncated ? { truncated } : {}), info };
  }

  private requirePaperTemplates(): LamerTemplates {
    if (this.paperTemplates === null) throw noPaperTemplates('minesweeper');
    return this.paperTemplates;
  }

  private observe(): Observation {
    const { rows, cols } = this.settings;
    const counts = (this.task as MineTask).board.counts;
    const lines: string[] = [];
    for (let r = 0; r < rows; r++) {
      const cells: string[] = [];
      for (let c = 0; c < cols; c++) {
        const i = r * cols + c;
        const shown = i === this.exploded && this.settings.fidelity === 'paper' ? '*' : this.opened[i] === 0 ? '?' : counts[i] === 0 ? '.' : String(counts[i]);
        cells.push(shown);
      }
      lines.push(`Row ${r + 1}: ${cells.join(' ')}`);
    }
    const text = lines.join('\n');
    return { text, anchor: text };
  }

  private requireTask(what: string): MineTask {
    if (this.task === null) throw new LamerError('E_ENV', `minesweeper.${what}: call reset(seed) first`);
    return this.task;
  }
}

export function createMineSweeperEnv(options?: MineSweeperOptions): MineSweeperEnv {
  return new MineSweeperEnv(options);
}
