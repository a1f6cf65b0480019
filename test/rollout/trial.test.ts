// One LaMer trial against rows worked out by hand on a 2x2 MineSweeper board, stop on success, restart to the same
// initial state, the baselines' independent attempts and prompt variants, and the memory modes inside a trial.

import { describe, expect, it } from 'vitest';
import { createEnv } from '../../src/envs/registry.js';
import { hasCode } from '../../src/errors.js';
import { runTrial, type TrialRow } from '../../src/rollout/trial.js';
import { ScriptedPolicy, scriptedPolicy, scriptedResult } from '../../src/rollout/scripted.js';
import type { GenerateRequest, TrialView } from '../../src/rollout/policy.js';
import { ENV_NAMES } from '../../src/envs/registry.js';
import { agentPlayPrompt } from '../../src/agent/prompts.js';
import { taskSeed } from '../../src/envs/common/seeds.js';
import { SAMPLING, TinyBoard, click, scripted } from './helpers.js';

const INITIAL = 'Row 1: 1 ?\nRow 2: ? ?';

/** Episode 0: opens the mine. Reflection: names it. Episode 1: opens (1, 2) then (2, 1) and wins. */
const failThenWin = scripted((view) => {
  if (view.phase === 'reflect') return 'The mine was at (2, 2).\n<remark>mine at (2, 2); avoid it</remark>';
  if (view.episode === 0) return click(2, 2);
  return view.steps.length === 0 ? click(1, 2) : click(2, 1);
});

const brief = (r: TrialRow) => [r.episode, r.turn, r.phase, r.reward, r.valid, r.won, r.anchor];

describe('runTrial', () => {
  it('fails episode 0, reflects, wins episode 1: rows by hand, nothing after the win', async () => {
    const result = await runTrial({
      env: new TinyBoard(),
      policy: failThenWin,
      seed: 7,
      group: 3,
      trial: 5,
      config: { episodes: 3, reflect: true, sampling: SAMPLING },
    });
    expect(result.rows.map(brief)).toEqual([
      [0, 0, 'play', -0.1, true, false, INITIAL],
      [1, 0, 'reflect', 0, true, false, 'reflection'],
      [1, 0, 'play', 0.5, true, false, INITIAL],
      [1, 1, 'play', 10, true, true, 'Row 1: 1 1\nRow 2: ? ?'],
    ]);
    expect(result.rows.every((r) => r.group === 3 && r.trial === 5)).toBe(true);
    expect(result.won).toEqual([false, true, false]);
    expect(result.wonEpisode).toBe(1);
    expect(result.episodesPlayed).toBe(2);
    expect(result.episodeRewards).toEqual([-0.1, 10.5]);
    expect(result.reflections).toEqual(['mine at (2, 2); avoid it']);

    const [play0, reflect, play1] = result.rows;
    // The reflect prompt shows the failed episode; the next play prompt carries the reflection as memory.
    expect(reflect.prompt).toContain('(2, 2) was a mine. Game over.');
    expect(reflect.prompt).toContain('The task was NOT completed.');
    expect(play0.prompt).not.toContain('Memory of your earlier trials');
    expect(play0.prompt).toContain('Currently you are on trial #1.');
    expect(play1.prompt).toContain('On trial #1 the task was NOT completed. Your reflection was: mine at (2, 2); avoid it');
    expect(play1.prompt).toContain('Currently you are on trial #2.');
    // Token arrays are complete: char-code ids of the prompt and response, one log-prob per response token.
    for (const r of result.rows) {
      expect(Array.from(r.promptIds)).toEqual([...r.prompt].map((ch) => ch.charCodeAt(0)));
      expect(r.responseIds.length).toBe(r.response.length);
      expect(r.logprobs.length).toBe(r.responseIds.length);
      expect(r.finishReason).toBe('stop');
    }
  });

  it('Sokoban: two invalid turns, the expert reflection, then the expert wins the same room in episode 1', async () => {
    // A room whose shortest solution fits in 2 turns of 3 moves, found by searching seeds.
    const shortestPlan = (s: number) => {
      const env = createEnv('sokoban');
      env.reset(s);
      return env.planFromCurrent()!.length;
    };
    let seed = 0;
    while (shortestPlan(seed) > 6) seed++;
    const initial = createEnv('sokoban').reset(seed).anchor;
    const expertAfterFailure = (view: TrialView) => {
      const expert = new ScriptedPolicy(view);
      return {
        generate: (request: GenerateRequest) =>
          view.phase === 'play' && view.episode === 0 ? Promise.resolve(scriptedResult(request, 'I give up.')) : expert.generate(request),
      };
    };
    const result = await runTrial({
      env: createEnv('sokoban'),
      policy: expertAfterFailure,
      seed,
      group: 0,
      trial: 0,
      config: { episodes: 3, reflect: true, maxTurns: 2, sampling: SAMPLING },
    });
    const rows = result.rows;
    expect(rows.slice(0, 3).map(brief)).toEqual([
      [0, 0, 'play', -0.3, false, false, initial],
      [0, 1, 'play', -0.3, false, false, initial],
      [1, 0, 'reflect', 0, true, false, 'reflection'],
    ]);
    const ep1 = rows.slice(3);
    expect(ep1.length).toBeGreaterThanOrEqual(1);
    expect(ep1.length).toBeLessThanOrEqual(2);
    expect(ep1.every((r) => r.episode === 1 && r.phase === 'play' && r.valid)).toBe(true);
    expect(ep1[0].anchor).toBe(initial);
    expect(ep1.map((r) => r.won)).toEqual(ep1.map((_, i) => i === ep1.length - 1));
    expect(result.won).toEqual([false, true, false]);
    expect(rows[3].prompt).toContain(`Your reflection was: ${result.reflections[0]}`);
    expect(result.reflections[0]).toMatch(/Plan: from the start play/);
  });

  it('marks a reflection without <remark> invalid and remembers it as empty', async () => {
    const noRemark = scripted((view) => (view.phase === 'reflect' ? 'No idea.' : click(2, 2)));
    const result = await runTrial({
      env: new TinyBoard(),
      policy: noRemark,
      seed: 0,
      group: 0,
      trial: 0,
      config: { episodes: 2, reflect: true, sampling: SAMPLING },
    });
    expect(result.rows.map((r) => [r.phase, r.valid])).toEqual([
      ['play', true],
      ['reflect', false],
      ['play', true],
    ]);
    expect(result.rows[2].prompt).toContain('On trial #1 the task was NOT completed. Your reflection was: \n');
    expect(result.won).toEqual([false, false]);
  });

  it('stops on success: an expert wins Sokoban in episode 0 and plays no further episode', async () => {
    const result = await runTrial({
      env: createEnv('sokoban'),
      policy: scriptedPolicy(),
      seed: 11,
      group: 0,
      trial: 0,
      config: { episodes: 3, reflect: true, sampling: SAMPLING },
    });
    expect(result.won).toEqual([true, false, false]);
    expect(result.rows.every((r) => r.episode === 0 && r.phase === 'play')).toBe(true);
    expect(result.rows.map((r) => r.won)).toEqual(result.rows.map((_, i) => i === result.rows.length - 1));
    // The turns follow 0, 1, 2, ...
    expect(result.rows.map((r) => r.turn)).toEqual(result.rows.map((_, i) => i));
  });

  it('restarts every episode from the same initial state: turn-0 anchors all equal the reset observation', async () => {
    const seed = 4;
    const expected = createEnv('sokoban').reset(seed).anchor;
    const result = await runTrial({
      env: createEnv('sokoban'),
      policy: scriptedPolicy({ noise: 1, seed: 2 }), // random moves: never wins in 3 turns of 3 moves
      seed,
      group: 0,
      trial: 0,
      config: { episodes: 3, reflect: true, maxTurns: 3, sampling: SAMPLING },
    });
    const turn0 = result.rows.filter((r) => r.phase === 'play' && r.turn === 0);
    expect(turn0.map((r) => r.episode)).toEqual([0, 1, 2]);
    for (const r of turn0) expect(r.anchor).toBe(expected);
    // Episodes 1 and 2 each follow one reflect row; max 3 turns per episode.
    expect(result.rows.map((r) => `${r.episode}${r.phase[0]}`).join(' ')).toBe('0p 0p 0p 1r 1p 1p 1p 2r 2p 2p 2p');
  });

  it('baseline attempts (reflect: false): no reflect rows, empty memory, each prompt that of a first attempt', async () => {
    const result = await runTrial({
      env: new TinyBoard(),
      policy: scripted(() => click(2, 2)),
      seed: 0,
      group: 0,
      trial: 0,
      config: { episodes: 3, reflect: false, sampling: SAMPLING },
    });
    expect(result.rows.map((r) => [r.episode, r.phase])).toEqual([
      [0, 'play'],
      [1, 'play'],
      [2, 'play'],
    ]);
    expect(new Set(result.rows.map((r) => r.prompt)).size).toBe(1);
    expect(result.rows[2].prompt).toContain('Currently you are on trial #1.');
    expect(result.rows[2].prompt).not.toContain('Memory');
    expect(result.reflections).toEqual([]);
  });

  it('zero-shot asks for the action without reasoning; react keeps the reason-then-act format', async () => {
    const run = (promptVariant: 'react' | 'zero-shot') =>
      runTrial({
        env: new TinyBoard(),
        policy: scripted(() => click(2, 2)),
        seed: 0,
        group: 0,
        trial: 0,
        config: { episodes: 1, reflect: false, promptVariant, sampling: SAMPLING },
      });
    const react = (await run('react')).rows[0].prompt;
    const zero = (await run('zero-shot')).rows[0].prompt;
    expect(react.endsWith('inside <action> and </action>, for example: <action>(2, 3)</action>')).toBe(true);
    expect(react).toContain('First reason about which unopened cells');
    expect(zero).not.toContain('First reason');
    expect(zero).toContain('Do not write any reasoning. Give the one cell to open as (row, col) inside <action> and </action>');
    // Everything before the answer format is the same prompt.
    const head = (p: string) => p.slice(0, p.lastIndexOf('\n\n'));
    expect(head(zero)).toBe(head(react));
  });

  it('zero-shot rewrites the answer format of every environment', () => {
    for (const name of ENV_NAMES) {
      const env = createEnv(name);
      const initial = env.reset(taskSeed('eval', 0));
      const input = { style: 'full' as const, initial, memory: [], episode: 0, steps: [] };
      const react = agentPlayPrompt(env, { ...input, variant: 'react' });
      const zero = agentPlayPrompt(env, { ...input, variant: 'zero-shot' });
      expect(react, name).toContain('First reason');
      expect(zero, name).not.toContain('First reason');
      expect(zero, name).toContain('Do not write any reasoning. Give');
      expect(zero.endsWith('Reply with the <action>...</action> tag only.'), name).toBe(true);
      expect(agentPlayPrompt(env, { ...input, style: 'compact', variant: 'zero-shot' })).toBe(
        agentPlayPrompt(env, { ...input, style: 'compact', variant: 'react' }),
      );
    }
  });

  it('memory modes: history_only carries the trajectory and writes no reflection; both modes show both', async () => {
    const run = (memoryMode: 'history_only' | 'history_and_reflection') =>
      runTrial({
        env: new TinyBoard(),
        policy: failThenWin,
        seed: 0,
        group: 0,
        trial: 0,
        config: { episodes: 2, reflect: true, memoryMode, sampling: SAMPLING },
      });
    const historyOnly = await run('history_only');
    expect(historyOnly.rows.map((r) => r.phase)).toEqual(['play', 'play', 'play']);
    const block =
      'On trial #1 you took these steps:\nStep 1: action: (2, 2)\nObservation:\nRow 1: 1 ?\nRow 2: ? ?\n' +
      '(2, 2) was a mine. Game over.\nOn trial #1 the task was NOT completed.';
    expect(historyOnly.rows[1].prompt).toContain(`Memory of your earlier trials on this same task:\n${block}\n\n`);

    const both = await run('history_and_reflection');
    expect(both.rows.map((r) => r.phase)).toEqual(['play', 'reflect', 'play', 'play']);
    expect(both.rows[2].prompt).toContain(
      'On trial #1 you took these steps:\nStep 1: action: (2, 2)\nObservation:\nRow 1: 1 ?\nRow 2: ? ?\n' +
        '(2, 2) was a mine. Game over.\nOn trial #1 the task was NOT completed. Your reflection was: mine at (2, 2); avoid it',
    );
  });

  it("markRefused: a refused action is marked wherever the episode's actions are listed, and only with the option", async () => {
    // WebShop: search, then a click the results page does not offer (refused), then a listed product.
    const shopper = scripted((view) => {
      if (view.phase === 'reflect') return '<remark>wrong: no purchase.</remark>';
      if (view.steps.length === 0) return '<action>search[memory card]</action>';
      if (view.steps.length === 1) return '<action>click[nothing listed]</action>';
      return `<action>click[${view.env
        .admissibleActions()
        .find((a) => /^click\[b0/.test(a))!
        .slice(6, -1)}]</action>`;
    });
    const run = (style: 'compact' | 'full', markRefused?: boolean) =>
      runTrial({
        env: createEnv('webshop', { maxTurns: 3 }),
        policy: shopper,
        seed: taskSeed('train', 0),
        group: 0,
        trial: 0,
        config: { episodes: 2, reflect: true, memoryMode: 'history_and_reflection', style, markRefused, sampling: SAMPLING },
      });
    const marked = await run('compact', true);
    const plays = marked.rows.filter((r) => r.phase === 'play');
    expect(plays.map((r) => r.valid).slice(0, 3)).toEqual([true, false, true]);
    expect(plays[2].prompt).toContain('| acts: search[memory card] ; click[nothing listed] no | now:');
    const reflect = marked.rows.find((r) => r.phase === 'reflect')!;
    expect(reflect.prompt).toMatch(/\| acts: search\[memory card\] ; click\[nothing listed\] no ; click\[b0[0-9a-z]{8}\] \| end:/);
    // The next episode's memory block shows the earlier episode's actions, marked the same way.
    expect(plays[3].prompt).toMatch(/mem: T1 fail acts: search\[memory card\] ; click\[nothing listed\] no ; click\[b0[0-9a-z]{8}\] note:/);

    const plain = await run('compact');
    expect(plain.rows.map((r) => r.prompt.replaceAll(' no ;', ' ;').replaceAll(' no |', ' |'))).toEqual(
      marked.rows.map((r) => r.prompt.replaceAll(' no ;', ' ;').replaceAll(' no |', ' |')),
    );
    expect(plain.rows.filter((r) => r.phase === 'play')[2].prompt).toContain('| acts: search[memory card] ; click[nothing listed] | now:');

    const full = await run('full', true);
    expect(full.rows.filter((r) => r.phase === 'play')[2].prompt).toContain('Step 2: action: click[nothing listed] (refused)\nObservation:');
    expect(full.rows.filter((r) => r.phase === 'play')[2].prompt).toContain('Step 1: action: search[memory card]\nObservation:');
  });

  it('refusedLast: a refused last action is named again right before the answer, and only then', async () => {
    // WebShop: search, a click the results page does not offer (refused), the same click again (refused), a product.
    const shopper = scripted((view) => {
      if (view.phase === 'reflect') return '<remark>wrong: no purchase.</remark>';
      if (view.steps.length === 0) return '<action>search[memory card]</action>';
      if (view.steps.length < 3) return '<action>click[nothing listed]</action>';
      if (view.steps.length > 3) return '<action>click[buy now]</action>';
      return `<action>click[${view.env
        .admissibleActions()
        .find((a) => /^click\[b0/.test(a))!
        .slice(6, -1)}]</action>`;
    });
    const run = (style: 'compact' | 'full', refusedLast: boolean | 'flag') =>
      runTrial({
        env: createEnv('webshop', { maxTurns: 5 }),
        policy: shopper,
        seed: taskSeed('train', 0),
        group: 0,
        trial: 0,
        config: { episodes: 1, reflect: false, style, markRefused: true, refusedLast, sampling: SAMPLING },
      });
    const plays = (await run('compact', true)).rows.filter((r) => r.phase === 'play');
    expect(plays.map((r) => r.valid)).toEqual([true, false, false, true, true]);
    // After each refused click (turns 2 and 3), and only there, the click closes the prompt, marked as in the list.
    for (const i of [2, 3]) expect(plays[i].prompt.endsWith(' | click[nothing listed] no | act:'), plays[i].prompt).toBe(true);
    for (const i of [0, 1, 4]) expect(plays[i].prompt).not.toContain('] no | act:');
    // Nothing else in the prompts changes.
    const plain = (await run('compact', false)).rows.filter((r) => r.phase === 'play');
    expect(plays.map((r) => r.prompt.replace(' | click[nothing listed] no | act:', ' | act:'))).toEqual(plain.map((r) => r.prompt));
    const full = (await run('full', true)).rows.filter((r) => r.phase === 'play');
    expect(full[2].prompt).toContain('Current state:');
    expect(full[2].prompt.slice(full[2].prompt.indexOf('Current state:'))).toContain('\n\nYour last action, click[nothing listed], was refused.\n\n');
    expect(full[1].prompt).not.toContain('was refused.');
    expect(full[4].prompt).not.toContain('was refused.');
    // 'flag': the same places say only that the last action was refused, without the action to copy.
    const flagged = (await run('compact', 'flag')).rows.filter((r) => r.phase === 'play');
    for (const i of [2, 3]) expect(flagged[i].prompt.endsWith(' | no | act:'), flagged[i].prompt).toBe(true);
    expect(flagged.map((r) => r.prompt.replace(' | no | act:', ' | act:'))).toEqual(plain.map((r) => r.prompt));
    const fullFlag = (await run('full', 'flag')).rows.filter((r) => r.phase === 'play');
    expect(fullFlag[3].prompt).toContain('\n\nYour last action was refused.\n\n');
    expect(fullFlag[3].prompt).not.toContain('Your last action, ');
    expect(fullFlag.map((r) => r.prompt.replace('\n\nYour last action was refused.', ''))).toEqual(
      (await run('full', false)).rows.filter((r) => r.phase === 'play').map((r) => r.prompt),
    );
  });

  it('rejects bad trial options with E_ARG naming the option', async () => {
    const base = { env: new TinyBoard(), policy: failThenWin, seed: 0, group: 0, trial: 0 };
    for (const [config, name] of [
      [{ episodes: 0, reflect: true, sampling: SAMPLING }, 'episodes'],
      [{ episodes: 1, reflect: true, memoryMode: 'all', sampling: SAMPLING }, 'memoryMode'],
      [{ episodes: 1, reflect: true, sampling: { ...SAMPLING, topP: 2 } }, 'sampling.topP'],
      [{ episodes: 1, reflect: true, markRefused: 'yes', sampling: SAMPLING }, 'markRefused'],
      [{ episodes: 1, reflect: true, markRefused: true, style: 'paper', sampling: SAMPLING }, 'markRefused'],
      [{ episodes: 1, reflect: true, refusedLast: 1, sampling: SAMPLING }, 'refusedLast'],
      [{ episodes: 1, reflect: true, markRefused: true, refusedLast: 'flags', sampling: SAMPLING }, 'refusedLast'],
      [{ episodes: 1, reflect: true, refusedLast: 'flag', sampling: SAMPLING }, 'refusedLast'],
      [{ episodes: 1, reflect: true, refusedLast: true, sampling: SAMPLING }, 'refusedLast'],
    ] as const) {
      const err = await runTrial({ ...base, config: config as never }).catch((e) => e);
      expect(hasCode(err, 'E_ARG')).toBe(true);
      expect((err as Error).message).toContain(name);
    }
  });
});
