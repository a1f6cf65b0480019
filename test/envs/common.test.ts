// Shared helpers: tag extraction, remark truncation, prompt framing and windowing, memory blocks, seed ranges and
// option checks, each against hand-written expected text; the Python text forms against CPython 3.11's own outputs.

import { describe, expect, it } from 'vitest';
import { hasCode } from '../../src/errors.js';
import {
  EVAL_SEEDS,
  REMARK_MAX_CHARS,
  TRAIN_SEEDS,
  composePlayPrompt,
  composeReflectPrompt,
  extractAction,
  extractRemark,
  formatMemoryBlock,
  formatTrajectory,
  intOption,
  seedSplitOf,
  taskSeed,
  trialLine,
} from '../../src/envs/common/index.js';
import { pyFloatRepr, pyStr, pyStrip, pyStrRepr } from '../../src/envs/common/python.js';
import { ENV_NAMES, PAPER_PROMPT_ENVS, createEnv, createExpert, isEnvName, type EnvOptionsByName } from '../../src/envs/registry.js';
import type { Environment, TrajectoryStep } from '../../src/envs/types.js';
import { SokobanEnv } from '../../src/envs/sokoban/env.js';
import { WebShopEnv } from '../../src/envs/webshop/index.js';

const steps = (n: number): TrajectoryStep[] => Array.from({ length: n }, (_, i) => ({ action: `a${i + 1}`, observation: `o${i + 1}` }));

describe('tags', () => {
  it('extracts the first complete <action> pair, case-insensitively, trimmed', () => {
    expect(extractAction('think... <action> up, left </action>')).toBe('up, left');
    expect(extractAction('<ACTION>x</Action> then <action>y</action>')).toBe('x');
    expect(extractAction('<action>never closed')).toBeNull();
    expect(extractAction('</action>backwards<action>')).toBeNull();
    expect(extractAction('no tags')).toBeNull();
    expect(extractAction('<action></action>')).toBe('');
  });

  it('keeps the remark text, cut to 2000 characters; missing or empty tags are invalid', () => {
    expect(extractRemark('why... <remark>mine at (1, 2)</remark>')).toEqual({ text: 'mine at (1, 2)', valid: true });
    expect(extractRemark('<remark>unfinished')).toEqual({ text: '', valid: false });
    expect(extractRemark('<remark>  </remark>')).toEqual({ text: '', valid: false });
    const long = extractRemark(`<remark>${'x'.repeat(5000)}</remark>`);
    expect(REMARK_MAX_CHARS).toBe(2000);
    expect(long.text).toHaveLength(2000);
    expect(long.valid).toBe(true);
  });
});

describe('framing', () => {
  it('says "Currently you are on trial #n+1"', () => {
    expect(trialLine(0, 'full')).toBe('Currently you are on trial #1.');
    expect(trialLine(2, 'full')).toBe('Currently you are on trial #3.');
    expect(trialLine(2, 'compact')).toBe('T3');
  });

  it('shows the last 7 observations and elides older ones as ...', () => {
    const text = formatTrajectory(steps(9), { style: 'full' });
    expect(text.split('\n')).toHaveLength(27);
    expect(text).toContain('Step 1: action: a1\nObservation:\n...\nStep 2: action: a2\nObservation:\n...\nStep 3: action: a3\nObservation:\no3');
    expect(text.endsWith('Step 9: action: a9\nObservation:\no9')).toBe(true);
    expect(formatTrajectory(steps(3), { style: 'compact', window: 2 })).toBe('... ; a2 ; a3');
  });

  it('formats memory blocks for the three memory modes', () => {
    const s = steps(1);
    expect(formatMemoryBlock({ style: 'full', mode: 'reflection_only', episode: 0, reflection: 'R' })).toBe(
      'On trial #1 the task was NOT completed. Your reflection was: R',
    );
    expect(formatMemoryBlock({ style: 'full', mode: 'history_only', episode: 1, steps: s })).toBe(
      'On trial #2 you took these steps:\nStep 1: action: a1\nObservation:\no1\nOn trial #2 the task was NOT completed.',
    );
    expect(formatMemoryBlock({ style: 'full', mode: 'history_and_reflection', episode: 0, steps: s, reflection: 'R' })).toBe(
      'On trial #1 you took these steps:\nStep 1: action: a1\nObservation:\no1\nOn trial #1 the task was NOT completed. Your reflection was: R',
    );
    expect(formatMemoryBlock({ style: 'compact', mode: 'history_and_reflection', episode: 0, steps: s, reflection: 'R' })).toBe('T1 fail acts: a1 note: R');
  });

  it('assembles the play prompt in SPEC order (full) and as one short line (compact)', () => {
    const input = {
      initial: { text: 'I1\nI2', anchor: 'I' },
      memory: ['M1', 'M2'],
      episode: 1,
      steps: steps(2),
    };
    const parts = { rules: 'RULES', answerFormat: 'FORMAT', compactTag: 'env' };
    expect(composePlayPrompt({ ...parts, input: { ...input, style: 'full' } })).toBe(
      [
        'RULES',
        'Initial state:\nI1\nI2',
        'Memory of your earlier trials on this same task:\nM1\n\nM2',
        'Currently you are on trial #2. You have taken 2 step(s) in this trial. Your actions and the observations that ' +
          'followed (older observations are shown as ...):\nStep 1: action: a1\nObservation:\no1\nStep 2: action: a2\nObservation:\no2',
        'Current state:\no2',
        'FORMAT',
      ].join('\n\n'),
    );
    expect(composePlayPrompt({ ...parts, input: { ...input, style: 'compact' } })).toBe('env T2 | mem: M1 ; M2 | acts: a1 ; a2 | now: o2 | act:');
    expect(composePlayPrompt({ ...parts, input: { ...input, memory: [], steps: [], episode: 0, style: 'compact' } })).toBe('env T1 | now: I1 / I2 | act:');
  });

  it('assembles the reflect prompt around the failed episode and asks for <remark>', () => {
    const input = { initial: { text: 'I', anchor: 'I' }, steps: steps(1), episode: 0 };
    const full = composeReflectPrompt({ input: { ...input, style: 'full' }, rules: 'RULES', compactTag: 'env' });
    expect(full.startsWith('RULES\n\nInitial state:\nI\n\nThis was your trial #1.')).toBe(true);
    expect(full).toContain('The task was NOT completed.');
    expect(full).toContain('<remark>');
    expect(composeReflectPrompt({ input: { ...input, style: 'compact' }, rules: 'RULES', compactTag: 'env' })).toBe(
      'env R1 | init: I | acts: a1 | end: o1 | fail | remark:',
    );
  });
});

describe('seeds', () => {
  it('train and eval ranges are disjoint and taskSeed stays inside its split', () => {
    expect(TRAIN_SEEDS.end <= EVAL_SEEDS.start || EVAL_SEEDS.end <= TRAIN_SEEDS.start).toBe(true);
    expect(taskSeed('train', 0)).toBe(0);
    expect(taskSeed('eval', 0)).toBe(1_000_000_000);
    for (const i of [0, 1, 127, 999_999_999]) {
      expect(seedSplitOf(taskSeed('train', i))).toBe('train');
      expect(seedSplitOf(taskSeed('eval', i))).toBe('eval');
    }
    expect(EVAL_SEEDS.end).toBeLessThanOrEqual(2 ** 32);
    const bad = [() => taskSeed('train', -1), () => taskSeed('eval', 1e9), () => taskSeed('test' as never, 0)];
    for (const f of bad) expect(() => f()).toThrow(expect.objectContaining({ code: 'E_ENV' }));
  });

  it('intOption names the option, the range and the value it got', () => {
    try {
      intOption('sokoban', { width: 3.5 }, 'width', 6, 4, 12);
      expect.unreachable();
    } catch (e) {
      expect(hasCode(e, 'E_ENV')).toBe(true);
      expect((e as Error).message).toBe('sokoban option width: expected an integer in [4, 12], found 3.5');
    }
    expect(intOption('x', undefined, 'width', 6, 4, 12)).toBe(6);
  });
});

// Expected values printed by CPython 3.11 (`repr(x)`, `str(t)`, `x.strip()`, and the code points with `chr(c).isspace()`).
describe('Python text forms (src/envs/common/python.ts)', () => {
  it('repr and str of strings and string tuples as CPython prints them', () => {
    const reprs: Array<[string, string]> = [
      ['plain', "'plain'"],
      ["it's", `"it's"`],
      ['say "hi"', `'say "hi"'`],
      [`both ' and "`, `'both \\' and "'`],
      ['tab\there\nnew', "'tab\\there\\nnew'"],
      ['back\\slash', "'back\\\\slash'"],
      ['\x7f\x80\xa0\xad\xa1', "'\\x7f\\x80\\xa0\\xad\xa1'"],
      ['é ü 中 😀', "'é ü 中 😀'"],
      ['\x00\x1f', "'\\x00\\x1f'"],
    ];
    for (const [x, repr] of reprs) expect(pyStrRepr(x), x).toBe(repr);
    expect([pyStr(['color', 'navy blue']), pyStr(['one']), pyStr(["men's", 'x\ty']), pyStr('as is')]).toEqual([
      "('color', 'navy blue')",
      "('one',)",
      `("men's", 'x\\ty')`,
      'as is',
    ]);
  });

  it("float repr as CPython's shortest round-trip form", () => {
    const cases: Array<[number, string]> = [
      [0.1, '0.1'],
      [1e-5, '1e-05'],
      [1.2345678901234568e17, '1.2345678901234568e+17'],
      [2.5e-7, '2.5e-07'],
      [1 / 3, '0.3333333333333333'],
      [-0, '-0.0'],
      [1e16, '1e+16'],
      [9999999999999998, '9999999999999998.0'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [100, '100.0'],
      [35.99, '35.99'],
    ];
    for (const [x, repr] of cases) expect(pyFloatRepr(x), String(x)).toBe(repr);
  });

  it('strip removes exactly the characters str.isspace() accepts, from both ends only', () => {
    const PY_SPACES = [
      0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009,
      0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
    ];
    const stripped: number[] = [];
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      if (pyStrip(`${ch}a${ch}b${ch}`) === `a${ch}b`) stripped.push(c);
    }
    expect(stripped).toEqual(PY_SPACES);
    expect(pyStrip(' \u3000\t a b \x85')).toBe('a b');
    // Whitespace inside long text is kept, and costs one pass: a million characters.
    const inner = ' \t\n\u3000'.repeat(250_000);
    expect(pyStrip(`\n x${inner}y \n`)).toBe(`x${inner}y`);
    expect(pyStrip(inner)).toBe('');
  }, 10_000);
});

describe('the environment registry (src/envs/registry.ts)', () => {
  it('names, environments and experts come from its table', () => {
    expect(ENV_NAMES).toEqual(['sokoban', 'minesweeper', 'webshop', 'alfworld']);
    expect(PAPER_PROMPT_ENVS).toEqual(ENV_NAMES);
    expect([isEnvName('webshop'), isEnvName('custom'), isEnvName('toString'), isEnvName(3)]).toEqual([true, false, false, false]);
    for (const name of ENV_NAMES) {
      const env = createEnv(name);
      expect(env.name, name).toBe(name);
      env.reset(5);
      // The expert plays the environment it was made for: its first action is valid there.
      const expert = createExpert(env, { style: 'compact' });
      expect(env.step(expert.act()).valid, name).toBe(true);
    }
    // The options reach the environment, typed by name (the compiler refuses another environment's options).
    const webshop: WebShopEnv = createEnv('webshop', { maxTurns: 5 });
    expect(webshop.maxTurns).toBe(5);
    const sokoban: SokobanEnv = createEnv('sokoban', { maxTurns: 9 } satisfies EnvOptionsByName['sokoban']);
    expect(sokoban.maxTurns).toBe(9);
    // @ts-expect-error webshop has no option `boxes`
    expect(() => createEnv('webshop', { boxes: 2 })).toThrow(/boxes/);
  });

  it('refuses an unknown name and a foreign environment with E_ENV naming what it knows', () => {
    expect(() => createEnv('chess')).toThrow(
      expect.objectContaining({ code: 'E_ENV', message: expect.stringContaining('expected one of sokoban, minesweeper, webshop, alfworld') }),
    );
    expect(() => createEnv('constructor')).toThrow(expect.objectContaining({ code: 'E_ENV' }));
    // An environment of the same name that is not the registry's class has no expert.
    const impostor = { ...createEnv('sokoban'), name: 'sokoban' } as unknown as Environment;
    expect(() => createExpert(impostor)).toThrow(
      expect.objectContaining({ code: 'E_ENV', message: expect.stringContaining('no expert for environment "sokoban"') }),
    );
  });
});
