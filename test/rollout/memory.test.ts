// Memory H(n) per mode against blocks written out by hand, and the agent's guards on the order of episodes.

import { describe, expect, it } from 'vitest';
import { TrialMemory, memoryUsesReflection } from '../../src/agent/memory.js';
import { hasCode } from '../../src/errors.js';

const ep0 = [
  { action: '(1, 2)', observation: 'B1' },
  { action: '(3, 3)', observation: 'B2\n(3, 3) was a mine. Game over.' },
];
const ep1 = [{ action: '(9, 9)', observation: 'B3' }];

function filled(mode: 'reflection_only' | 'history_only' | 'history_and_reflection', style: 'full' | 'compact') {
  const m = new TrialMemory({ mode, style });
  m.addFailedEpisode(0, ep0);
  m.setReflection('mine at (3, 3)');
  m.addFailedEpisode(1, ep1);
  m.setReflection('off the board');
  return m;
}

describe('TrialMemory', () => {
  it('reflection_only (the default): one reflection line per failed episode', () => {
    const m = new TrialMemory({ style: 'full' });
    expect(m.mode).toBe('reflection_only');
    expect(m.blocks()).toEqual([]);
    m.addFailedEpisode(0, ep0);
    m.setReflection('mine at (3, 3)');
    m.addFailedEpisode(1, ep1);
    m.setReflection('off the board');
    expect(m.blocks()).toEqual([
      'On trial #1 the task was NOT completed. Your reflection was: mine at (3, 3)',
      'On trial #2 the task was NOT completed. Your reflection was: off the board',
    ]);
  });

  it('history_only: the trajectory and "NOT completed", no reflection', () => {
    expect(filled('history_only', 'full').blocks()).toEqual([
      'On trial #1 you took these steps:\nStep 1: action: (1, 2)\nObservation:\nB1\n' +
        'Step 2: action: (3, 3)\nObservation:\nB2\n(3, 3) was a mine. Game over.\nOn trial #1 the task was NOT completed.',
      'On trial #2 you took these steps:\nStep 1: action: (9, 9)\nObservation:\nB3\nOn trial #2 the task was NOT completed.',
    ]);
  });

  it('history_and_reflection: both; compact style is one short line per episode', () => {
    expect(filled('history_and_reflection', 'full').blocks()[1]).toBe(
      'On trial #2 you took these steps:\nStep 1: action: (9, 9)\nObservation:\nB3\n' +
        'On trial #2 the task was NOT completed. Your reflection was: off the board',
    );
    expect(filled('history_and_reflection', 'compact').blocks()).toEqual([
      'T1 fail acts: (1, 2) ; (3, 3) note: mine at (3, 3)',
      'T2 fail acts: (9, 9) note: off the board',
    ]);
    expect(filled('reflection_only', 'compact').blocks()).toEqual(['T1 fail note: mine at (3, 3)', 'T2 fail note: off the board']);
  });

  it('windows long trajectories: only the last steps keep their observation', () => {
    const m = new TrialMemory({ mode: 'history_only', style: 'full', window: 1 });
    m.addFailedEpisode(0, ep0);
    expect(m.blocks()[0]).toContain('Step 1: action: (1, 2)\nObservation:\n...\nStep 2');
  });

  it('keeps a copy of the steps, so later changes to the caller array do not rewrite memory', () => {
    const steps = [...ep1];
    const m = new TrialMemory({ mode: 'history_only', style: 'compact' });
    m.addFailedEpisode(0, steps);
    steps.push({ action: 'later', observation: 'x' });
    expect(m.blocks()).toEqual(['T1 fail acts: (9, 9)']);
  });

  it('rejects unknown modes, episodes out of order and a reflection before any episode', () => {
    expect(() => new TrialMemory({ mode: 'everything' as never, style: 'full' })).toThrow(/memory mode/);
    const m = new TrialMemory({ style: 'full' });
    expect(() => m.setReflection('x')).toThrow(/no failed episode/);
    m.addFailedEpisode(1, []);
    try {
      m.addFailedEpisode(0, []);
      expect.unreachable();
    } catch (e) {
      expect(hasCode(e, 'E_ARG')).toBe(true);
    }
    expect(memoryUsesReflection('history_only')).toBe(false);
    expect(memoryUsesReflection('reflection_only')).toBe(true);
  });
});
