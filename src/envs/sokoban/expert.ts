// Sokoban expert: plays the exact solver's shortest plan, movesPerTurn moves a turn (compact style: the moves alone),
// and writes reflections that name what went wrong (the move that got a box stuck, or the turns that ran out) and
// the shortest solution from the start: everything a reflection needs to win the same room in the next episode. The
// compact reflection, for small models, names only what the trial shows (a blocked move, the push that got a box
// stuck, each with the player's cell): what a model can copy from the trajectory it reflects on.

import type { Expert, PromptStyle, TrajectoryStep } from '../types.js';
import type { SokobanEnv } from './env.js';
import { parseSokobanMoves } from './parse.js';
import { applyMove, boxesOnTargets, cellName, isSolved, type Move, type SokobanRoom, type SokobanState } from './solver.js';

export interface ExpertOptions {
  /** `compact` writes terse reflections for tiny models (the compact prompt style); default `full`. */
  style?: PromptStyle;
}

export class SokobanExpert implements Expert {
  readonly style: PromptStyle;

  constructor(
    readonly env: SokobanEnv,
    options: ExpertOptions = {},
  ) {
    this.style = options.style ?? 'full';
  }

  act(): string {
    const plan = this.env.planFromCurrent();
    if (plan === null || plan.length === 0) {
      // Dead or already solved: there is nothing useful to do, but the answer stays well-formed.
      return this.style === 'compact' ? '<action>up</action>' : 'No move can place every box from here.\n<action>up</action>';
    }
    const next = plan.slice(0, this.env.settings.movesPerTurn);
    // Compact: the moves alone; a tiny model learns the board-to-move mapping, not to write out a search.
    if (this.style === 'compact') return `<action>${next.join(', ')}</action>`;
    return (
      `The shortest solution from this state takes ${plan.length} move(s): ${plan.join(', ')}. ` +
      `I play the next ${next.length}.\n<action>${next.join(', ')}</action>`
    );
  }

  reflect(steps: TrajectoryStep[]): string {
    const remark = `<remark>${this.reflectionText(steps)}</remark>`;
    return this.style === 'compact' ? remark : `I review the trial.\n${remark}`;
  }

  /** What went wrong in a trajectory replayed from the initial state, and the plan for the next trial. */
  reflectionText(steps: readonly TrajectoryStep[]): string {
    if (this.style === 'compact') return this.compactReflection(steps);
    const env = this.env;
    const { room, graph } = env;
    let state: SokobanState = env.initialState;
    let moveCount = 0;
    let problem: string | null = null;
    replay: for (const step of steps) {
      for (const move of parseSokobanMoves(step.action, env.settings.movesPerTurn)) {
        if (moveCount >= env.settings.maxMoves) break replay;
        const out = applyMove(room, state, move);
        moveCount++;
        state = out.state;
        if (isSolved(room, state)) break replay;
        if (out.pushedTo >= 0 && graph.distanceToGoal(state) === -1) {
          problem =
            `Move ${moveCount} (${move}) pushed the box to ${cellName(room, out.pushedTo)}, where it got stuck: ` +
            `from there no sequence of moves puts every box on a target.`;
          break replay;
        }
      }
    }
    if (problem === null) {
      const placed = boxesOnTargets(room, state);
      problem =
        `I made ${moveCount} move(s) and ran out of turns with ${placed} of ${state.boxes.length} box(es) on ` +
        `targets; my moves did not follow a shortest route.`;
    }
    const plan = graph.shortestPlan(env.initialState) ?? [];
    return `${problem} Plan: from the start play ${describePlan(plan, env.settings.movesPerTurn)}.`;
  }

  /**
   * The compact reflection: only facts the failed trial shows, each as a move and the cell the player stood on, so a
   * small model can copy them from the trajectory and the next episode can avoid them (as MineSweeper's reflection
   * names the mine): `blocked: right at (4, 3).` for the first move that moved nothing (a wall, or a box that could
   * not move), `stuck: up at (5, 3).` for the push that left the room unsolvable, `out of turns: k/n placed.` when
   * neither happened.
   */
  compactReflection(steps: readonly TrajectoryStep[]): string {
    const env = this.env;
    const { room, graph } = env;
    let state: SokobanState = env.initialState;
    let moveCount = 0;
    let blocked: string | null = null;
    let stuck: string | null = null;
    replay: for (const step of steps) {
      for (const move of parseSokobanMoves(step.action, env.settings.movesPerTurn)) {
        if (moveCount >= env.settings.maxMoves) break replay;
        const from = state.player;
        const out = applyMove(room, state, move);
        moveCount++;
        state = out.state;
        if (isSolved(room, state)) break replay;
        if (!out.moved && blocked === null) blocked = `blocked: ${move} at ${compactCell(room, from)}.`;
        if (out.pushedTo >= 0 && graph.distanceToGoal(state) === -1) {
          stuck = `stuck: ${move} at ${compactCell(room, from)}.`;
          break replay;
        }
      }
    }
    const facts = [blocked, stuck].filter((f): f is string => f !== null);
    if (facts.length === 0) facts.push(`out of turns: ${boxesOnTargets(room, state)}/${state.boxes.length} placed.`);
    return facts.join(' ');
  }
}

function compactCell(room: SokobanRoom, cell: number): string {
  return `(${Math.floor(cell / room.width) + 1}, ${(cell % room.width) + 1})`;
}

function describePlan(plan: readonly Move[], perTurn: number): string {
  const turns: string[] = [];
  for (let i = 0; i < plan.length; i += perTurn) turns.push(plan.slice(i, i + perTurn).join(', '));
  return `${turns.join(' | ')} (${plan.length} moves, ${perTurn} per turn)`;
}

export function createSokobanExpert(env: SokobanEnv, options?: ExpertOptions): SokobanExpert {
  return new SokobanExpert(env, options);
}
