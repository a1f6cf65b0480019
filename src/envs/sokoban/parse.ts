// Reading Sokoban actions and renderings. Actions: the text inside <action> is split on commas; each piece becomes the
// first of `up, down, left, right` it contains (SPEC §8). "First" is taken in that list order, not by position in the
// piece: "left then up" is `up`. Pieces that contain none of the four are skipped.

import { LamerError } from '../../errors.js';
import { MOVES, SYMBOLS, type Move, type SokobanRoom, type SokobanState } from './solver.js';

/** The moves named in an action text, in order; at most `limit` (the first ones). */
export function parseSokobanMoves(actionText: string, limit = Infinity): Move[] {
  const moves: Move[] = [];
  for (const piece of actionText.toLowerCase().split(',')) {
    if (moves.length >= limit) break;
    const move = MOVES.find((m) => piece.includes(m));
    if (move !== undefined) moves.push(move);
  }
  return moves;
}

/**
 * A room and state from a rendering (with or without `r: ` row prefixes, cells separated by spaces or not). Used to
 * build hand-made rooms for tests and custom tasks. Throws E_ENV on a malformed picture.
 */
export function parseSokobanRoom(text: string): { room: SokobanRoom; state: SokobanState } {
  const rows = text
    .split('\n')
    .map((line) => line.replace(/^\s*\d+\s*:/, '').replace(/\s+/g, ''))
    .filter((line) => line.length > 0)
    .map((line) => [...line]);
  if (rows.length === 0) throw new LamerError('E_ENV', 'sokoban room picture is empty');
  const width = rows[0].length;
  if (rows.some((r) => r.length !== width)) {
    throw new LamerError('E_ENV', 'sokoban room picture has rows of different lengths');
  }
  const height = rows.length;
  const walls = new Uint8Array(width * height);
  const targets = new Uint8Array(width * height);
  const boxes: number[] = [];
  let player = -1;
  rows.forEach((row, r) =>
    row.forEach((symbol, c) => {
      const i = r * width + c;
      switch (symbol) {
        case SYMBOLS.wall:
          walls[i] = 1;
          break;
        case SYMBOLS.floor:
          break;
        case SYMBOLS.target:
          targets[i] = 1;
          break;
        case SYMBOLS.box:
          boxes.push(i);
          break;
        case SYMBOLS.boxOnTarget:
          targets[i] = 1;
          boxes.push(i);
          break;
        case SYMBOLS.player:
        case SYMBOLS.playerOnTarget:
          if (player >= 0) throw new LamerError('E_ENV', 'sokoban room picture has more than one player');
          player = i;
          if (symbol === SYMBOLS.playerOnTarget) targets[i] = 1;
          break;
        default:
          throw new LamerError('E_ENV', `sokoban room picture has unknown symbol ${JSON.stringify(symbol)} at row ${r + 1}`);
      }
    }),
  );
  if (player < 0) throw new LamerError('E_ENV', 'sokoban room picture has no player');
  const targetCount = targets.reduce((a, b) => a + b, 0);
  if (boxes.length === 0 || targetCount !== boxes.length) {
    throw new LamerError('E_ENV', `sokoban room picture needs as many targets as boxes (>0): ${boxes.length} boxes, ${targetCount} targets`);
  }
  return { room: { width, height, walls, targets }, state: { player, boxes: boxes.sort((a, b) => a - b) } };
}
