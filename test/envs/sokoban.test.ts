// Sokoban: hand-built rooms with rewards worked out by hand, the solver against an independent breadth-first search
// written here from the rules (string states, its own move code), determinism, restart and the expert.

import { describe, expect, it } from 'vitest';
import { hasCode } from '../../src/errors.js';
import { Rng } from '../../src/util/rng.js';
import { SokobanEnv } from '../../src/envs/sokoban/env.js';
import { SokobanExpert } from '../../src/envs/sokoban/expert.js';
import { parseSokobanMoves, parseSokobanRoom } from '../../src/envs/sokoban/parse.js';
import { renderRoom } from '../../src/envs/sokoban/solver.js';
import { compactSokobanBoard } from '../../src/envs/sokoban/prompts.js';

/** Independent reference: shortest solution length by BFS over picture strings; -1 when unsolvable. */
function referenceShortest(picture: string): number {
  const grid = picture.split('\n').map((l) => l.replace(/^\d+: /, '').split(' '));
  const h = grid.length;
  const w = grid[0].length;
  const wall = (r: number, c: number) => grid[r][c] === '#';
  const target = (r: number, c: number) => 'O√S'.includes(grid[r][c]);
  let pr = 0;
  let pc = 0;
  const boxes: string[] = [];
  grid.forEach((row, r) =>
    row.forEach((s, c) => {
      if (s === 'P' || s === 'S') [pr, pc] = [r, c];
      if (s === 'X' || s === '√') boxes.push(`${r},${c}`);
    }),
  );
  const key = (r: number, c: number, bs: string[]) => `${r},${c}|${[...bs].sort().join(';')}`;
  const solved = (bs: string[]) => bs.every((b) => target(...(b.split(',').map(Number) as [number, number])));
  if (solved(boxes)) return 0;
  const seen = new Set([key(pr, pc, boxes)]);
  let frontier: [number, number, string[]][] = [[pr, pc, boxes]];
  for (let depth = 1; frontier.length > 0; depth++) {
    const next: [number, number, string[]][] = [];
    for (const [r, c, bs] of frontier) {
      for (const [dr, dc] of [
        [-1, 0],
        [1, 0],
        [0, -1],
        [0, 1],
      ]) {
        const nr = r + dr;
        const nc = c + dc;
        if (nr < 0 || nc < 0 || nr >= h || nc >= w || wall(nr, nc)) continue;
        let nbs = bs;
        const hit = bs.indexOf(`${nr},${nc}`);
        if (hit >= 0) {
          const br = nr + dr;
          const bc = nc + dc;
          if (br < 0 || bc < 0 || br >= h || bc >= w || wall(br, bc) || bs.includes(`${br},${bc}`)) continue;
          nbs = bs.slice();
          nbs[hit] = `${br},${bc}`;
        }
        const k = key(nr, nc, nbs);
        if (seen.has(k)) continue;
        if (solved(nbs)) return depth;
        seen.add(k);
        next.push([nr, nc, nbs]);
      }
    }
    frontier = next;
  }
  return -1;
}

const ROOM_A = ['1: # # # # # # #', '2: # P X O _ _ #', '3: # _ _ _ _ _ #', '4: # _ _ X O _ #', '5: # _ _ _ _ _ #', '6: # # # # # # #'].join('\n');

const ROOM_DEAD = ['1: # # # # # #', '2: # _ _ _ _ #', '3: # _ X P O #', '4: # _ _ _ √ #', '5: # # # # # #'].join('\n');

function loaded(picture: string): SokobanEnv {
  const env = new SokobanEnv();
  const { room, state } = parseSokobanRoom(picture);
  env.load(room, state);
  return env;
}

const act = (moves: string) => `I think.\n<action>${moves}</action>`;

describe('sokoban rendering and rewards on hand-built rooms', () => {
  it('renders a parsed picture back exactly, with row numbers and SPEC symbols', () => {
    const { room, state } = parseSokobanRoom(ROOM_A);
    expect(renderRoom(room, state)).toBe(ROOM_A);
    const env = loaded(ROOM_A);
    expect(env.restart()).toEqual({ text: ROOM_A, anchor: ROOM_A });
  });

  it('pays -0.1 per move, +1 onto a target, -1 off it, +10 when all are placed; a turn sums its moves', () => {
    const env = loaded(ROOM_A);
    let r = env.step(act('right'));
    expect(r.reward).toBeCloseTo(0.9, 10);
    expect(r.observation.text.split('\n')[1]).toBe('2: # _ P √ _ _ #');
    expect([r.done, r.won, r.valid]).toEqual([false, false, true]);
    r = env.step(act('right'));
    expect(r.reward).toBeCloseTo(-1.1, 10);
    expect(r.observation.text.split('\n')[1]).toBe('2: # _ _ S X _ #');
    r = env.step(act('down, right, right'));
    expect(r.reward).toBeCloseTo(-0.3, 10);
    r = env.step(act('up, left, down'));
    expect(r.reward).toBeCloseTo(0.7, 10);
    r = env.step(act('left, left, down'));
    expect(r.reward).toBeCloseTo(-0.3, 10);
    expect(r.done).toBe(false);
    r = env.step(act('right, up, up'));
    // The push that places the last box ends the episode: the remaining moves of the turn are not played.
    expect(r.reward).toBeCloseTo(10.9, 10);
    expect([r.done, r.won]).toEqual([true, true]);
    expect(r.info.moves).toEqual(['right']);
    expect(r.observation.text).toBe(
      ['1: # # # # # # #', '2: # _ _ √ _ _ #', '3: # _ _ _ _ _ #', '4: # _ _ P √ _ #', '5: # _ _ _ _ _ #', '6: # # # # # # #'].join('\n'),
    );
    expect(() => env.step(act('up'))).toThrow(/episode is over/);
  });

  it('walking into a wall costs a move and changes nothing', () => {
    const env = loaded(ROOM_A);
    const r = env.step(act('up, left, up'));
    expect(r.reward).toBeCloseTo(-0.3, 10);
    expect(r.observation.text).toBe(ROOM_A);
  });

  it('ends the episode when a push makes the state unsolvable', () => {
    expect(referenceShortest(ROOM_DEAD)).toBeGreaterThan(0);
    const env = loaded(ROOM_DEAD);
    const r = env.step(act('left, right, right'));
    expect(referenceShortest(r.observation.text)).toBe(-1);
    expect([r.done, r.won, r.valid]).toEqual([true, false, true]);
    expect(r.info.deadlocked).toBe(true);
    expect(r.info.moves).toEqual(['left']);
    expect(r.reward).toBeCloseTo(-0.1, 10);
  });

  it('a response without a move is a no-op with valid = false', () => {
    const env = loaded(ROOM_A);
    for (const bad of ['right', '<action>jump</action>', '<action>right', '']) {
      const r = env.step(bad);
      expect(r.valid).toBe(false);
      expect(r.observation.text).toBe(ROOM_A);
      expect(r.reward).toBeCloseTo(-0.3, 10);
    }
  });

  it('ends after maxTurns turns and after maxMoves moves', () => {
    const env = loaded(ROOM_A);
    for (let t = 1; t <= 7; t++) expect(env.step(act('up')).done).toBe(t === 7);
    const short = new SokobanEnv({ maxMoves: 4 });
    const { room, state } = parseSokobanRoom(ROOM_A);
    short.load(room, state);
    expect(short.step(act('up, up, up')).done).toBe(false);
    const r = short.step(act('up, up, up'));
    expect(r.done).toBe(true);
    expect(r.info.moves).toEqual(['up']);
  });
});

describe('sokoban action parsing', () => {
  it('maps each comma-separated piece to the first of up, down, left, right (list order) it contains', () => {
    expect(parseSokobanMoves('Up, go LEFT then down, xyz, right')).toEqual(['up', 'down', 'right']);
    expect(parseSokobanMoves('left,left,right,up', 3)).toEqual(['left', 'left', 'right']);
    expect(parseSokobanMoves('nothing here')).toEqual([]);
  });

  it('plays only the first three parsed moves of a turn', () => {
    const env = loaded(ROOM_A);
    const r = env.step(act('up, up, up, right'));
    expect(r.info.moves).toEqual(['up', 'up', 'up']);
    expect(r.observation.text).toBe(ROOM_A);
  });
});

describe('sokoban generator and solver', () => {
  it('keeps only rooms whose shortest solution (independent BFS) has 5..21 moves; the expert wins in exactly that many', () => {
    const env = new SokobanEnv();
    const expert = new SokobanExpert(env);
    for (let seed = 0; seed < 150; seed++) {
      const first = env.reset(seed);
      const shortest = referenceShortest(first.text);
      expect(shortest).toBeGreaterThanOrEqual(5);
      expect(shortest).toBeLessThanOrEqual(21);
      expect(env.graph.distanceToGoal(env.initialState)).toBe(shortest);
      let moves = 0;
      let r;
      do {
        r = env.step(expert.act());
        moves += (r.info.moves as string[]).length;
      } while (!r.done);
      expect(r.won).toBe(true);
      expect(moves).toBe(shortest);
    }
  });

  it('declares dead exactly the states the independent BFS cannot solve', () => {
    const env = new SokobanEnv();
    const rng = new Rng(7);
    const dirs = ['up', 'down', 'left', 'right'];
    let deadSeen = 0;
    for (let seed = 0; seed < 40; seed++) {
      env.reset(seed);
      for (let turn = 0; turn < 7; turn++) {
        const r = env.step(act([0, 1, 2].map(() => rng.pick(dirs)).join(', ')));
        const ref = referenceShortest(r.observation.text);
        if (r.info.deadlocked) {
          deadSeen++;
          expect(ref).toBe(-1);
        } else if (!r.won) {
          expect(ref).toBeGreaterThan(0);
          expect(env.graph.distanceToGoal(env.currentState)).toBe(ref);
        }
        if (r.done) break;
      }
    }
    expect(deadSeen).toBeGreaterThan(0);
  });

  it('same seed gives the same room and behaviour; different seeds give different rooms', () => {
    const a = new SokobanEnv();
    const b = new SokobanEnv();
    const rooms = new Set<string>();
    for (let seed = 100; seed < 130; seed++) {
      const oa = a.reset(seed);
      expect(b.reset(seed)).toEqual(oa);
      rooms.add(oa.text);
      for (const m of ['up, left, down', 'right, right, up', 'down, down, left']) {
        const ra = a.step(act(m));
        expect(b.step(act(m))).toEqual(ra);
        if (ra.done) break;
      }
    }
    expect(rooms.size).toBeGreaterThan(25);
  });

  it('restart() after random actions gives exactly the initial observation', () => {
    const env = new SokobanEnv();
    const rng = new Rng(3);
    for (let seed = 0; seed < 20; seed++) {
      const initial = env.reset(seed);
      for (let t = 0; t < 1 + rng.int(7); t++) {
        const r = env.step(act(`${rng.pick(['up', 'down'])}, ${rng.pick(['left', 'right'])}, up`));
        if (r.done) break;
      }
      expect(env.restart()).toEqual(initial);
      expect(env.moves).toBe(0);
    }
  });

  it('respects size and box options', () => {
    const env = new SokobanEnv({ width: 7, height: 7, boxes: 3 });
    const obs = env.reset(5);
    const lines = obs.text.split('\n');
    expect(lines).toHaveLength(7);
    expect(lines[0].split(': ')[1].split(' ')).toHaveLength(7);
    expect([...obs.text].filter((ch) => ch === 'X' || ch === '√').length).toBe(3);
    expect(referenceShortest(obs.text)).toBeGreaterThanOrEqual(5);
  });
});

describe('sokoban misuse', () => {
  it('raises E_ENV for step before reset, bad seeds and bad options', () => {
    const codeOf = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return hasCode(e, 'E_ENV') ? 'E_ENV' : String(e);
      }
      return 'no error';
    };
    expect(codeOf(() => new SokobanEnv().step(act('up')))).toBe('E_ENV');
    expect(codeOf(() => new SokobanEnv().restart())).toBe('E_ENV');
    expect(codeOf(() => new SokobanEnv().reset(-1))).toBe('E_ENV');
    expect(codeOf(() => new SokobanEnv().reset(1.5))).toBe('E_ENV');
    expect(codeOf(() => new SokobanEnv({ boxes: 0 }))).toBe('E_ENV');
    expect(codeOf(() => new SokobanEnv({ minSolution: 9, maxSolution: 3 }))).toBe('E_ENV');
    expect(codeOf(() => new SokobanEnv({ colour: 'red' } as never))).toBe('E_ENV');
  });
});

describe('sokoban expert reflection and prompts', () => {
  it('names the move that got a box stuck and a plan that wins when played from the start', () => {
    const env = loaded(ROOM_DEAD);
    const r = env.step(act('left'));
    const text = new SokobanExpert(env).reflect([{ action: 'left', observation: r.observation.text }]);
    const remark = env.parseReflection(text);
    expect(remark.valid).toBe(true);
    expect(remark.text).toContain('Move 1 (left) pushed the box to row 3, column 2');
    const plan = remark.text.split('from the start play ')[1].split(' (')[0].replace(/\|/g, ',');
    const moves = parseSokobanMoves(plan);
    expect(moves.length).toBe(referenceShortest(ROOM_DEAD));
    env.restart();
    let result;
    for (let i = 0; i < moves.length; i += 3) result = env.step(act(moves.slice(i, i + 3).join(', ')));
    expect(result?.won).toBe(true);
  });

  it('writes a compact reflection of facts the trial shows: the first blocked move and the fatal push, with the cell', () => {
    const env = loaded(ROOM_DEAD);
    const expert = new SokobanExpert(env, { style: 'compact' });
    const play = (moves: string[]) => {
      env.restart();
      return moves.map((m) => ({ action: m, observation: env.step(act(m)).observation.text }));
    };
    // P at (3, 4): right onto the target (3, 5), right into the wall, back left, then left pushes the box into the corner.
    const both = expert.reflect(play(['right', 'right', 'left', 'left']));
    expect(env.parseReflection(both).text).toBe('blocked: right at (3, 5). stuck: left at (3, 4).');
    expect(both).toBe('<remark>blocked: right at (3, 5). stuck: left at (3, 4).</remark>');
    expect(env.parseReflection(expert.reflect(play(['left']))).text).toBe('stuck: left at (3, 4).');
    expect(env.parseReflection(expert.reflect(play(['up', 'down']))).text).toBe('out of turns: 1/2 placed.');
  });

  it('compact style: the expert answers its moves alone, and the board names the pieces by cell', () => {
    const env = loaded(ROOM_DEAD);
    const expert = new SokobanExpert(env, { style: 'compact' });
    const answer = expert.act();
    expect(answer).toMatch(/^<action>(up|down|left|right)(, (up|down|left|right)){0,2}<\/action>$/);
    expect(parseSokobanMoves(answer)).toEqual(parseSokobanMoves(new SokobanExpert(env).act().split('<action>')[1]));
    // Player on a target (S) is listed as P and its cell as a free target; a box on a target as √.
    const picture = ['1: # # # # #', '2: # S X _ #', '3: # _ √ O #', '4: # # # # #'].join('\n');
    expect(compactSokobanBoard(picture)).toBe('# # # # # / # S X _ # / # _ √ O # / # # # # # ; P (2, 2) X (2, 3) O (2, 2) O (3, 4) √ (3, 3)');
  });

  it('builds full and compact play and reflect prompts with the SPEC framing', () => {
    const env = new SokobanEnv();
    const initial = env.reset(11);
    const r = env.step(act('up, up, left'));
    const steps = [{ action: 'up, up, left', observation: r.observation.text }];
    const full = env.playPrompt({ style: 'full', initial, memory: ['On trial #1 the task was NOT completed.'], episode: 1, steps });
    for (const part of ['Sokoban', initial.text, 'On trial #1 the task was NOT completed.', 'Currently you are on trial #2.', '<action>']) {
      expect(full).toContain(part);
    }
    expect(full.indexOf('Currently you are on trial #2.')).toBeGreaterThan(full.indexOf(initial.text));
    const compact = env.playPrompt({ style: 'compact', initial, memory: [], episode: 0, steps: [] });
    expect(compact.startsWith('sok T1 | now: ')).toBe(true);
    expect(compact.endsWith(' | act:')).toBe(true);
    expect(compact).not.toContain('\n');
    // The picture, then where the pieces are as one-token cells: the player, the boxes off target, the free targets.
    expect(compact).toMatch(/ ; P \(\d, \d\)( X \(\d, \d\)){1,2}( O \(\d, \d\))+( √ \(\d, \d\))* \| act:$/);
    expect(compact.length).toBeLessThan(180);
    const reflect = env.reflectPrompt({ style: 'full', initial, steps, episode: 0 });
    expect(reflect).toContain('NOT completed');
    expect(reflect).toContain('<remark>');
  });
});
