// Sokoban expert: plays the exact solver's shortest plan, movesPerTurn moves a turn (compact style: the moves alone),
// and writes reflections that name what went wrong (the move that got a box stuck, or the turns that ran out) and
// the shortest solution from the start: everything a reflection needs to win the same room in the next episode. The
// compact reflection, for small models, names only what the trial shows (a blocked move, the push that got a box
// stuck, each with the player's cell): what a model can copy from the trajectory it reflects on.

import type { Expert, PromptStyle, TrajectoryStep } from '../types.js';
import type { SokobanEnv } from './env.js';
import { parseSokobanMoves } from './parse.js';
import { applyMove, boxesOnTargets, cellLabel, cellName, isSolved, type Move, type SokobanRoom, type SokobanState } from './solver.js';

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
    const { room, graph, initialState, settings } = this.env;
    const replay = replayTrial(this.env, steps);
    if (this.style === 'compact') return compactReflection(room, replay);
    const problem = replay.stuck
      ? `Move ${replay.stuck.moveNumber} (${replay.stuck.move}) pushed the box to ${cellName(room, replay.stuck.pushedTo)}, where it got ` +
        `stuck: from there no sequence of moves puts every box on a target.`
      : `I made ${replay.moves} move(s) and ran out of turns with ${boxesOnTargets(room, replay.state)} of ` +
        `${replay.state.boxes.length} box(es) on targets; my moves did not follow a shortest route.`;
    const plan = graph.shortestPlan(initialState) ?? [];
    return `${problem} Plan: from the start play ${describePlan(plan, settings.movesPerTurn)}.`;
  }
}

/** A move of the replay and the cell the player stood on when making it. */
interface ReplayedMove {
  move: Move;
  from: number;
  /** 1-based number of the move in the episode. */
  moveNumber: number;
}

interface TrialReplay {
  /** Moves made, and the state after the last. */
  moves: number;
  state: SokobanState;
  /** The first move that moved nothing (a wall, or a box that could not move). */
  blocked: ReplayedMove | null;
  /** The push that left the room unsolvable, where the box went; the replay stops there. */
  stuck: (ReplayedMove & { pushedTo: number }) | null;
}

/** The trajectory replayed from the initial state, as the environment plays it, up to a win or the fatal push. */
function replayTrial(env: SokobanEnv, steps: readonly TrajectoryStep[]): TrialReplay {
  const { room, graph, settings } = env;
  let state: SokobanState = env.initialState;
  let moves = 0;
  let blocked: ReplayedMove | null = null;
  replay: for (const step of steps) {
    for (const move of parseSokobanMoves(step.action, settings.movesPerTurn)) {
      if (moves >= settings.maxMoves) break replay;
      const from = state.player;
      const out = applyMove(room, state, move);
      moves++;
      state = out.state;
      if (isSolved(room, state)) break replay;
      if (!out.moved && blocked === null) blocked = { move, from, moveNumber: moves };
      if (out.pushedTo >= 0 && graph.distanceToGoal(state) === -1) {
        return { moves, state, blocked, stuck: { move, from, moveNumber: moves, pushedTo: out.pushedTo } };
      }
    }
  }
  return { moves, state, blocked, stuck: null };
}

/**
 * The compact reflection: only facts the failed trial shows, each as a move and the cell the player stood on, so a
 * small model can copy them from the trajectory and the next episode can avoid them (as MineSweeper's reflection
 * names the mine): `blocked: right at (4, 3).` for the first move that moved nothing, `stuck: up at (5, 3).` for the
 * push that left the room unsolvable, `out of turns: k/n placed.` when neither happened.
 */
function compactReflection(room: SokobanRoom, replay: TrialReplay): string {
  const facts: string[] = [];
  if (replay.blocked) facts.push(`blocked: ${replay.blocked.move} at ${cellLabel(room, replay.blocked.from)}.`);
  if (replay.stuck) facts.push(`stuck: ${replay.stuck.move} at ${cellLabel(room, replay.stuck.from)}.`);
  if (facts.length === 0) facts.push(`out of turns: ${boxesOnTargets(room, replay.state)}/${replay.state.boxes.length} placed.`);
  return facts.join(' ');
}

function describePlan(plan: readonly Move[], perTurn: number): string {
  const turns: string[] = [];
  for (let i = 0; i < plan.length; i += perTurn) turns.push(plan.slice(i, i + perTurn).join(', '));
  return `${turns.join(' | ')} (${plan.length} moves, ${perTurn} per turn)`;
}

export function createSokobanExpert(env: SokobanEnv, options?: ExpertOptions): SokobanExpert {
  return new SokobanExpert(env, options);
}
