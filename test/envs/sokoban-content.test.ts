// Sokoban held out by content, as MineSweeper is: a training seed's room is training content and an evaluation
// seed's room evaluation content (by the content hash of its walls, targets, boxes and player), so no evaluation room
// is ever a training room, whatever seeds are drawn; taskKey names that content.
import { describe, expect, it } from 'vitest';
import { SokobanEnv } from '../../src/envs/sokoban/env.js';
import { EVAL_SEEDS, SELECT_SEEDS, TRAIN_SEEDS, contentSplit } from '../../src/envs/common/seeds.js';

describe('Sokoban content split', () => {
  it('training, selection and evaluation seeds give rooms of their own content split only, and no key is shared', () => {
    const env = new SokobanEnv();
    const keys = new Map<string, string>();
    for (const [split, start] of [
      ['train', TRAIN_SEEDS.start],
      ['select', SELECT_SEEDS.start],
      ['eval', EVAL_SEEDS.start],
    ] as const) {
      for (let i = 0; i < 60; i++) {
        env.reset(start + i);
        const key = env.taskKey();
        expect(key.startsWith('sokoban:6x6:')).toBe(true);
        expect(contentSplit(key.slice('sokoban:'.length))).toBe(split);
        const before = keys.get(key);
        if (before !== undefined) expect(before).toBe(split);
        keys.set(key, split);
      }
    }
    // Different seeds mostly give different rooms.
    expect(keys.size).toBeGreaterThan(150);
  });

  it('the key is the room: a restart keeps it, another seed changes it; the paper fidelity has keys too', () => {
    const env = new SokobanEnv();
    env.reset(7);
    const key = env.taskKey();
    env.step('<action>up, up, left</action>');
    env.restart();
    expect(env.taskKey()).toBe(key);
    env.reset(8);
    expect(env.taskKey()).not.toBe(key);
    const paper = new SokobanEnv({ fidelity: 'paper' });
    paper.reset(0);
    expect(paper.taskKey()).toMatch(/^sokoban:6x6:/);
  });
});
