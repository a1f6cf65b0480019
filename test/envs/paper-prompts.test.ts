// promptStyle 'paper': LaMer's templates read from a LaMer checkout and filled as LaMer's environment managers fill
// them. The fixture under test/envs/fixtures/lamer is laid out as a LaMer checkout, with prompt.py files of lamer's own
// wording (LaMer's constant names and fields). The expected prompts below were computed by LaMer's own code under
// Python (its sokoban and minesweeper prompt.py functions with the fixture's constants, its memory.py SimpleMemory
// fetch and its projection.py, replaying the same responses and observations) and are kept here as facts; the same
// replay against LaMer's real prompt.py is `scripts/paper-prompts-check.ts`.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { composePlayPrompt } from '../../src/envs/common/framing.js';
import { lamerHistory, loadLamerTemplates } from '../../src/envs/common/paper-prompts.js';
import { pyFormat, pyStrip, readPythonStrings } from '../../src/envs/common/python.js';
import { MineSweeperEnv } from '../../src/envs/minesweeper/env.js';
import { parsePaperCellAction } from '../../src/envs/minesweeper/parse.js';
import { createEnv } from '../../src/envs/registry.js';
import { SokobanEnv } from '../../src/envs/sokoban/env.js';
import type { MemoryMode } from '../../src/envs/types.js';
import { TRAIN_SAMPLING, type TrialView } from '../../src/rollout/policy.js';
import { runTrial } from '../../src/rollout/trial.js';
import { validateConfig } from '../../src/train/config.js';
import { scripted } from '../rollout/helpers.js';

const LAMER = join(import.meta.dirname, 'fixtures', 'lamer');

describe('readPythonStrings', () => {
  it("reads module-level constants in every quoting LaMer's files use, and skips the rest", () => {
    const source = [
      '# X = "in a comment"',
      'A = """first\nsecond"""',
      "B = '''it's {x}'''",
      'C = "tab\\there \\x41\\u00e9\\101 \\q \\\\ \\"q\\""',
      "D = r'raw \\n stays'",
      'E = ("one "',
      "     'two')  # a comment after",
      'F: str = "annotated"',
      'G = f"formatted {1}"',
      'def f():',
      '    H = "indented"',
      'I = "hash # inside" + X',
      'J = "joined \\',
      'line"',
      "K = b'bytes'",
      "L = 'a' 'b' \\",
      "    'c'",
      'M = 42',
      'A2 = A',
    ].join('\n');
    // Values as Python's own parser gives them (ast.literal_eval of each right-hand side).
    const strings = readPythonStrings(source);
    expect(Object.fromEntries(strings)).toEqual({
      A: 'first\nsecond',
      B: "it's {x}",
      C: 'tab\there A\u00e9A \\q \\ "q"',
      D: 'raw \\n stays',
      E: 'one two',
      F: 'annotated',
      J: 'joined line',
      L: 'abc',
    });
  });

  it('names the file and line of a string that is not closed', () => {
    expect(() => readPythonStrings('A = "x\nB = 1', 'p.py')).toThrow(/p\.py:1: a string literal is not closed/);
    expect(() => readPythonStrings('A = """x', 'p.py')).toThrow(/p\.py:1: a string literal is not closed/);
  });
});

describe('pyFormat and pyStrip', () => {
  it("fill named fields and brace escapes as Python's str.format", () => {
    expect(pyFormat('{a} and {b}, {{literal}} {a}', { a: 'x', b: 3 }, 't')).toBe('x and 3, {literal} x');
    expect(() => pyFormat('{a} {c}', { a: 1 }, 'T.py X')).toThrow(/T\.py X: field \{c\} is not one LaMer fills here \(it fills a\)/);
    expect(() => pyFormat('{a!r}', { a: 1 }, 't')).toThrow(/not a plain name/);
    expect(() => pyFormat('a } b', {}, 't')).toThrow(/single '\}'/);
    expect(() => pyFormat('a { b', {}, 't')).toThrow(/no matching/);
  });

  it("strips what Python's str.strip() strips, and no more", () => {
    expect(pyStrip('\n\t\x1c\x85 text \u3000\n')).toBe('text');
    expect(pyStrip('\ufefftext')).toBe('\ufefftext');
  });
});

describe('lamerHistory (SimpleMemory.fetch)', () => {
  const steps = Array.from({ length: 9 }, (_, i) => ({ action: `a${i + 1}`, observation: `o${i + 1}` }));
  it('shows the last 7 steps numbered in the episode, the last 2 with their observation', () => {
    expect(lamerHistory(steps, { historyLength: 7, obsLength: 2 })).toBe(
      [3, 4, 5, 6, 7].map((k) => `Action ${k}: a${k}\nObservation ${k}: ...`).join('\n') +
        '\nAction 8: a8\nObservation 8:\no8\nAction 9: a9\nObservation 9:\no9',
    );
    expect(lamerHistory(steps.slice(0, 2), { historyLength: 7, obsLength: 7 })).toBe('Action 1: a1\nObservation 1:\no1\nAction 2: a2\nObservation 2:\no2');
  });
});

describe('loadLamerTemplates', () => {
  it('finds prompt.py in a checkout, a folder or the file itself, and records its SHA-256', () => {
    const file = join(LAMER, 'agent_system', 'environments', 'sokoban', 'prompt.py');
    const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
    for (const source of [LAMER, join(LAMER, 'agent_system', 'environments', 'sokoban'), file]) {
      const t = loadLamerTemplates(source, 'sokoban', ['TRAJ_2toN_INIT']);
      expect(t.file).toBe(file);
      expect(t.sha256).toBe(sha256);
      expect(t.templates.TRAJ_2toN_INIT).toBe('\n\nNow on trial #{traj_idx}, from the start.');
    }
  });

  it('says what is missing and what to do', () => {
    expect(() => loadLamerTemplates('/nonexistent/LaMer', 'sokoban', [])).toThrow(
      /no prompt\.py at \/nonexistent\/LaMer.*clone it and set env\.options\.lamerSource/,
    );
    expect(() => loadLamerTemplates(LAMER, 'minesweeper', ['SOKOBAN_PLAY_PROMPT'])).toThrow(/no string constant SOKOBAN_PLAY_PROMPT/);
    expect(() => new SokobanEnv({ lamerSource: '/nonexistent' })).toThrow(expect.objectContaining({ code: 'E_ENV' }));
  });
});

// ---- Sokoban: seed 0 of the paper's generator, 4 turns an episode ----

const START = '0: # # # # # #\n1: # _ _ _ _ #\n2: # # O X _ #\n3: # # # X _ #\n4: # # # S _ #\n5: # # # # # #';
/** After `left, right, up` from the start (left is a wall). */
const UP = '0: # # # # # #\n1: # _ _ _ _ #\n2: # # O X _ #\n3: # # # X P #\n4: # # # O _ #\n5: # # # # # #';
/** After `down` from UP. */
const DOWN = '0: # # # # # #\n1: # _ _ _ _ #\n2: # # O X _ #\n3: # # # X _ #\n4: # # # O P #\n5: # # # # # #';

const HEAD = `Push every box (X) onto a target (O).\nStart:\n${START}`;
const TAIL = '\nNow give THREE moves inside <action> </action>.';
/** Episode 0's history as LaMer's memory shows a past trial (7 steps, 2 observations). */
const TRIAL1 =
  "Action 1: ['left', 'right', 'up']\nObservation 1: ...\nAction 2: ['down']\nObservation 2: ...\n" +
  `Action 3: ['still']\nObservation 3:\n${DOWN}\nAction 4: ['still', 'up']\nObservation 4:\n${UP}`;

/** Responses by turn: the third has no tags (one `still`), the fourth is read up to the last `</action>`. */
const SOKOBAN_ANSWERS = ['<action>left, right, up</action>', 'I go <action>Down</action>', 'no tags here', '<action>stay still, up</action> and </action>'];

async function sokobanTrial(mode: MemoryMode) {
  const env = new SokobanEnv({ fidelity: 'paper', maxTurns: 4, lamerSource: LAMER });
  const policy = scripted((view: TrialView) =>
    view.phase === 'reflect'
      ? `thinking\n<remark>note after trial ${view.episode + 1}</remark> trailing`
      : SOKOBAN_ANSWERS[(view.steps.length + view.episode) % 4],
  );
  const result = await runTrial({
    env,
    policy,
    seed: 0,
    group: 0,
    trial: 0,
    config: { episodes: 2, reflect: true, memoryMode: mode, style: 'paper', sampling: TRAIN_SAMPLING },
  });
  return result.rows.map((r) => r.prompt);
}

describe("Sokoban, promptStyle 'paper'", () => {
  it("history and reflection: LaMer's prompts turn by turn, the reflection, and the next trial's memory", async () => {
    const prompts = await sokobanTrial('history_and_reflection');
    expect(prompts.length).toBe(4 + 1 + 4);
    expect(prompts[0]).toBe(`${HEAD}\n${TAIL}`);
    expect(prompts[1]).toBe(`${HEAD}\n\nYour moves so far:\nAction 1: ['left', 'right', 'up']\nObservation 1:\n${UP}\n${TAIL}`);
    expect(prompts[3]).toBe(
      `${HEAD}\n\nYour moves so far:\nAction 1: ['left', 'right', 'up']\nObservation 1: ...\nAction 2: ['down']\nObservation 2:\n${DOWN}\n` +
        `Action 3: ['still']\nObservation 3:\n${DOWN}\n${TAIL}`,
    );
    // The reflect prompt shows all 7 observations of the failed trial.
    expect(prompts[4]).toBe(
      `${HEAD}\n\nYour moves so far:\nAction 1: ['left', 'right', 'up']\nObservation 1:\n${UP}\nAction 2: ['down']\nObservation 2:\n${DOWN}\n` +
        `Action 3: ['still']\nObservation 3:\n${DOWN}\nAction 4: ['still', 'up']\nObservation 4:\n${UP}\n\nThat trial failed.\nSay why inside <remark> </remark>.`,
    );
    const memory = `\n\nTrial #1 went: \n${TRIAL1}\nIt failed. Your note: \nnote after trial 1`;
    expect(prompts[5]).toBe(`${HEAD}${memory}\n\nNow on trial #2, from the start.${TAIL}`);
    expect(prompts[6]).toBe(`${HEAD}${memory}\n\nNow on trial #2. Your moves so far: \nAction 1: ['down']\nObservation 1:\n${START}\n${TAIL}`);
  });

  it('reflection only (the default) and history only', async () => {
    expect((await sokobanTrial('reflection_only'))[5]).toBe(
      `${HEAD}\n\nTrial #1 failed. Your note: \nnote after trial 1\n\nNow on trial #2, from the start.${TAIL}`,
    );
    // No reflection is written for history_only; the memory shows the trajectory.
    expect((await sokobanTrial('history_only'))[4]).toBe(`${HEAD}\n\nTrial #1 went: \n${TRIAL1}\nIt failed.\n\n\nNow on trial #2, from the start.${TAIL}`);
  });

  it("independent attempts (baselines) see the first trial's prompt every time", async () => {
    const env = new SokobanEnv({ fidelity: 'paper', maxTurns: 1, lamerSource: LAMER });
    const policy = scripted(() => SOKOBAN_ANSWERS[0]);
    const result = await runTrial({
      env,
      policy,
      seed: 0,
      group: 0,
      trial: 0,
      config: { episodes: 3, reflect: false, style: 'paper', sampling: TRAIN_SAMPLING },
    });
    expect(result.rows.map((r) => r.prompt)).toEqual([`${HEAD}\n${TAIL}`, `${HEAD}\n${TAIL}`, `${HEAD}\n${TAIL}`]);
  });

  it("lamer fidelity records its own parse in LaMer's form, and a step without moves as one still", () => {
    const env = new SokobanEnv({ lamerSource: LAMER });
    env.reset(3);
    expect(env.step('<action>Up, LEFT, left, down</action>').historyAction).toBe("['up', 'left', 'left']");
    expect(env.step('nothing').historyAction).toBe("['still']");
    const paper = new SokobanEnv({ fidelity: 'paper' });
    paper.reset(0);
    expect(paper.step('<action>stay still, up</action> and </action>').historyAction).toBe("['still', 'up']");
  });

  it('without lamerSource, and for environments without LaMer templates, paper prompts stop with E_ENV', () => {
    const env = new SokobanEnv({ fidelity: 'paper' });
    const initial = env.reset(0);
    const input = { style: 'paper' as const, initial, memory: [], episode: 0, steps: [] };
    expect(() => env.playPrompt(input)).toThrow(/set env\.options\.lamerSource/);
    for (const name of ['minesweeper', 'webshop', 'alfworld'] as const) {
      const other = createEnv(name);
      expect(() => other.playPrompt({ ...input, initial: other.reset(1) })).toThrow(
        expect.objectContaining({ code: 'E_ENV', message: expect.stringMatching(/lamerSource/) }),
      );
    }
    // An environment of one's own built on the common framing has no LaMer templates to fill.
    expect(() => composePlayPrompt({ input, rules: 'r', answerFormat: 'a', compactTag: 't' })).toThrow(
      expect.objectContaining({ code: 'E_ENV', message: expect.stringMatching(/not available for this environment/) }),
    );
  });

  it('records the template file in its provenance', () => {
    const file = join(LAMER, 'agent_system', 'environments', 'sokoban', 'prompt.py');
    expect(new SokobanEnv({ fidelity: 'paper', lamerSource: LAMER }).provenance()).toEqual({
      fidelity: 'paper',
      paperPrompts: { file, sha256: createHash('sha256').update(readFileSync(file)).digest('hex') },
    });
    expect(new SokobanEnv().provenance()).toEqual({ fidelity: 'lamer' });
  });
});

// ---- MineSweeper: seed 3 of the paper's layouts ----

const BOARD = 'Row 1: . 1 ? ? ? ?\nRow 2: . 1 ? ? ? ?\nRow 3: . 1 1 3 ? ?\nRow 4: . . . 1 1 1\nRow 5: . . . . . .\nRow 6: . . . . . .';
const MINE_HEAD = `Clear a 6x6 board hiding 3 mines; cells are (row, col) from 1.\nStart:\n${BOARD}`;
const MINE_TAIL = '\nOpen one cell: <action>(row, col)</action>.';

describe("MineSweeper, promptStyle 'paper'", () => {
  it("LaMer's action rule: a (row, col) pair inside the first <action> ... </action>, as its memory records it", () => {
    expect(parsePaperCellAction('<action>( 1, 1)</action>')).toEqual({ cell: { row: 1, col: 1 }, shown: '( 1, 1)' });
    expect(parsePaperCellAction('x <action> (6 ,  6) </action>')).toEqual({ cell: { row: 6, col: 6 }, shown: '(6, 6)' });
    expect(parsePaperCellAction('<action>2, 3</action>')).toBeNull();
    expect(parsePaperCellAction('<ACTION>(2, 3)</ACTION>')).toBeNull();
    expect(parsePaperCellAction('</action> <action>(2, 3)</action>')).toBeNull();
    expect(parsePaperCellAction('<action>(-1, 3)</action>')).toBeNull();
    const env = new MineSweeperEnv({ fidelity: 'paper' });
    env.reset(3);
    const off = env.step('<action>(9, 9)</action>');
    expect([off.reward, off.valid, off.historyAction]).toEqual([-1, true, '(9, 9)']);
    const bare = env.step('<action>2, 3</action>');
    expect([bare.reward, bare.valid, bare.historyAction]).toEqual([-1, false, 'no operation']);
    // lamer fidelity keeps its own rule (the first two numbers in the tags) and records the cell it read.
    const lamer = new MineSweeperEnv();
    lamer.reset(3);
    expect(lamer.step('<action>2, 3</action>')).toMatchObject({ valid: true, historyAction: '(2, 3)' });
  });

  it("LaMer's prompts for a trial, its reflection and the next trial", async () => {
    const env = new MineSweeperEnv({ fidelity: 'paper', maxTurns: 4, lamerSource: LAMER });
    const answers = ['<action>( 1, 1)</action>', '<action>(6,6)</action>', '<action>2, 3</action>', '<action>(9, 9)</action>', '<action>(3, 4)</action>'];
    const policy = scripted((view: TrialView) =>
      view.phase === 'reflect' ? `<remark>  mine note ${view.episode + 1} </remark>` : answers[(view.steps.length + 2 * view.episode) % 5],
    );
    const result = await runTrial({
      env,
      policy,
      seed: 3,
      group: 0,
      trial: 0,
      config: { episodes: 2, reflect: true, style: 'paper', sampling: TRAIN_SAMPLING },
    });
    const prompts = result.rows.map((r) => r.prompt);
    expect(prompts[0]).toBe(`${MINE_HEAD}\n${MINE_TAIL}`);
    expect(prompts[3]).toBe(
      `${MINE_HEAD}\n\nYour clicks so far:\nAction 1: ( 1, 1)\nObservation 1: ...\nAction 2: (6, 6)\nObservation 2:\n${BOARD}\n` +
        `Action 3: no operation\nObservation 3:\n${BOARD}\n${MINE_TAIL}`,
    );
    expect(prompts[4]).toBe(
      `Clear a 6x6 board hiding 3 mines.\nStart:\n${BOARD}\nYour clicks so far:\nAction 1: ( 1, 1)\nObservation 1:\n${BOARD}\n` +
        `Action 2: (6, 6)\nObservation 2:\n${BOARD}\nAction 3: no operation\nObservation 3:\n${BOARD}\nAction 4: (9, 9)\nObservation 4:\n${BOARD}\n\n` +
        'That trial failed.\nSay why inside <remark> </remark>.',
    );
    expect(prompts[5]).toBe(`${MINE_HEAD}\n\nTrial #1 failed. Note:\nmine note 1\n\nTrial #2, from the start.${MINE_TAIL}`);
    expect(prompts[6]).toBe(
      `${MINE_HEAD}\n\nTrial #1 failed. Note:\nmine note 1\n\nTrial #2. Your clicks so far: \nAction 1: no operation\nObservation 1:\n${BOARD}\n${MINE_TAIL}`,
    );
  });

  it("LaMer's templates describe a square board", () => {
    const env = new MineSweeperEnv({ rows: 4, cols: 5, lamerSource: LAMER });
    expect(() => env.playPrompt({ style: 'paper', initial: env.reset(1), memory: [], episode: 0, steps: [] })).toThrow(/square board/);
  });
});

describe("config: promptStyle 'paper'", () => {
  it('needs env.options.lamerSource', () => {
    const base = { model: { promptStyle: 'paper' } };
    expect(() => validateConfig({ ...base, env: { name: 'sokoban' } })).toThrow(
      expect.objectContaining({ code: 'E_CONFIG', message: expect.stringMatching(/set env\.options\.lamerSource/) }),
    );
    expect(() => validateConfig({ ...base, env: { name: 'alfworld', options: { lamerSource: '' } } })).toThrow(/set env\.options\.lamerSource/);
    for (const name of ['sokoban', 'minesweeper', 'webshop', 'alfworld']) {
      expect(validateConfig({ ...base, env: { name, options: { lamerSource: LAMER } } }).model.promptStyle).toBe('paper');
    }
  });
});
