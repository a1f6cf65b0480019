import { describe, expect, it } from 'vitest';
import { hasCode } from '../../src/errors.js';
import { Rng } from '../../src/util/rng.js';
import {
  IN_DISTRIBUTION_TYPES,
  OUT_OF_DISTRIBUTION_TYPES,
  TASK_TYPES,
  createAlfWorldEnv,
  createAlfWorldExpert,
  type Household,
  type TaskType,
} from '../../src/envs/alfworld/index.js';

const act = (a: string) => `Let me think.\n<action>${a}</action>`;

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return hasCode(e, 'E_ENV') ? 'E_ENV' : String(e);
  }
  return 'no error';
}

/** A small kitchen written by hand: heat the apple in the microwave, then put it on the dining table. */
function heatKitchen(): Household {
  const rec = (id: string, openable = false) => ({ id, type: id.split(' ')[0], openable, canHold: true });
  return {
    room: 'kitchen',
    receptacles: [rec('cabinet 1', true), rec('countertop 1'), rec('diningtable 1'), rec('fridge 1', true), rec('microwave 1', true), rec('sinkbasin 1')],
    things: [
      { id: 'apple 1', type: 'apple', takeable: true },
      { id: 'mug 1', type: 'mug', takeable: true },
      { id: 'apple 2', type: 'apple', takeable: true },
    ],
    task: { type: 'pick_heat_then_place', objectType: 'apple', receptacleType: 'diningtable' },
    goal: 'put a hot apple on diningtable.',
    initial: {
      location: null,
      holding: null,
      contents: {
        'cabinet 1': ['apple 2'],
        'countertop 1': ['apple 1', 'mug 1'],
        'diningtable 1': [],
        'fridge 1': [],
        'microwave 1': [],
        'sinkbasin 1': [],
      },
      open: { 'cabinet 1': false, 'fridge 1': false, 'microwave 1': false },
      clean: {},
      hot: {},
      cool: {},
      lampOn: {},
    },
  };
}

describe('alfworld rules on a hand-built kitchen', () => {
  it('heat in the microwave, then place: reward 10 and won only at the final put', () => {
    const env = createAlfWorldEnv();
    const first = env.resetTo(heatKitchen());
    expect(first.text).toContain('Your task is to: put a hot apple on diningtable.');
    expect(first.text).toContain('a cabinet 1, a countertop 1, a diningtable 1, a fridge 1, a microwave 1, and a sinkbasin 1');
    const script: Array<[string, string]> = [
      ['go to countertop 1', 'You arrive at the countertop 1. On the countertop 1, you see an apple 1 and a mug 1.'],
      ['take apple 1 from countertop 1', 'You pick up the apple 1 from the countertop 1.'],
      ['go to microwave 1', 'You arrive at the microwave 1. The microwave 1 is closed.'],
      ['heat apple 1 with microwave 1', 'You heat the apple 1 using the microwave 1.'],
      ['examine apple 1', 'The apple 1 is hot.'],
      ['go to diningtable 1', 'You arrive at the diningtable 1. On the diningtable 1, you see nothing.'],
    ];
    for (const [cmd, feedback] of script) {
      expect(env.admissibleActions()).toContain(cmd);
      const r = env.step(act(cmd));
      expect(r.valid).toBe(true);
      expect(r.reward).toBe(0);
      expect(r.done).toBe(false);
      expect(r.observation.text.startsWith(`${feedback}\n\nAdmissible actions: `)).toBe(true);
    }
    const last = env.step(act('put apple 1 on diningtable 1'));
    expect(last.valid).toBe(true);
    expect(last.observation.text).toMatch(/^You put the apple 1 on the diningtable 1\./);
    expect(last.won).toBe(true);
    expect(last.done).toBe(true);
    expect(last.reward).toBe(10);
  });

  it('placing the apple without heating it does not win', () => {
    const env = createAlfWorldEnv();
    env.resetTo(heatKitchen());
    for (const cmd of ['go to countertop 1', 'take apple 1 from countertop 1', 'go to diningtable 1', 'put apple 1 in/on diningtable 1']) {
      const r = env.step(act(cmd));
      expect(r.valid).toBe(true);
      expect(r.won).toBe(false);
    }
  });

  it('closed receptacles hide their contents until opened', () => {
    const env = createAlfWorldEnv();
    env.resetTo(heatKitchen());
    const arrive = env.step(act('go to cabinet 1'));
    expect(arrive.observation.text).toMatch(/^You arrive at the cabinet 1\. The cabinet 1 is closed\./);
    expect(env.admissibleActions()).not.toContain('take apple 2 from cabinet 1');
    const opened = env.step(act('open cabinet 1'));
    expect(opened.observation.text).toMatch(/^You open the cabinet 1\. The cabinet 1 is open\. In the cabinet 1, you see an apple 2\./);
    expect(env.admissibleActions()).toContain('take apple 2 from cabinet 1');
  });

  it('anything not admissible gets "Nothing happens." with valid = 0 and changes nothing', () => {
    const env = createAlfWorldEnv();
    const first = env.resetTo(heatKitchen());
    const cases = [
      'no action tag at all',
      '<action>fly to the moon</action>',
      // Well-formed commands that are not admissible here: not at the countertop, nothing held, no such object.
      act('take apple 1 from countertop 1'),
      act('put apple 1 in/on diningtable 1'),
      act('go to bathtubbasin 1'),
      act('heat apple 1 with microwave 1'),
      '<action></action>',
    ];
    for (const response of cases) {
      const r = env.step(response);
      expect(r.valid).toBe(false);
      expect(r.reward).toBe(0);
      expect(r.observation.text.startsWith('Nothing happens.\n\nAdmissible actions: ')).toBe(true);
    }
    expect(env.state()).toEqual(heatKitchen().initial);
    expect(env.restart()).toEqual(first);
  });

  it('accepts spelling variants of admissible commands', () => {
    const env = createAlfWorldEnv();
    env.resetTo(heatKitchen());
    expect(env.step(act('Go to the countertop 1.')).valid).toBe(true);
    expect(env.step(act('take  apple 1 from countertop 1')).valid).toBe(true);
    expect(env.step(act('put apple 1 in countertop 1')).valid).toBe(true);
  });
});

describe('alfworld generated tasks', () => {
  it('observations list exactly the admissible commands', () => {
    const env = createAlfWorldEnv();
    const rng = new Rng(2);
    for (let seed = 0; seed < 30; seed++) {
      let obs = env.reset(seed);
      for (let t = 0; t < 5; t++) {
        const listed = obs.text.slice(obs.text.indexOf('Admissible actions: ') + 'Admissible actions: '.length);
        expect(listed.split(', ')).toEqual(env.admissibleActions());
        const r = env.step(act(rng.pick(env.admissibleActions())));
        expect(r.valid).toBe(true);
        obs = r.observation;
        if (r.done) break;
      }
    }
  });

  it('no task is accomplished at the start, and ends after maxTurns', () => {
    const env = createAlfWorldEnv({ maxTurns: 4 });
    for (let seed = 0; seed < 50; seed++) {
      env.reset(seed);
      let r = env.step(act('look'));
      expect(r.won).toBe(false);
      let turns = 1;
      while (!r.done) {
        r = env.step(act('inventory'));
        turns++;
      }
      expect(turns).toBe(4);
      expect(r.won).toBe(false);
      expect(codeOf(() => env.step(act('look')))).toBe('E_ENV');
    }
    expect(createAlfWorldEnv().maxTurns).toBe(10);
    expect(createAlfWorldEnv({ maxTurns: 30 }).maxTurns).toBe(30);
  });

  it('restart() after random actions gives exactly the initial observation and state', () => {
    const env = createAlfWorldEnv();
    const rng = new Rng(9);
    for (let seed = 100; seed < 140; seed++) {
      const initial = env.reset(seed);
      const state = env.state();
      for (let t = 0; t < 10; t++) {
        const choice = rng.next() < 0.2 ? 'gibberish' : act(rng.pick(env.admissibleActions()));
        if (env.step(choice).done) break;
      }
      expect(env.restart()).toEqual(initial);
      expect(env.state()).toEqual(state);
    }
  });

  it('same seed: the same household, and the same behaviour under the same actions', () => {
    const a = createAlfWorldEnv();
    const b = createAlfWorldEnv();
    for (const seed of [0, 7, 4242, 999_999]) {
      expect(a.reset(seed)).toEqual(b.reset(seed));
      expect(a.household).toEqual(b.household);
      const rng = new Rng(seed);
      for (let t = 0; t < 10; t++) {
        const cmd = act(rng.pick(a.admissibleActions()));
        const ra = a.step(cmd);
        expect(b.step(cmd)).toEqual(ra);
        if (ra.done) break;
      }
    }
    const starts = new Set([1, 2, 3, 4, 5, 6, 7, 8].map((s) => a.reset(s).text));
    expect(starts.size).toBe(8);
  });

  it('splits by task type: train samples the four in-distribution types, eval-ood cool and pick-two', () => {
    const seen = (split: 'train' | 'eval-ood' | 'all') => {
      const env = createAlfWorldEnv({ split });
      const types = new Set<string>();
      for (let seed = 0; seed < 200; seed++) {
        env.reset(seed);
        types.add(env.taskType()!);
      }
      return [...types].sort();
    };
    expect(seen('train')).toEqual([...IN_DISTRIBUTION_TYPES].sort());
    expect(seen('eval-ood')).toEqual(['pick_cool_then_place', 'pick_two_obj_and_place']);
    expect(seen('all')).toEqual([...TASK_TYPES].sort());
    expect(OUT_OF_DISTRIBUTION_TYPES).toEqual(['pick_cool_then_place', 'pick_two_obj_and_place']);
    const onlyLook = createAlfWorldEnv({ taskTypes: ['look_at_obj_in_light'] });
    onlyLook.reset(3);
    expect(onlyLook.taskType()).toBe('look_at_obj_in_light');
  });

  it('rejects misuse with E_ENV', () => {
    const env = createAlfWorldEnv();
    expect(codeOf(() => env.step(act('look')))).toBe('E_ENV');
    expect(codeOf(() => env.admissibleActions())).toBe('E_ENV');
    expect(codeOf(() => createAlfWorldEnv({ split: 'test' as never }))).toBe('E_ENV');
    expect(codeOf(() => createAlfWorldEnv({ taskTypes: ['make_coffee' as TaskType] }))).toBe('E_ENV');
    expect(codeOf(() => createAlfWorldEnv({ maxTurns: 2.5 }))).toBe('E_ENV');
    expect(codeOf(() => env.reset(Number.NaN))).toBe('E_ENV');
  });
});

describe('alfworld expert', () => {
  it('wins at least 99% of 1,000 generated tasks within 10 turns, every type, valid commands only', () => {
    const env = createAlfWorldEnv();
    const expert = createAlfWorldExpert(env);
    const byType = new Map<string, { won: number; total: number }>();
    let invalid = 0;
    let wins = 0;
    for (let seed = 0; seed < 1000; seed++) {
      env.reset(seed);
      let r = env.step(expert.act());
      if (!r.valid) invalid++;
      while (!r.done) {
        r = env.step(expert.act());
        if (!r.valid) invalid++;
      }
      const t = byType.get(env.taskType()!) ?? { won: 0, total: 0 };
      t.total++;
      if (r.won) {
        t.won++;
        wins++;
      }
      byType.set(env.taskType()!, t);
    }
    expect(invalid).toBe(0);
    expect(wins / 1000).toBeGreaterThanOrEqual(0.99);
    expect([...byType.keys()].sort()).toEqual([...TASK_TYPES].sort());
    for (const t of byType.values()) expect(t.won / t.total).toBeGreaterThanOrEqual(0.95);
  });

  it('recovers after random actions and writes a reflection with a plan', () => {
    const env = createAlfWorldEnv({ maxTurns: 30 });
    const expert = createAlfWorldExpert(env);
    const rng = new Rng(1);
    let wins = 0;
    for (let seed = 0; seed < 50; seed++) {
      env.reset(seed);
      for (let t = 0; t < 4; t++) env.step(act(rng.pick(env.admissibleActions())));
      let r = env.step(expert.act());
      while (!r.done) r = env.step(expert.act());
      if (r.won) wins++;
    }
    expect(wins).toBeGreaterThanOrEqual(48);
    env.reset(5);
    const reflection = env.parseReflection(expert.reflect([{ action: 'fly', observation: 'Nothing happens.\n\nAdmissible actions: look' }]));
    expect(reflection.valid).toBe(true);
    expect(reflection.text).toContain('1 of them were not admissible');
    expect(reflection.text).toMatch(/Plan for the next trial \(\d+ actions\): go to /);
  });
});

describe('alfworld prompts', () => {
  it('full and compact play prompts; reflect prompt asks for <remark>', () => {
    const env = createAlfWorldEnv();
    const initial = env.resetTo(heatKitchen());
    const steps = [{ action: 'go to countertop 1', observation: 'You arrive at the countertop 1.' }];
    const full = env.playPrompt({ style: 'full', initial, memory: [], episode: 2, steps });
    expect(full).toContain('Your task is to: put a hot apple on diningtable.');
    expect(full).toContain('Currently you are on trial #3');
    expect(full).toContain('heat [object] with [microwave]');
    expect(full).toContain('<action>');
    const compact = env.playPrompt({ style: 'compact', initial, memory: [], episode: 2, steps });
    expect(compact.length).toBeLessThan(full.length / 2);
    const reflect = env.reflectPrompt({ style: 'full', initial, steps, episode: 0 });
    expect(reflect).toContain('<remark>');
    expect(env.parseReflection('no tags').valid).toBe(false);
  });
});
