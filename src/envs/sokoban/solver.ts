// Sokoban rules and the exact solver. A room is a grid of walls and targets; a state is the player's cell and the
// boxes' cells. The solver enumerates every state reachable from a start (rooms are small: a 6x6 room with 2 boxes has
// at most a few thousand), then runs a reverse breadth-first search from the solved states. That gives, for every
// state the player can ever be in, the exact number of moves to a solution (or "dead": none exists), so shortest plans
// and dead-state detection (SPEC §8) are table lookups during play.

import { LamerError } from '../../errors.js';

export const MOVES = ['up', 'down', 'left', 'right'] as const;
export type Move = (typeof MOVES)[number];

export interface SokobanRoom {
  readonly width: number;
  readonly height: number;
  /** 1 where the cell is a wall; row-major, index = row * width + col. */
  readonly walls: Uint8Array;
  /** 1 where the cell is a target. */
  readonly targets: Uint8Array;
}

export interface SokobanState {
  /** The player's cell index. */
  readonly player: number;
  /** Box cell indices, sorted ascending so equal states have equal keys. */
  readonly boxes: readonly number[];
}

export interface MoveOutcome {
  state: SokobanState;
  /** The player changed cell (false when walking into a wall or an immovable box). */
  moved: boolean;
  /** The cell the pushed box came from, or -1 when no box moved. */
  pushedFrom: number;
  /** The cell the pushed box went to, or -1 when no box moved. */
  pushedTo: number;
  /** +1 box pushed onto a target, -1 pushed off one, 0 otherwise. */
  targetChange: number;
}

export function moveOffset(move: Move): [number, number] {
  switch (move) {
    case 'up':
      return [-1, 0];
    case 'down':
      return [1, 0];
    case 'left':
      return [0, -1];
    case 'right':
      return [0, 1];
  }
}

/** The neighbouring cell in a direction, or -1 off the grid. */
export function neighbour(room: SokobanRoom, cell: number, move: Move): number {
  const [dr, dc] = moveOffset(move);
  const r = Math.floor(cell / room.width) + dr;
  const c = (cell % room.width) + dc;
  if (r < 0 || c < 0 || r >= room.height || c >= room.width) return -1;
  return r * room.width + c;
}

function isOpen(room: SokobanRoom, cell: number): boolean {
  return cell >= 0 && room.walls[cell] === 0;
}

/** One move by the Sokoban rules: walk, or push one box if the cell behind it is free; otherwise stay. */
export function applyMove(room: SokobanRoom, state: SokobanState, move: Move): MoveOutcome {
  const next = neighbour(room, state.player, move);
  const stay: MoveOutcome = { state, moved: false, pushedFrom: -1, pushedTo: -1, targetChange: 0 };
  if (!isOpen(room, next)) return stay;
  const boxIndex = state.boxes.indexOf(next);
  if (boxIndex < 0) {
    return { state: { player: next, boxes: state.boxes }, moved: true, pushedFrom: -1, pushedTo: -1, targetChange: 0 };
  }
  const beyond = neighbour(room, next, move);
  if (!isOpen(room, beyond) || state.boxes.includes(beyond)) return stay;
  const boxes = state.boxes.slice();
  boxes[boxIndex] = beyond;
  boxes.sort((a, b) => a - b);
  const targetChange = room.targets[beyond] - room.targets[next];
  return { state: { player: next, boxes }, moved: true, pushedFrom: next, pushedTo: beyond, targetChange };
}

export function isSolved(room: SokobanRoom, state: SokobanState): boolean {
  return state.boxes.every((b) => room.targets[b] === 1);
}

export function boxesOnTargets(room: SokobanRoom, state: SokobanState): number {
  let n = 0;
  for (const b of state.boxes) n += room.targets[b];
  return n;
}

/** A number that identifies a state within one room: player and sorted boxes as digits in base width*height. */
export function stateKey(room: SokobanRoom, state: SokobanState): number {
  const n = room.width * room.height;
  let key = state.player;
  let scale = n;
  for (const b of state.boxes) {
    key += b * scale;
    scale *= n;
  }
  return key;
}

/** Beyond this many reachable states, exact analysis is refused (the room is too large for this solver). */
export const DEFAULT_STATE_LIMIT = 1_000_000;

/**
 * Every state reachable from a start, with the exact distance (in moves) from each to the nearest solved state.
 * Solved states are terminal: play stops there, so their successors are not explored.
 */
export class SokobanGraph {
  private readonly index = new Map<number, number>();
  private readonly distance: Int32Array;

  private constructor(
    readonly room: SokobanRoom,
    keys: number[],
    distance: Int32Array,
  ) {
    keys.forEach((k, i) => this.index.set(k, i));
    this.distance = distance;
  }

  /** Explore from `start`; null when more than `limit` states are reachable. */
  static explore(room: SokobanRoom, start: SokobanState, limit = DEFAULT_STATE_LIMIT): SokobanGraph | null {
    const cells = room.width * room.height;
    if (Math.pow(cells, start.boxes.length + 1) > Number.MAX_SAFE_INTEGER) {
      throw new LamerError('E_ENV', `sokoban room ${room.width}x${room.height} with ${start.boxes.length} boxes is too large to solve exactly`);
    }
    const keys: number[] = [];
    const states: SokobanState[] = [];
    const index = new Map<number, number>();
    const successors: number[] = []; // 4 per state, -1 where the move leaves the state unchanged
    const solved: boolean[] = [];
    const add = (s: SokobanState): number => {
      const key = stateKey(room, s);
      const known = index.get(key);
      if (known !== undefined) return known;
      const id = states.length;
      index.set(key, id);
      keys.push(key);
      states.push(s);
      solved.push(isSolved(room, s));
      return id;
    };
    add({ player: start.player, boxes: [...start.boxes].sort((a, b) => a - b) });
    for (let head = 0; head < states.length; head++) {
      if (states.length > limit) return null;
      for (let m = 0; m < 4; m++) {
        if (solved[head]) {
          successors.push(-1);
          continue;
        }
        const out = applyMove(room, states[head], MOVES[m]);
        successors.push(out.moved ? add(out.state) : -1);
      }
    }
    // Reverse BFS from solved states over the predecessor lists (CSR layout).
    const count = states.length;
    const predStart = new Int32Array(count + 1);
    for (const t of successors) if (t >= 0) predStart[t + 1]++;
    for (let i = 0; i < count; i++) predStart[i + 1] += predStart[i];
    const fill = predStart.slice(0, count);
    const preds = new Int32Array(predStart[count]);
    for (let s = 0; s < count; s++) {
      for (let m = 0; m < 4; m++) {
        const t = successors[s * 4 + m];
        if (t >= 0) preds[fill[t]++] = s;
      }
    }
    const distance = new Int32Array(count).fill(-1);
    const queue = new Int32Array(count);
    let tail = 0;
    for (let s = 0; s < count; s++) {
      if (solved[s]) {
        distance[s] = 0;
        queue[tail++] = s;
      }
    }
    for (let head = 0; head < tail; head++) {
      const t = queue[head];
      for (let p = predStart[t]; p < predStart[t + 1]; p++) {
        const s = preds[p];
        if (distance[s] < 0) {
          distance[s] = distance[t] + 1;
          queue[tail++] = s;
        }
      }
    }
    return new SokobanGraph(room, keys, distance);
  }

  get size(): number {
    return this.distance.length;
  }

  /** Moves to the nearest solution; -1 when the state is dead; undefined when it was never reachable. */
  distanceToGoal(state: SokobanState): number | undefined {
    const i = this.index.get(stateKey(this.room, state));
    return i === undefined ? undefined : this.distance[i];
  }

  /** A shortest plan from `state` to a solved state; null when the state is dead or unknown. */
  shortestPlan(state: SokobanState): Move[] | null {
    let d = this.distanceToGoal(state);
    if (d === undefined || d < 0) return null;
    const plan: Move[] = [];
    let s = state;
    while (d > 0) {
      let stepped = false;
      for (const move of MOVES) {
        const out = applyMove(this.room, s, move);
        if (out.moved && this.distanceToGoal(out.state) === d - 1) {
          plan.push(move);
          s = out.state;
          d--;
          stepped = true;
          break;
        }
      }
      if (!stepped) throw new LamerError('E_ENV', 'sokoban solver table is inconsistent (no successor one move closer)');
    }
    return plan;
  }
}

/** Symbols of the text rendering (SPEC §8). */
export const SYMBOLS = {
  wall: '#',
  floor: '_',
  target: 'O',
  box: 'X',
  boxOnTarget: '√',
  player: 'P',
  playerOnTarget: 'S',
} as const;

/**
 * The rendering of SPEC §8: one row per line, 1-based row numbers, one symbol per cell (`1: # _ P X _ #`); the paper's
 * numbers rows from 0 (`firstRow` 0).
 */
export function renderRoom(room: SokobanRoom, state: SokobanState, firstRow = 1): string {
  const lines: string[] = [];
  for (let r = 0; r < room.height; r++) {
    const cells: string[] = [];
    for (let c = 0; c < room.width; c++) {
      const i = r * room.width + c;
      const target = room.targets[i] === 1;
      let symbol: string;
      if (room.walls[i] === 1) symbol = SYMBOLS.wall;
      else if (state.player === i) symbol = target ? SYMBOLS.playerOnTarget : SYMBOLS.player;
      else if (state.boxes.includes(i)) symbol = target ? SYMBOLS.boxOnTarget : SYMBOLS.box;
      else symbol = target ? SYMBOLS.target : SYMBOLS.floor;
      cells.push(symbol);
    }
    lines.push(`${r + firstRow}: ${cells.join(' ')}`);
  }
  return lines.join('\n');
}

/** 1-based `(r, c)` of a cell, as compact boards and reflections name it (one token of the compact tokenizers). */
export function cellLabel(room: SokobanRoom, cell: number): string {
  return `(${Math.floor(cell / room.width) + 1}, ${(cell % room.width) + 1})`;
}

/** 1-based "row r, column c" of a cell, as prompts and reflections name it. */
export function cellName(room: SokobanRoom, cell: number): string {
  return `row ${Math.floor(cell / room.width) + 1}, column ${(cell % room.width) + 1}`;
}
