// The CPU-scale households and the search player: the player acts only on what it has seen (its first episode never
// takes or uses an object before an observation showed it), its reflections state where the household generator put
// the objects, and acting on them wins later episodes that a player without memory loses.
import { describe, expect, it } from 'vitest';
import { taskSeed } from '../../../src/envs/common/seeds.js';
import { GameLogic, createAlfWorldEnv, generateHousehold, TASK_TYPES, type AlfWorldEnv } from '../../../src/envs/alfworld/index.js';
import { kitchenFile } from './fixtures.js';
import { AlfWorldSearchPlayer, seenNames } from '../../../src/envs/alfworld/searcher.js';
import type { TrajectoryStep } from '../../../src/envs/types.js';
import { codeOf } from '../../helpers/index.js';

interface EpisodeRun {
  steps: TrajectoryStep[];
  won: boolean;
}

function playEpisode(env: AlfWorldEnv, player: AlfWorldSearchPlayer): EpisodeRun {
  const steps: TrajectoryStep[] = [];
  for (;;) {
    const r = env.step(player.act(steps));
    steps.push({ action: r.historyAction ?? '', observation: r.observation.text });
    if (r.won) return { steps, won: true };
    if (r.done) return { steps, won: false };
  }
}

/** Plays a trial of `episodes`; `memory: false` gives every episode a fresh player (independent attempts). */
function playTrial(env: AlfWorldEnv, seed: number, episodes: number, memory: boolean, style: 'compact' | 'full' = 'compact') {
  env.reset(seed);
  let player = new AlfWorldSearchPlayer(env, { style });
  const runs: EpisodeRun[] = [];
  const reflections: string[] = [];
  for (let e = 0; e < episodes; e++) {
    if (e > 0) env.restart();
    if (!memory) player = new AlfWorldSearchPlayer(env, { style });
    const run = playEpisode(env, player);
    runs.push(run);
    if (run.won) break;
    reflections.push(player.reflect(run.steps));
    player.endEpisode(run.steps);
  }
  return { runs, reflections, wonAt: runs.findIndex((r) => r.won) };
}

describe('small generated households', () => {
  it('have 4 to 10 receptacles and fewer objects than the standard ones; standard households are unchanged by the option', () => {
    let small = 0;
    let standard = 0;
    for (let s = 0; s < 300; s++) {
      const h = generateHousehold(s, TASK_TYPES, () => true, 'small');
      expect(h.receptacles.length).toBeGreaterThanOrEqual(4);
      expect(h.receptacles.length).toBeLessThanOrEqual(10);
      small += h.receptacles.length + h.things.length;
      standard += generateHousehold(s).receptacles.length + generateHousehold(s).things.length;
      expect(generateHousehold(s, TASK_TYPES, () => true, 'standard')).toEqual(generateHousehold(s));
    }
    expect(small).toBeLessThan(standard * 0.6);
  });

  it('are an option of generated games, recorded in provenance; bad values and data folders are refused', () => {
    const env = createAlfWorldEnv({ household: 'small' });
    env.reset(taskSeed('train', 3));
    expect(env.origin).toBe(`generated small seed ${taskSeed('train', 3)}`);
    expect(env.provenance()).toMatchObject({ household: 'small', source: 'generated' });
    expect(createAlfWorldEnv().provenance()).toMatchObject({ household: 'standard' });
    expect(env.task()).toMatchObject({ type: env.taskType() });
    expect(codeOf(() => createAlfWorldEnv({ household: 'tiny' as never }))).toBe('E_ENV');
    expect(() => createAlfWorldEnv({ household: 'tiny' as never })).toThrow(/household: expected 'standard' or 'small'/);
    expect(() => createAlfWorldEnv({ source: 'tw-pddl', dataDir: '/nonexistent', household: 'small' })).toThrow();
  });
});

describe('the ALFWorld search player', () => {
  it('never takes, uses or walks to an object it has not seen in its first episode', () => {
    const env = createAlfWorldEnv({ household: 'small', maxTurns: 30, taskTypes: [1, 2, 3, 4, 5, 6] });
    let won = 0;
    for (let i = 0; i < 60; i++) {
      env.reset(taskSeed('train', i));
      const { runs } = playTrial(env, taskSeed('train', i), 1, true);
      const seen = new Set<string>();
      for (const step of runs[0].steps) {
        const m = step.action.match(/^(?:take (.+) from|use (.+))/);
        if (m) expect(seen.has(m[1] ?? m[2])).toBe(true);
        for (const n of seenNames(step.observation) ?? []) seen.add(n);
      }
      if (runs[0].won) won++;
    }
    // With 30 turns the search always ends in a win.
    expect(won).toBe(60);
  });

  it('searches in the order the admissible actions list the receptacles, so its first move depends on nothing hidden', () => {
    const env = createAlfWorldEnv({ household: 'small' });
    for (let i = 0; i < 20; i++) {
      env.reset(taskSeed('train', i));
      const player = new AlfWorldSearchPlayer(env, { style: 'compact' });
      const goTo = env.admissibleActions().filter((c) => c.startsWith('go to '));
      const dest = env.task()!.receptacleType;
      const expected = goTo.find((c) => c.slice('go to '.length).split(' ')[0] !== dest);
      expect(player.act([])).toBe(`<action>${expected}</action>`);
    }
  });

  it('states in its reflections where the generator put what the task needs, and wins later episodes with them', () => {
    const env = createAlfWorldEnv({ household: 'small', maxTurns: 8 });
    const passWith = [0, 0, 0];
    const passWithout = [0, 0, 0];
    let facts = 0;
    for (let i = 0; i < 80; i++) {
      const seed = taskSeed('train', i);
      const trial = playTrial(env, seed, 3, true);
      for (let k = 0; k < 3; k++) if (trial.wonAt >= 0 && trial.wonAt <= k) passWith[k]++;
      const alone = playTrial(env, seed, 3, false);
      for (let k = 0; k < 3; k++) if (alone.wonAt >= 0 && alone.wonAt <= k) passWithout[k]++;
      // Every "X at Y" fact is where the game has X at the start (found by visiting every receptacle afresh).
      env.reset(seed);
      for (const r of trial.reflections) {
        expect(r).toMatch(/^<remark>.*<\/remark>$/);
        for (const m of r.matchAll(/([a-z]+ \d+) at ([a-z]+ \d+)\./g)) {
          facts++;
          expect(initialPlaceOf(env, m[1])).toBe(m[2]);
        }
      }
    }
    expect(facts).toBeGreaterThan(20);
    // The same deterministic player without memory repeats its first episode; with its reflections it goes straight
    // to what it found.
    expect(passWithout[2]).toBe(passWithout[0]);
    expect(passWith[0]).toBe(passWithout[0]);
    expect(passWith[2]).toBeGreaterThanOrEqual(passWith[0] + 25);
  });

  it("checks a reflection's facts: the player's own pass, a wrong place or a missing fact fail, nothing seen is unchecked", () => {
    const env = createAlfWorldEnv({ household: 'small', maxTurns: 6 });
    const verdicts = { right: 0, none: 0 };
    for (let i = 0; i < 40; i++) {
      const seed = taskSeed('train', i);
      const trial = playTrial(env, seed, 1, true);
      if (trial.wonAt >= 0) continue;
      env.reset(seed);
      const steps = trial.runs[0].steps;
      const own = trial.reflections[0];
      const verdict = env.checkReflection(steps, own);
      if (verdict === undefined) {
        verdicts.none++;
        expect(own).not.toMatch(/ at /);
        continue;
      }
      expect(verdict).toBe(true);
      verdicts.right++;
      const fact = own.match(/([a-z]+ \d+) at ([a-z]+ \d+)\./)!;
      expect(env.checkReflection(steps, own.replace(fact[0], `${fact[1]} at nowhere 9.`))).toBe(false);
      expect(env.checkReflection(steps, '<remark>searched: cabinet 1.</remark>')).toBe(false);
    }
    expect(verdicts.right).toBeGreaterThan(5);
    expect(verdicts.none).toBeGreaterThan(0);
  });

  it('writes compact facts, and a sentence in the full style', () => {
    const env = createAlfWorldEnv({ household: 'small', maxTurns: 3 });
    const compact = playTrial(env, taskSeed('train', 1), 1, true, 'compact').reflections[0];
    expect(compact).toMatch(/^<remark>(?:[a-z]+ \d+ at [a-z]+ \d+\. ?)*(?:searched: .+\.)?<\/remark>$/);
    const full = playTrial(env, taskSeed('train', 1), 1, true, 'full').reflections[0];
    expect(full).toMatch(/^I review the trial\.\n<remark>I did not complete the task in 3 action\(s\)\./);
  });

  it('refuses a data-folder game, whose task types it cannot know', () => {
    const env = createAlfWorldEnv();
    env.resetToGame(new GameLogic(kitchenFile(), 'fixture kitchen'), 'pick_heat_then_place_in_recep');
    expect(env.task()).toBeNull();
    expect(() => new AlfWorldSearchPlayer(env).act([])).toThrow(
      expect.objectContaining({ code: 'E_ENV', message: expect.stringContaining('generated games only') }),
    );
  });
});

/** Where an object is at the start of the current game, read from the engine's own `look`-free texts: go and open. */
function initialPlaceOf(env: AlfWorldEnv, name: string): string | null {
  env.restart();
  for (const command of env.admissibleActions().filter((c) => c.startsWith('go to '))) {
    const where = command.slice('go to '.length);
    env.restart();
    let text = env.step(`<action>${command}</action>`).observation.anchor;
    if (env.admissibleActions().includes(`open ${where}`)) text = env.step(`<action>open ${where}</action>`).observation.anchor;
    if ((seenNames(text) ?? []).includes(name)) return where;
  }
  return null;
}
