// Bounds on what one game file may make the engine do. A game file is user input: nesting, grammar rules and PDDL
// can ask for unbounded recursion, derivations that never end and groundings of exponential size. Each bound is a
// coded E_ENV naming the game and the limit, so a run stops with a message instead of a stack overflow, a hang (which
// also keeps SIGINT from being handled, as the work never returns to the event loop) or an exhausted heap.
//
// The limits sit far above what real games use (measured on the games `lamer env generate --env alfworld` writes, the
// fixture games and TextWorld's ALFWorld test game with ALFWorld's alfred.pddl and alfred.twl2; the figures are in
// docs/alfworld.md under Measured) and low enough that a hostile file trips them within about a second.

import { LamerError } from '../../../errors.js';

/** Bytes of a game.tw-pddl file (ALFWorld's are tens of kilobytes). */
export const MAX_GAME_FILE_BYTES = 16 * 2 ** 20;
/** Bytes of a traj_data.json file (ALFRED's are at most a few megabytes). */
export const MAX_TRAJ_DATA_BYTES = 64 * 2 ** 20;
/**
 * Nesting depth of a PDDL expression. Fast Downward's parser recurses once per level in Python and stops near 1,000;
 * ALFWorld's files nest less than 12 deep.
 */
export const MAX_PDDL_DEPTH = 256;
/** Literals of one disjunct of a condition, and variables of an action (parameters and `exists` variables together). */
export const MAX_CONDITION_LITERALS = 1_000;
export const MAX_ACTION_VARIABLES = 64;
/** Predicates of one grammar query (`p(a:t) & q(b:u) & ...`). */
export const MAX_QUERY_PREDICATES = 64;
/**
 * Work units of grounding one game: one per candidate tried or value compared, HELD per value of an item kept in
 * memory (a disjunct's literals, a binding's values, an effect instance), so the bound covers time and memory both.
 */
export const MAX_GROUNDING_STEPS = 10_000_000;
/** Work units per value of an item that stays in memory (see MAX_GROUNDING_STEPS and MAX_DERIVATION_STEPS). */
export const HELD = 4;
/** Work units of one derivation of a text (symbols expanded, facts tried by its queries, results kept). */
export const MAX_DERIVATION_STEPS = 2_000_000;
/** Characters of one derived text. */
export const MAX_DERIVED_CHARS = 1_000_000;

/** A count of work against a limit; `spend` throws E_ENV naming the game, what was being done and the limit. */
export class WorkBudget {
  private used = 0;

  constructor(
    readonly limit: number,
    readonly where: string,
    readonly what: string,
  ) {}

  spend(units = 1): void {
    this.used += units;
    if (this.used > this.limit) {
      throw new LamerError(
        'E_ENV',
        `${this.where}: ${this.what} takes more than ${this.limit} steps (the engine's limit for one game file); the file asks for too much work`,
      );
    }
  }

  get spent(): number {
    return this.used;
  }
}
