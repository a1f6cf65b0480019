// The paper's Sokoban rooms (LaMer's `sokoban/room_utils.py` and `sokoban/env.py`, adapted there from gym-sokoban),
// step for step on the same random streams: CPython's `random` and numpy's legacy global state, both seeded with the
// task's seed. A room is a random walk of 3x3 floor masks, a player and boxes placed at numpy-drawn free cells, a
// depth-first search over pulls that keeps the state with the largest box swaps x box displacement, and 0-3 random
// player steps; the room is accepted when its shortest solution takes 5-21 moves, else the next attempt runs (after 10
// attempts the last room is kept). Cell codes are the original's: 0 wall, 1 floor, 2 target, 3 box on a target,
// 4 box, 5 player.
//
// Where the original cannot place a room (too few free cells, or no pull moves any box) it retries with
// `abs(hash(str(seed))) % 2**32`, which differs from process to process (PYTHONHASHSEED). lamer retries with the
// 32-bit FNV-1a hash of the seed's decimal digits instead, deterministic; docs/spec.md §8 says so.
import { LamerError } from '../../errors.js';
import { NumpyRandomState, PyRandom } from '../../util/mt19937.js';

export type Grid = number[][];

export interface PaperRoomOptions {
  rows: number;
  cols: number;
  boxes: number;
  /** Steps of the topology walk (gym-sokoban's default: 1.7 x (rows + cols), 20 for 6x6). */
  walkSteps: number;
  /** Depth of the reverse-play search and of the shortest-path search (LaMer: 100). */
  searchDepth: number;
  minSolution: number;
  maxSolution: number;
  attempts: number;
}

export const PAPER_ROOM_DEFAULTS: PaperRoomOptions = Object.freeze({
  rows: 6,
  cols: 6,
  boxes: 2,
  walkSteps: 20,
  searchDepth: 100,
  minSolution: 5,
  maxSolution: 21,
  attempts: 10,
});

export interface PaperRoom {
  /** Walls, floor and targets. */
  fixed: Grid;
  /** The start: boxes (4, or 3 on a target), the player (5) over the fixed cells. */
  state: Grid;
  /** Moves of the shortest solution (0: none found within the search depth). */
  solution: number;
  /** The seed the room was made from: the task's, or its hash after the original's retry. */
  seedUsed: number;
}

const MASKS: Grid[] = [
  [
    [0, 0, 0],
    [1, 1, 1],
    [0, 0, 0],
  ],
  [
    [0, 1, 0],
    [0, 1, 0],
    [0, 1, 0],
  ],
  [
    [0, 0, 0],
    [1, 1, 0],
    [0, 1, 0],
  ],
  [
    [0, 0, 0],
    [1, 1, 0],
    [1, 1, 0],
  ],
  [
    [0, 0, 0],
    [0, 1, 1],
    [0, 1, 0],
  ],
];
const DIRECTIONS: [number, number][] = [
  [1, 0],
  [0, 1],
  [-1, 0],
  [0, -1],
];
/** CHANGE_COORDINATES: actions 0-3 are up, down, left, right. */
const CHANGE: [number, number][] = [
  [-1, 0],
  [1, 0],
  [0, -1],
  [0, 1],
];

class RoomFailure extends Error {}

const copyGrid = (g: Grid): Grid => g.map((r) => [...r]);
const key = (g: Grid): string => g.map((r) => r.join('')).join('/');

function cellsWhere(g: Grid, value: number): [number, number][] {
  const out: [number, number][] = [];
  g.forEach((row, r) => row.forEach((v, c) => v === value && out.push([r, c])));
  return out;
}

function topology(py: PyRandom, rows: number, cols: number, steps: number): Grid {
  let direction = py.sample(DIRECTIONS, 1)[0];
  const position = [py.randint(1, rows - 1), py.randint(1, cols - 1)];
  const level: Grid = Array.from({ length: rows }, () => new Array<number>(cols).fill(0));
  for (let s = 0; s < steps; s++) {
    if (py.random() < 0.35) direction = py.sample(DIRECTIONS, 1)[0];
    position[0] = Math.max(Math.min(position[0] + direction[0], rows - 2), 1);
    position[1] = Math.max(Math.min(position[1] + direction[1], cols - 2), 1);
    const mask = py.sample(MASKS, 1)[0];
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) level[position[0] - 1 + i][position[1] - 1 + j] += mask[i][j];
  }
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) level[r][c] = r === 0 || c === 0 || r === rows - 1 || c === cols - 1 ? 0 : level[r][c] > 0 ? 1 : 0;
  }
  return level;
}

function placeBoxesAndPlayer(np: NumpyRandomState, room: Grid, boxes: number): void {
  let free = cellsWhere(room, 1);
  if (free.length <= boxes + 1) throw new RoomFailure(`not enough free spots (${free.length}) to place 1 player and ${boxes} boxes`);
  const [pr, pc] = free[np.randint(0, free.length)];
  room[pr][pc] = 5;
  for (let n = 0; n < boxes; n++) {
    free = cellsWhere(room, 1);
    const [br, bc] = free[np.randint(0, free.length)];
    room[br][bc] = 2;
  }
}

/** box target (row-major index) -> where its box is now (row-major index). */
type BoxMapping = Map<number, number>;

function displacement(mapping: BoxMapping, cols: number): number {
  let score = 0;
  for (const [target, box] of mapping) score += Math.abs(Math.floor(box / cols) - Math.floor(target / cols)) + Math.abs((box % cols) - (target % cols));
  return score;
}

function reverseMove(state: Grid, structure: Grid, mapping: BoxMapping, lastPull: number, action: number, cols: number): number {
  const [[pr, pc]] = cellsWhere(state, 5);
  const [dr, dc] = CHANGE[action % 4];
  const nr = pr + dr;
  const nc = pc + dc;
  if (state[nr][nc] === 1 || state[nr][nc] === 2) {
    state[pr][pc] = structure[pr][pc];
    state[nr][nc] = 5;
    if (action < 4) {
      const br = pr - dr;
      const bc = pc - dc;
      if (state[br][bc] === 3 || state[br][bc] === 4) {
        state[pr][pc] = 3;
        state[br][bc] = structure[br][bc];
        for (const [target, box] of mapping) {
          if (box === br * cols + bc) {
            mapping.set(target, pr * cols + pc);
            lastPull = target;
          }
        }
      }
    }
  }
  return lastPull;
}

function reversePlaying(state: Grid, structure: Grid, depth: number, cols: number): { room: Grid; mapping: BoxMapping } {
  const mapping: BoxMapping = new Map();
  for (const [r, c] of cellsWhere(structure, 2)) mapping.set(r * cols + c, r * cols + c);
  const boxes = mapping.size;
  const explored = new Set<string>();
  let bestScore = -1;
  let best: Grid = state;
  let bestMapping = mapping;
  const dfs = (s: Grid, m: BoxMapping, swaps: number, lastPull: number, ttlIn: number): void => {
    const ttl = ttlIn - 1;
    if (ttl <= 0 || explored.size >= 300000) return;
    const k = key(s);
    if (explored.has(k)) return;
    let score = swaps * displacement(m, cols);
    if (cellsWhere(s, 2).length !== boxes) score = 0;
    if (score > bestScore) {
      best = copyGrid(s);
      bestScore = score;
      bestMapping = new Map(m);
    }
    explored.add(k);
    for (let action = 0; action < 4; action++) {
      const next = copyGrid(s);
      const nextMapping = new Map(m);
      const nextPull = reverseMove(next, structure, nextMapping, lastPull, action, cols);
      dfs(next, nextMapping, nextPull !== lastPull ? swaps + 1 : swaps, nextPull, ttl);
    }
  };
  dfs(state, mapping, 0, -1, depth);
  return { room: best, mapping: bestMapping };
}

function randomPlayerMovement(py: PyRandom, state: Grid, structure: Grid, moveProbability: number): void {
  if (py.random() > moveProbability) return;
  let [[pr, pc]] = cellsWhere(state, 5);
  const previous = [pr * 100 + pc];
  let steps = 0;
  while (steps < 3) {
    const valid: [number, number][] = [];
    for (let action = 0; action < 4; action++) {
      const nr = pr + CHANGE[action][0];
      const nc = pc + CHANGE[action][1];
      if ((state[nr][nc] === 1 || state[nr][nc] === 2) && !previous.includes(nr * 100 + nc)) valid.push([nr, nc]);
    }
    if (valid.length === 0) break;
    const [nr, nc] = py.choice(valid);
    state[pr][pc] = structure[pr][pc];
    state[nr][nc] = 5;
    [pr, pc] = [nr, nc];
    previous.push(pr * 100 + pc);
    steps++;
    if (steps >= 3 || py.random() > 0.5) break;
  }
}

function generateRoom(py: PyRandom, np: NumpyRandomState, o: PaperRoomOptions): { fixed: Grid; state: Grid } {
  let structure: Grid = [];
  let state: Grid = [];
  let mapping: BoxMapping = new Map();
  for (let t = 0; t < 4; t++) {
    const room = topology(py, o.rows, o.cols, o.walkSteps);
    placeBoxesAndPlayer(np, room, o.boxes);
    structure = room.map((r) => r.map((v) => (v === 5 ? 1 : v)));
    const start = room.map((r) => r.map((v) => (v === 2 ? 4 : v)));
    const played = reversePlaying(start, structure, o.searchDepth, o.cols);
    state = played.room.map((r) => r.map((v) => (v === 3 ? 4 : v)));
    mapping = played.mapping;
    if (displacement(mapping, o.cols) > 0) break;
  }
  const score = displacement(mapping, o.cols);
  if (score === 0) throw new RoomFailure('generated a room with score 0');
  randomPlayerMovement(py, state, structure, score === 1 ? 0.8 : 0.5);
  return { fixed: structure, state };
}

/** Moves of the shortest solution of `state` (breadth first over whole states, at most `depth` moves); 0 if none. */
export function shortestSolution(fixed: Grid, state: Grid, depth: number): number {
  const rows = fixed.length;
  const cols = fixed[0].length;
  let frontier: Grid[] = [state];
  const explored = new Set<string>();
  for (let length = 0; length <= depth && frontier.length > 0; length++) {
    const next: Grid[] = [];
    for (const s of frontier) {
      const k = key(s);
      if (explored.has(k)) continue;
      explored.add(k);
      if (cellsWhere(s, 4).length === 0) return length;
      const [[pr, pc]] = cellsWhere(s, 5);
      for (const [dr, dc] of CHANGE) {
        const nr = pr + dr;
        const nc = pc + dc;
        if (nr < 0 || nr >= rows || nc < 0 || nc >= cols || fixed[nr][nc] === 0) continue;
        const n = copyGrid(s);
        if (s[nr][nc] === 3 || s[nr][nc] === 4) {
          const br = nr + dr;
          const bc = nc + dc;
          if (br < 0 || br >= rows || bc < 0 || bc >= cols || fixed[br][bc] === 0 || s[br][bc] === 3 || s[br][bc] === 4) continue;
          n[nr][nc] = fixed[nr][nc];
          n[br][bc] = fixed[br][bc] === 2 ? 3 : 4;
        }
        n[pr][pc] = fixed[pr][pc];
        n[nr][nc] = 5;
        next.push(n);
      }
    }
    frontier = next;
  }
  return 0;
}

/** The 32-bit FNV-1a hash of the seed's decimal digits: lamer's stand-in for the original's per-process hash retry. */
export function retrySeed(seed: number): number {
  let h = 0x811c9dc5;
  for (const ch of String(seed)) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** The room LaMer's SokobanEnv.reset(seed) makes (its attempt loop included), on ported random streams. */
export function paperRoom(seed: number, options: Partial<PaperRoomOptions> = {}): PaperRoom {
  const o = { ...PAPER_ROOM_DEFAULTS, ...options };
  let current = seed;
  for (let retry = 0; retry < 100; retry++) {
    if (!Number.isInteger(current) || current < 0 || current > 0xffffffff) {
      throw new LamerError('E_ENV', `sokoban (fidelity paper): seed ${current} is outside numpy's seed range [0, 2^32); use seeds below 4294967296`);
    }
    const py = new PyRandom(current);
    const np = new NumpyRandomState(current);
    try {
      let room = generateRoom(py, np, o);
      let solution = shortestSolution(room.fixed, room.state, o.searchDepth);
      for (let attempt = 1; attempt < o.attempts && !(solution >= o.minSolution && solution <= o.maxSolution); attempt++) {
        room = generateRoom(py, np, o);
        solution = shortestSolution(room.fixed, room.state, o.searchDepth);
      }
      return { fixed: room.fixed, state: room.state, solution, seedUsed: current };
    } catch (e) {
      if (!(e instanceof RoomFailure)) throw e;
      current = retrySeed(current);
    }
  }
  throw new LamerError('E_ENV', `sokoban (fidelity paper): no room for seed ${seed} after 100 retries`);
}
