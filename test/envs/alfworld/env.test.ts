import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentSplit, taskSeed } from '../../../src/envs/common/seeds.js';
import { Rng } from '../../../src/util/rng.js';
import {
  GameLogic,
  IN_DISTRIBUTION_TYPES,
  OUT_OF_DISTRIBUTION_TYPES,
  TASK_TYPES,
  createAlfWorldEnv,
  createAlfWorldExpert,
  projectAction,
  replayGames,
  writeGeneratedGames,
  type AlfWorldEnv,
} from '../../../src/envs/alfworld/index.js';
import { sha256 } from '../../../src/util/hash.js';
import { KITCHEN_PROBLEM, bedroomFile, kitchenFile } from './fixtures.js';
import { codeOf } from '../../helpers/index.js';

const act = (a: string) => `Let me think.\n<action>${a}</action>`;

function kitchenEnv(options = {}): AlfWorldEnv {
  const env = createAlfWorldEnv(options);
  env.resetToGame(new GameLogic(kitchenFile(), 'fixture kitchen'), 'pick_heat_then_place_in_recep');
  return env;
}

describe("alfworld turns: LaMer's projection and valid", () => {
  it('projects as LaMer: lowercased, first <action> to first </action>, else the last 30 characters', () => {
    expect(projectAction('I go.\n<ACTION> Go To Countertop 1 </action> <action>look</action>')).toEqual({ command: 'go to countertop 1', tagged: true });
    expect(projectAction('no tags at all, so the last thirty characters')).toEqual({
      command: 'so the last thirty characters'.padStart(30, ' ').slice(-30),
      tagged: false,
    });
    // A closing tag before the opening one: LaMer sends the empty text between them (and counts it as tagged); it is no
    // pair here.
    expect(projectAction('</action> before <action>look')).toEqual({ command: '', tagged: false });
  });

  it("valid 'tags' (LaMer's) counts tagged but not admissible commands as valid; 'admissible' does not", () => {
    const lamer = kitchenEnv();
    const r1 = lamer.step(act('examine apple 2'));
    expect(r1.observation.anchor).toBe('Nothing happens.');
    expect(r1.valid).toBe(true);
    expect(lamer.step('go to countertop 1').valid).toBe(false); // no tags: invalid (and its last 30 characters are sent)
    const strict = kitchenEnv({ valid: 'admissible' });
    expect(strict.step(act('examine apple 2')).valid).toBe(false);
    expect(strict.step(act('go to countertop 1')).valid).toBe(true);
  });

  it('plays the walkthrough to reward 10 at its last step; observations list the admissible commands but help', () => {
    const env = kitchenEnv();
    const first = env.restart();
    expect(first.anchor.startsWith('-= Welcome to TextWorld, ALFRED! =-')).toBe(true);
    expect(first.text).toContain(
      'Admissible actions: go to cabinet 1, go to cabinet 2, go to countertop 1, go to drawer 1, go to microwave 1, go to sinkbasin 1, inventory, look',
    );
    expect(env.admissibleActions()).not.toContain('help');
    const walk = env.walkthrough();
    walk.forEach((c, i) => {
      const r = env.step(act(c));
      const last = i === walk.length - 1;
      expect([r.won, r.done, r.reward]).toEqual([last, last, last ? 10 : 0]);
    });
    expect(() => env.step(act('look'))).toThrow(/after the episode ended/);
  });

  it('ends after maxTurns without a win (truncated), and restart() gives the same initial observation', () => {
    const env = kitchenEnv({ maxTurns: 3 });
    const first = env.restart();
    env.step(act('look'));
    env.step(act('go to cabinet 1'));
    const r = env.step(act('inventory'));
    expect([r.done, r.won, r.truncated]).toEqual([true, false, true]);
    expect(env.restart()).toEqual(first);
  });
});

describe('alfworld generated games', () => {
  it('training seeds play task types 1-4, evaluation seeds all six; each type is labelled ID or OOD', () => {
    const env = createAlfWorldEnv();
    const trainTypes = new Set<string>();
    const evalTypes = new Set<string>();
    for (let i = 0; i < 60; i++) {
      env.reset(taskSeed('train', i));
      trainTypes.add(env.taskType()!);
      env.reset(taskSeed('eval', i));
      evalTypes.add(env.taskType()!);
    }
    expect([...trainTypes].sort()).toEqual([...IN_DISTRIBUTION_TYPES].sort());
    expect([...evalTypes].sort()).toEqual([...TASK_TYPES].sort());
    expect(TASK_TYPES.map((t) => env.taskTypeSplit(t))).toEqual(['ID', 'ID', 'ID', 'ID', 'OOD', 'OOD']);
    expect(OUT_OF_DISTRIBUTION_TYPES).toEqual(['pick_cool_then_place_in_recep', 'pick_two_obj_and_place']);
  });

  it('held out by content: a seed draws a problem of its own content split, and the task key is the problem', () => {
    const env = createAlfWorldEnv();
    for (let i = 0; i < 20; i++) {
      for (const split of ['train', 'eval'] as const) {
        env.reset(taskSeed(split, i));
        const problem = env.game.logic.file.pddl_problem;
        expect(contentSplit(problem)).toBe(split);
        expect(env.taskKey()).toBe(sha256(problem));
      }
    }
  });

  it('the same seed gives the same game and the same behaviour under the same commands', () => {
    const a = createAlfWorldEnv();
    const b = createAlfWorldEnv();
    const rng = new Rng(3);
    expect(a.reset(77)).toEqual(b.reset(77));
    for (let t = 0; t < 10; t++) {
      const c = rng.pick(a.admissibleActions());
      expect(a.step(act(c))).toEqual(b.step(act(c)));
    }
  });

  it('the expert wins every one of 120 generated tasks within 30 turns, and recovers after random moves', () => {
    const env = createAlfWorldEnv({ maxTurns: 30 });
    const expert = createAlfWorldExpert(env);
    const rng = new Rng(5);
    for (let i = 0; i < 120; i++) {
      env.reset(taskSeed(i % 2 ? 'eval' : 'train', i));
      let r;
      let t = 0;
      do r = env.step(i % 3 === 0 && t++ < 4 ? act(rng.pick(env.admissibleActions())) : expert.act());
      while (!r.done);
      expect(r.won, `seed of task ${i}`).toBe(true);
    }
    env.reset(taskSeed('train', 0));
    expect(expert.reflect([])).toMatch(/<remark>What went wrong: I took no action\. Plan for the next trial \(\d+ actions\): go to /);
  });

  it('writes games as ALFWorld lays them out; every walkthrough replays', () => {
    const dir = mkdtempSync(join(tmpdir(), 'alfworld-gen-'));
    const written = writeGeneratedGames(dir, { train: 6, eval: 6 });
    expect(written.length).toBe(12);
    const results = replayGames(dir);
    expect(results.length).toBe(12);
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(results[0].path).toMatch(/^train\/(pick|look)_[a-z_]+-[A-Za-z]+-[A-Za-z]*-\d+\/trial_\d+$/);
  });
});

describe('alfworld games from a data folder', () => {
  /** A folder laid out as ALFWorld's json_2.1.1, with games ALFWorld's loader skips. */
  function dataFolder(): string {
    const root = mkdtempSync(join(tmpdir(), 'alfworld-data-'));
    const game = (split: string, name: string, type: string, file: object | null, traj = true) => {
      const dir = join(root, split, name, 'trial_T1');
      mkdirSync(dir, { recursive: true });
      if (traj) writeFileSync(join(dir, 'traj_data.json'), JSON.stringify({ task_type: type }));
      if (file) writeFileSync(join(dir, 'game.tw-pddl'), JSON.stringify(file));
    };
    const heat = 'pick_heat_then_place_in_recep';
    game('train', `${heat}-Apple-None-Cabinet-1`, heat, kitchenFile());
    game('train', 'look_at_obj_in_light-CD-None-DeskLamp-2', 'look_at_obj_in_light', bedroomFile());
    game('train', `${heat}-Apple-None-Cabinet-movable-3`, heat, kitchenFile());
    game('train', `${heat}-AppleSliced-None-Cabinet-4`, heat, kitchenFile());
    game('train', `${heat}-Apple-None-Cabinet-5`, heat, { ...kitchenFile(), solvable: false });
    game('train', `${heat}-Apple-None-Cabinet-6`, heat, { ...kitchenFile(), solvable: undefined });
    game('train', `${heat}-Apple-None-Cabinet-7`, heat, null);
    game('train', 'pick_cool_then_place_in_recep-Apple-None-Cabinet-8', 'pick_cool_then_place_in_recep', kitchenFile());
    // The same kitchen with one more empty line in its problem: another file, another content.
    const other = { ...kitchenFile(), pddl_problem: KITCHEN_PROBLEM + '\n' };
    game('valid_unseen', `${heat}-Apple-None-Cabinet-9`, heat, other);
    game('valid_unseen', 'pick_cool_then_place_in_recep-Apple-None-Cabinet-10', 'pick_cool_then_place_in_recep', kitchenFile());
    return root;
  }

  it("collects by ALFWorld's rules, holds out by content, orders by path, and records hashes and the grammar version", () => {
    const root = dataFolder();
    const env = createAlfWorldEnv({ source: 'tw-pddl', dataDir: root });
    const record = env.provenance() as {
      train: { count: number; sha256: string };
      skipped: Record<string, number>;
      heldOutByContent: number;
      grammar: Record<string, number>;
    };
    const lists = env.gameLists()!;
    // The training kitchen has the same problem as the cool game of valid_unseen: held out of training.
    expect(lists.train.map((g) => g.path)).toEqual(['train/look_at_obj_in_light-CD-None-DeskLamp-2/trial_T1']);
    expect(record.heldOutByContent).toBe(1);
    expect(record.train).toEqual({ count: 1, sha256: sha256(`${lists.train[0].path} ${lists.train[0].sha256}\n`) });
    expect(lists.eval.map((g) => g.path).sort()).toEqual([
      'valid_unseen/pick_cool_then_place_in_recep-Apple-None-Cabinet-10/trial_T1',
      'valid_unseen/pick_heat_then_place_in_recep-Apple-None-Cabinet-9/trial_T1',
    ]);
    expect(record.skipped).toEqual({ 'movable or Sliced': 2, unsolvable: 1, 'no solvable key': 1, 'no game.tw-pddl': 1, 'task type not asked for': 1 });
    expect(lists.eval[0].sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(record.grammar)).toEqual([expect.stringMatching(/^2\.1\.2\+ [0-9a-f]{16}$/)]);
    expect(env.settings).toEqual({ source: 'tw-pddl', valid: 'tags', grammar: '2.1.2+' });

    env.reset(taskSeed('train', 0));
    expect(env.taskType()).toBe('look_at_obj_in_light');
    const seen = new Set<string>();
    for (let i = 0; i < 2; i++) {
      env.reset(taskSeed('eval', i));
      seen.add(env.origin);
      expect(env.taskTypeSplit(env.taskType()!)).toBe(env.taskType() === 'pick_heat_then_place_in_recep' ? 'ID' : 'OOD');
    }
    expect(seen.size).toBe(2);
    const expert = createAlfWorldExpert(env);
    let r;
    do r = env.step(expert.act());
    while (!r.done);
    expect(r.won).toBe(true);
  });

  it('rejects a missing folder, an unknown split, select seeds without select games, and old options with E_ENV', () => {
    const root = dataFolder();
    expect(codeOf(() => createAlfWorldEnv({ source: 'tw-pddl' }))).toBe('E_ENV');
    expect(codeOf(() => createAlfWorldEnv({ source: 'tw-pddl', dataDir: join(root, 'nope') }))).toBe('E_ENV');
    expect(codeOf(() => createAlfWorldEnv({ source: 'tw-pddl', dataDir: root, eval: ['valid_seen'] }))).toBe('E_ENV');
    const env = createAlfWorldEnv({ source: 'tw-pddl', dataDir: root });
    expect(() => env.reset(900_000_000)).toThrow(/set env.options.select/);
    expect(codeOf(() => createAlfWorldEnv({ split: 'train' } as never))).toBe('E_ENV');
    expect(codeOf(() => createAlfWorldEnv({ taskTypes: [7] as never }))).toBe('E_ENV');
    expect(codeOf(() => createAlfWorldEnv({ dataDir: root }))).toBe('E_ENV');
    expect(codeOf(() => createAlfWorldEnv({ valid: 'strict' as never }))).toBe('E_ENV');
    expect(codeOf(() => createAlfWorldEnv().step('look'))).toBe('E_ENV');
  });
});

describe('alfworld prompts', () => {
  it('full and compact play prompts name the task; the reflect prompt asks for <remark>', () => {
    const env = kitchenEnv();
    const initial = env.restart();
    const steps = [{ action: 'go to countertop 1', observation: 'You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.' }];
    const full = env.playPrompt({ style: 'full', initial, memory: [], episode: 2, steps });
    expect(full).toContain('Your task is to: put a hot apple in cabinet.');
    expect(full).toContain('Currently you are on trial #3');
    expect(full).toContain('<action>');
    const compact = env.playPrompt({ style: 'compact', initial, memory: [], episode: 2, steps });
    expect(compact.startsWith('alf put a hot apple in cabinet. T3 | acts: go to countertop 1 | now: You arrive at countertop 1.')).toBe(true);
    expect(compact.length).toBeLessThan(full.length / 2);
    const reflect = env.reflectPrompt({ style: 'full', initial, steps, episode: 0 });
    expect(reflect).toContain('<remark>');
    expect(env.parseReflection('no tags').valid).toBe(false);
  });
});
