// Test doubles for the rollout tests: a 2x2 MineSweeper board laid out by hand, and a per-trial policy scripted
// turn by turn from the trial's view.

import { MineSweeperEnv } from '../../src/envs/minesweeper/env.js';
import type { GenerateRequest, GenerateResult, PolicyClient, TrialView } from '../../src/rollout/policy.js';
import { scriptedResult } from '../../src/rollout/scripted.js';
import { TRAIN_SAMPLING } from '../../src/rollout/policy.js';

export const SAMPLING = TRAIN_SAMPLING;

/**
 * 2x2 board, one mine at (2, 2), first reveal (1, 1). Every safe cell touches the mine, so each shows 1 and nothing
 * cascades. Initial board: "Row 1: 1 ?" / "Row 2: ? ?". reset(seed) ignores the seed and loads this board.
 */
export class TinyBoard extends MineSweeperEnv {
  constructor() {
    super({ rows: 2, cols: 2, mines: 1 });
  }
  override reset(_seed: number) {
    return this.load([3], 0);
  }
}

export const click = (r: number, c: number) => `I open a cell.\n<action>(${r}, ${c})</action>`;

/** A per-trial policy answering from a script keyed by what the view says (phase, episode, steps so far). */
export function scripted(answer: (view: TrialView, request: GenerateRequest) => string) {
  return (view: TrialView): PolicyClient => ({
    generate: async (request: GenerateRequest): Promise<GenerateResult> => scriptedResult(request, answer(view, request)),
  });
}
