// promptStyle 'paper' for ALFWorld: LaMer's alfworld templates filled as its environment manager fills them. The
// expected prompts were computed by LaMer's own code under Python: its alfworld prompt.py functions with the constants
// of the fixture prompt.py (test/envs/fixtures/lamer, lamer's wording in LaMer's layout), its memory.py SimpleMemory
// fetch (15 steps), and the steps of AlfWorldEnvironmentManager.build_text_obs (the admissible list without `help`),
// replaying the same responses, observations and admissible lists as the trial below; they are kept here as facts.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GameLogic, createAlfWorldEnv } from '../../../src/envs/alfworld/index.js';
import type { MemoryMode } from '../../../src/envs/types.js';
import { TRAIN_SAMPLING, type TrialView } from '../../../src/rollout/policy.js';
import { runTrial } from '../../../src/rollout/trial.js';
import { validateConfig } from '../../../src/train/config.js';
import { scripted } from '../../rollout/helpers.js';
import { kitchenFile } from './fixtures.js';

const LAMER = join(import.meta.dirname, '..', 'fixtures', 'lamer');
const INTRO =
  '-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, you see a cabinet 2, a cabinet 1, a countertop 1, a drawer 1, a microwave 1, and a sinkbasin 1.\n\nYour task is to: put a hot apple in cabinet.';

/** Responses by turn: the second has no tags (its last 30 characters are a command, sent as LaMer sends them). */
const ANSWERS = [
  '<action>Go To Countertop 1</action>',
  'no tags, take apple 2 from countertop 1',
  '<action>take apple 2 from countertop 1</action> then </action>',
];

async function kitchenTrial(mode: MemoryMode): Promise<string[]> {
  const env = createAlfWorldEnv({ maxTurns: 3, lamerSource: LAMER });
  env.resetToGame(new GameLogic(kitchenFile(), 'fixture kitchen'), 'pick_heat_then_place_in_recep');
  // The trial resets by seed; this one plays the fixture game.
  env.reset = () => env.restart();
  const policy = scripted((view: TrialView) =>
    view.phase === 'reflect' ? `thinking\n<remark>note after trial ${view.episode + 1}</remark> trailing` : ANSWERS[(view.steps.length + view.episode) % 3],
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

const EXPECTED: Record<MemoryMode, string[]> = {
  history_and_reflection: [
    'Household task.\n' +
      INTRO +
      "\n\n\nYou may do one of:\n['go to cabinet 1',\n 'go to cabinet 2',\n 'go to countertop 1',\n 'go to drawer 1',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nSo far: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\n\nYou may do one of:\n['examine countertop 1',\n 'examine drawer 1',\n 'go to cabinet 1',\n 'go to cabinet 2',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look',\n 'open drawer 1',\n 'take apple 2 from countertop 1',\n 'take mug 1 from countertop 1']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nSo far: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\nAction 2: take apple 2 from countertop 1\nObservation 2: You pick up the apple 2 from the countertop 1.\n\nYou may do one of:\n['examine apple 2',\n 'examine countertop 1',\n 'examine drawer 1',\n 'go to cabinet 1',\n 'go to cabinet 2',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look',\n 'move apple 2 to countertop 1',\n 'open drawer 1']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      '\n\nWhat you did:\n\nSo far: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\nAction 2: take apple 2 from countertop 1\nObservation 2: You pick up the apple 2 from the countertop 1.\nAction 3: take apple 2 from countertop 1\nObservation 3: Nothing happens.\nIt failed. Say why inside <remark> </remark>.',
    'Household task.\n' +
      INTRO +
      "\n\nTrial #1 went: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\nAction 2: take apple 2 from countertop 1\nObservation 2: You pick up the apple 2 from the countertop 1.\nAction 3: take apple 2 from countertop 1\nObservation 3: Nothing happens.\nIt failed. Your note: \nnote after trial 1\n\nNow on trial #2, from the start.\n\nYou may do one of:\n['go to cabinet 1',\n 'go to cabinet 2',\n 'go to countertop 1',\n 'go to drawer 1',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nTrial #1 went: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\nAction 2: take apple 2 from countertop 1\nObservation 2: You pick up the apple 2 from the countertop 1.\nAction 3: take apple 2 from countertop 1\nObservation 3: Nothing happens.\nIt failed. Your note: \nnote after trial 1\n\nNow on trial #2; so far: \nAction 1: take apple 2 from countertop 1\nObservation 1: Nothing happens.\n\nYou may do one of:\n['go to cabinet 1',\n 'go to cabinet 2',\n 'go to countertop 1',\n 'go to drawer 1',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nTrial #1 went: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\nAction 2: take apple 2 from countertop 1\nObservation 2: You pick up the apple 2 from the countertop 1.\nAction 3: take apple 2 from countertop 1\nObservation 3: Nothing happens.\nIt failed. Your note: \nnote after trial 1\n\nNow on trial #2; so far: \nAction 1: take apple 2 from countertop 1\nObservation 1: Nothing happens.\nAction 2: take apple 2 from countertop 1\nObservation 2: Nothing happens.\n\nYou may do one of:\n['go to cabinet 1',\n 'go to cabinet 2',\n 'go to countertop 1',\n 'go to drawer 1',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look']\n\nAnswer inside <action> </action>.",
  ],
  reflection_only: [
    'Household task.\n' +
      INTRO +
      "\n\n\nYou may do one of:\n['go to cabinet 1',\n 'go to cabinet 2',\n 'go to countertop 1',\n 'go to drawer 1',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nSo far: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\n\nYou may do one of:\n['examine countertop 1',\n 'examine drawer 1',\n 'go to cabinet 1',\n 'go to cabinet 2',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look',\n 'open drawer 1',\n 'take apple 2 from countertop 1',\n 'take mug 1 from countertop 1']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nSo far: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\nAction 2: take apple 2 from countertop 1\nObservation 2: You pick up the apple 2 from the countertop 1.\n\nYou may do one of:\n['examine apple 2',\n 'examine countertop 1',\n 'examine drawer 1',\n 'go to cabinet 1',\n 'go to cabinet 2',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look',\n 'move apple 2 to countertop 1',\n 'open drawer 1']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      '\n\nWhat you did:\n\nSo far: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\nAction 2: take apple 2 from countertop 1\nObservation 2: You pick up the apple 2 from the countertop 1.\nAction 3: take apple 2 from countertop 1\nObservation 3: Nothing happens.\nIt failed. Say why inside <remark> </remark>.',
    'Household task.\n' +
      INTRO +
      "\n\nTrial #1 failed. Your note:\nnote after trial 1\n\nNow on trial #2, from the start.\n\nYou may do one of:\n['go to cabinet 1',\n 'go to cabinet 2',\n 'go to countertop 1',\n 'go to drawer 1',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nTrial #1 failed. Your note:\nnote after trial 1\n\nNow on trial #2; so far: \nAction 1: take apple 2 from countertop 1\nObservation 1: Nothing happens.\n\nYou may do one of:\n['go to cabinet 1',\n 'go to cabinet 2',\n 'go to countertop 1',\n 'go to drawer 1',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nTrial #1 failed. Your note:\nnote after trial 1\n\nNow on trial #2; so far: \nAction 1: take apple 2 from countertop 1\nObservation 1: Nothing happens.\nAction 2: take apple 2 from countertop 1\nObservation 2: Nothing happens.\n\nYou may do one of:\n['go to cabinet 1',\n 'go to cabinet 2',\n 'go to countertop 1',\n 'go to drawer 1',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look']\n\nAnswer inside <action> </action>.",
  ],
  history_only: [
    'Household task.\n' +
      INTRO +
      "\n\n\nYou may do one of:\n['go to cabinet 1',\n 'go to cabinet 2',\n 'go to countertop 1',\n 'go to drawer 1',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nSo far: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\n\nYou may do one of:\n['examine countertop 1',\n 'examine drawer 1',\n 'go to cabinet 1',\n 'go to cabinet 2',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look',\n 'open drawer 1',\n 'take apple 2 from countertop 1',\n 'take mug 1 from countertop 1']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nSo far: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\nAction 2: take apple 2 from countertop 1\nObservation 2: You pick up the apple 2 from the countertop 1.\n\nYou may do one of:\n['examine apple 2',\n 'examine countertop 1',\n 'examine drawer 1',\n 'go to cabinet 1',\n 'go to cabinet 2',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look',\n 'move apple 2 to countertop 1',\n 'open drawer 1']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nTrial #1 went: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\nAction 2: take apple 2 from countertop 1\nObservation 2: You pick up the apple 2 from the countertop 1.\nAction 3: take apple 2 from countertop 1\nObservation 3: Nothing happens.\nIt failed.\n\n\nNow on trial #2, from the start.\n\nYou may do one of:\n['go to cabinet 1',\n 'go to cabinet 2',\n 'go to countertop 1',\n 'go to drawer 1',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nTrial #1 went: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\nAction 2: take apple 2 from countertop 1\nObservation 2: You pick up the apple 2 from the countertop 1.\nAction 3: take apple 2 from countertop 1\nObservation 3: Nothing happens.\nIt failed.\n\n\nNow on trial #2; so far: \nAction 1: take apple 2 from countertop 1\nObservation 1: Nothing happens.\n\nYou may do one of:\n['go to cabinet 1',\n 'go to cabinet 2',\n 'go to countertop 1',\n 'go to drawer 1',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look']\n\nAnswer inside <action> </action>.",
    'Household task.\n' +
      INTRO +
      "\n\nTrial #1 went: \nAction 1: go to countertop 1\nObservation 1: You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.\nAction 2: take apple 2 from countertop 1\nObservation 2: You pick up the apple 2 from the countertop 1.\nAction 3: take apple 2 from countertop 1\nObservation 3: Nothing happens.\nIt failed.\n\n\nNow on trial #2; so far: \nAction 1: take apple 2 from countertop 1\nObservation 1: Nothing happens.\nAction 2: take apple 2 from countertop 1\nObservation 2: Nothing happens.\n\nYou may do one of:\n['go to cabinet 1',\n 'go to cabinet 2',\n 'go to countertop 1',\n 'go to drawer 1',\n 'go to microwave 1',\n 'go to sinkbasin 1',\n 'inventory',\n 'look']\n\nAnswer inside <action> </action>.",
  ],
};

describe("ALFWorld, promptStyle 'paper'", () => {
  for (const mode of ['history_and_reflection', 'reflection_only', 'history_only'] as const) {
    it(`${mode}: LaMer's prompts turn by turn, the reflection and the next trial`, async () => {
      expect(await kitchenTrial(mode)).toEqual(EXPECTED[mode]);
    });
  }

  it("records the projected command as LaMer's memory does, and the template file in its provenance", () => {
    const env = createAlfWorldEnv({ lamerSource: LAMER });
    env.resetToGame(new GameLogic(kitchenFile(), 'fixture kitchen'), 'pick_heat_then_place_in_recep');
    expect(env.step('<ACTION> Go To Countertop 1 </action>').historyAction).toBe('go to countertop 1');
    expect(env.step('take mug 1 from countertop 1').historyAction).toBe('take mug 1 from countertop 1');
    expect(env.provenance()).toMatchObject({
      source: 'generated',
      valid: 'tags',
      paperPrompts: { file: join(LAMER, 'agent_system', 'environments', 'alfworld', 'prompt.py') },
    });
  });

  it('without lamerSource, paper prompts stop with E_ENV; the config accepts alfworld with a checkout', () => {
    const env = createAlfWorldEnv();
    const initial = env.resetToGame(new GameLogic(kitchenFile(), 'fixture kitchen'), 'pick_heat_then_place_in_recep');
    expect(() => env.playPrompt({ style: 'paper', initial, memory: [], episode: 0, steps: [] })).toThrow(expect.objectContaining({ code: 'E_ENV' }));
    const c = validateConfig({ model: { promptStyle: 'paper' }, env: { name: 'alfworld', options: { lamerSource: LAMER } } });
    expect(c.model.promptStyle).toBe('paper');
    expect(() => validateConfig({ model: { promptStyle: 'paper' }, env: { name: 'alfworld' } })).toThrow(/lamerSource/);
  });
});
