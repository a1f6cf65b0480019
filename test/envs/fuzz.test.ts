// Fuzzing every environment through the registry: 100,000 random and malformed responses in total. No response may
// raise; every result must be well-formed; a response without a complete <action> pair must come back valid = false;
// restart() must still give the initial observation after whatever the fuzzer did. `truncated` marks exactly the
// episodes that the turn limit alone ended: never a win, never before the limit, always an invalid last turn.

import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/util/rng.js';
import { extractAction, extractTag } from '../../src/envs/common/tags.js';
import { ENV_NAMES, createEnv } from '../../src/envs/registry.js';
import type { Environment, TrajectoryStep } from '../../src/envs/types.js';

const TOTAL_RESPONSES = 100_000;
const PER_ENV = TOTAL_RESPONSES / ENV_NAMES.length;

const TAG_PIECES = ['<action>', '</action>', '<ACTION>', '</Action>', '<action >', '<remark>', '</remark>', '<', '>', '</', '<action></action>'];
const WORDS = [
  'up',
  'down',
  'left',
  'right',
  'search[',
  ']',
  'click[',
  'go to',
  'take',
  'from',
  'put',
  'in/on',
  '(',
  ')',
  ',',
  'buy now',
  'next >',
  '< prev',
  'look',
  'inventory',
  '-1',
  '0',
  '99',
  '1e308',
  'NaN',
  '\n',
  ' ',
];

function randomText(rng: Rng, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += String.fromCharCode(32 + rng.int(95));
  return s;
}

function randomUnicode(rng: Rng, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) {
    const pick = rng.int(4);
    // Lone surrogates and control characters are deliberate: decoders can emit them.
    if (pick === 0) s += String.fromCharCode(rng.int(0x20));
    else if (pick === 1) s += String.fromCharCode(0xd800 + rng.int(0x800));
    else if (pick === 2) s += String.fromCodePoint(0x1f600 + rng.int(80));
    else s += String.fromCharCode(0x80 + rng.int(0x3000));
  }
  return s;
}

function mutate(rng: Rng, text: string): string {
  const chars = [...text];
  const edits = 1 + rng.int(4);
  for (let e = 0; e < edits; e++) {
    const at = rng.int(chars.length + 1);
    const op = rng.int(3);
    if (op === 0 && chars.length > 0) chars.splice(Math.min(at, chars.length - 1), 1);
    else if (op === 1) chars.splice(at, 0, String.fromCharCode(32 + rng.int(95)));
    else chars.splice(at, 0, rng.pick(WORDS));
  }
  return chars.join('');
}

function randomResponse(rng: Rng, env: Environment): string {
  const kind = rng.int(10);
  switch (kind) {
    case 0:
      return randomText(rng, rng.int(200));
    case 1:
      return randomUnicode(rng, rng.int(100));
    case 2: {
      const actions = env.admissibleActions();
      return actions.length > 0 ? `Reasoning.\n<action>${rng.pick(actions)}</action>` : '<action></action>';
    }
    case 3: {
      const actions = env.admissibleActions();
      const base = actions.length > 0 ? rng.pick(actions) : 'up';
      return rng.int(2) === 0 ? `<action>${mutate(rng, base)}</action>` : mutate(rng, `<action>${base}</action>`);
    }
    case 4: {
      let s = '';
      for (let i = 0, n = 1 + rng.int(6); i < n; i++) s += rng.pick(TAG_PIECES) + (rng.int(2) ? rng.pick(WORDS) : '');
      return s;
    }
    case 5:
      return randomText(rng, 2000 + rng.int(8000)) + (rng.int(2) ? `<action>${rng.pick(WORDS)}</action>` : '');
    case 6:
      return rng.pick(['', ' ', '\n\n', '\t', '<action>', '</action>']);
    case 7:
      return rng.pick(WORDS) + ' ' + rng.pick(WORDS) + ', ' + rng.pick(WORDS);
    case 8:
      return `<action>${rng.pick(['('.repeat(1000), '\u0000', '-99999999999999999999, 1e308', `${'9'.repeat(400)}, 2`, ']'.repeat(50), 'search[' + 'a'.repeat(3000) + ']'])}</action>`;
    default: {
      let s = '<action>';
      for (let i = 0, n = rng.int(8); i < n; i++) s += rng.pick(WORDS) + (rng.int(2) ? ' ' : '');
      return s + (rng.int(5) ? '</action>' : '');
    }
  }
}

describe('fuzzing all environments', () => {
  for (const name of ENV_NAMES) {
    it(`${name}: ${PER_ENV} random and malformed responses never raise and are flagged invalid when unparsable`, () => {
      const rng = new Rng(0xf022 + name.length);
      const env = createEnv(name);
      let seed = 0;
      let initial = env.reset(seed);
      let steps: TrajectoryStep[] = [];
      let invalidSeen = 0;
      let validSeen = 0;
      let truncatedSeen = 0;
      let turn = 0;
      for (let i = 0; i < PER_ENV; i++) {
        const response = randomResponse(rng, env);
        const r = env.step(response);
        turn++;
        if (r.truncated !== undefined) {
          expect(r.truncated).toBe(true);
          expect(r.done && !r.won && turn === env.maxTurns, `truncated at turn ${turn} of ${env.maxTurns}, won ${r.won}`).toBe(true);
          truncatedSeen++;
        }
        if (turn === env.maxTurns && !r.valid) expect(r.truncated, 'an invalid last turn ends by the limit alone').toBe(true);
        expect(typeof r.reward === 'number' && Number.isFinite(r.reward), `reward of ${JSON.stringify(response.slice(0, 80))}`).toBe(true);
        expect(typeof r.valid).toBe('boolean');
        expect(typeof r.done).toBe('boolean');
        expect(typeof r.won).toBe('boolean');
        expect(typeof r.observation.text).toBe('string');
        expect(typeof r.observation.anchor).toBe('string');
        if (extractAction(response) === null) {
          expect(r.valid, `valid for unparsable ${JSON.stringify(response.slice(0, 80))}`).toBe(false);
        }
        if (r.valid) validSeen++;
        else invalidSeen++;
        steps.push({ action: extractAction(response) ?? '', observation: r.observation.text });
        if (i % 97 === 0) {
          const style = rng.int(2) ? 'full' : 'compact';
          expect(typeof env.playPrompt({ style, initial, memory: [response.slice(0, 50)], episode: 1, steps })).toBe('string');
          expect(typeof env.reflectPrompt({ style, initial, steps, episode: 0 })).toBe('string');
          const reflection = env.parseReflection(response);
          if (extractTag(response, 'remark') === null) expect(reflection.valid).toBe(false);
        }
        if (r.done) {
          steps = [];
          turn = 0;
          if (rng.int(3) === 0) {
            expect(env.restart()).toEqual(initial);
          } else {
            seed = rng.int(1_000_000);
            initial = env.reset(seed);
          }
        }
      }
      // The mix must exercise both paths, or the property above checked nothing.
      expect(invalidSeen).toBeGreaterThan(PER_ENV / 10);
      expect(validSeen).toBeGreaterThan(PER_ENV / 100);
      expect(truncatedSeen).toBeGreaterThan(0);
    });
  }
});

describe('registry', () => {
  const SEED = 13;
  it('creates every named environment, with its expert, and refuses unknown names with E_ENV', async () => {
    const { createExpert } = await import('../../src/envs/registry.js');
    for (const name of ENV_NAMES) {
      const env = createEnv(name);
      expect(env.name).toBe(name);
      env.reset(SEED);
      const expert = createExpert(env);
      let r;
      let turns = 0;
      do {
        r = env.step(expert.act());
        turns++;
      } while (!r.done && turns < env.maxTurns);
      // SEED's MineSweeper board can be cleared in 7 turns (not all can: see minesweeper.test.ts); every expert must win it.
      expect(r.won, name).toBe(true);
    }
    expect(() => createEnv('chess')).toThrow(expect.objectContaining({ code: 'E_ENV' }));
    expect(() => createEnv('sokoban', { width: 2 })).toThrow(expect.objectContaining({ code: 'E_ENV' }));
  });
});
