// The row table: one row per agent turn (SPEC §1), stored column by column so the whole rollout can be handed to
// native code as a handful of typed arrays without copies. Anchors stay strings for people and for the reference
// code, and are interned to dense integer ids for the kernels. Interning uses a Map keyed by the string itself, so
// two anchors share an id exactly when they are the same text: there is no hash in between that could merge two
// different observations into one GiGPO step group.

import { LamerError } from '../errors.js';

export const PHASE_PLAY = 0;
export const PHASE_REFLECT = 1;
export type Phase = typeof PHASE_PLAY | typeof PHASE_REFLECT;

/** The literal anchor of reflect rows (SPEC §1): all reflections of a group form one step cluster. */
export const REFLECTION_ANCHOR = 'reflection';

/** One turn as the trial runner reports it. */
export interface Row {
  group: number;
  trial: number;
  episode: number;
  turn: number;
  phase: 'play' | 'reflect' | Phase;
  reward: number;
  valid: boolean | number;
  won: boolean | number;
  anchor: string;
}

/** The integer and number columns; `anchor` is given as strings and interned on the way in. */
export interface RowColumns {
  group: Int32Array;
  trial: Int32Array;
  episode: Int32Array;
  turn: Int32Array;
  /** 0 play, 1 reflect. */
  phase: Uint8Array;
  reward: Float32Array;
  /** 1 when the response parsed into a valid action or reflection. */
  valid: Uint8Array;
  /** 1 when the episode was won at this turn. */
  won: Uint8Array;
  anchor: readonly string[];
}

/**
 * A validated, columnar rollout. Rows of one trial are contiguous and chronological: play rows of episode 0, the
 * reflect row, play rows of episode 1, and so on. A trial is identified by its (group, trial) pair, so trial ids may be
 * numbered globally or per group.
 */
export interface RowTable extends Readonly<RowColumns> {
  readonly length: number;
  /** Dense id of each row's anchor: `anchors[anchorId[i]] === anchor[i]`. */
  readonly anchorId: Int32Array;
  /** The distinct anchors, in order of first appearance. */
  readonly anchors: readonly string[];
}

const INT_COLUMNS = ['group', 'trial', 'episode', 'turn'] as const;
const BYTE_COLUMNS = ['phase', 'valid', 'won'] as const;

function rowsError(message: string): LamerError {
  return new LamerError('E_ROWS', `row table: ${message}`);
}

/** Assigns each distinct string a dense id by exact equality. */
export class AnchorInterner {
  private readonly ids = new Map<string, number>();
  readonly anchors: string[] = [];

  intern(anchor: string): number {
    let id = this.ids.get(anchor);
    if (id === undefined) {
      id = this.anchors.length;
      this.ids.set(anchor, id);
      this.anchors.push(anchor);
    }
    return id;
  }
}

/** Interns a column of anchors; `anchors[ids[i]] === column[i]`. */
export function internAnchors(column: readonly string[]): { anchorId: Int32Array; anchors: string[] } {
  const interner = new AnchorInterner();
  const anchorId = new Int32Array(column.length);
  for (let i = 0; i < column.length; i++) {
    const anchor = column[i];
    if (typeof anchor !== 'string') {
      throw rowsError(`column 'anchor' row ${i}: expected a string, found ${typeof anchor}`);
    }
    anchorId[i] = interner.intern(anchor);
  }
  return { anchorId, anchors: interner.anchors };
}

/**
 * Checks everything the return and advantage code relies on, and names the column and row of the first problem:
 * equal column lengths; phase 0/1; valid and won 0/1; finite rewards, and zero reward on reflect rows (SPEC §1, so a
 * reflection is credited only through the episode after it); rows of each (group, trial) contiguous; inside a trial,
 * episode indices never going backwards, play turns strictly increasing inside an episode, and no reflect row inside an
 * episode. The native kernel makes the same checks itself; this is the reference's copy.
 */
export function validateRowColumns(columns: RowColumns): void {
  const n = columns.group.length;
  const lengths: [string, number][] = [
    ...INT_COLUMNS.map((c): [string, number] => [c, columns[c]?.length ?? -1]),
    ['reward', columns.reward?.length ?? -1],
    ...BYTE_COLUMNS.map((c): [string, number] => [c, columns[c]?.length ?? -1]),
    ['anchor', columns.anchor?.length ?? -1],
  ];
  for (const [name, len] of lengths) {
    if (len !== n) {
      throw rowsError(
        len < 0 ? `column '${name}' is missing` : `column '${name}' has ${len} rows but column 'group' has ${n}; all columns must have the same length`,
      );
    }
  }
  const { group, trial, episode, turn, phase, reward, valid, won } = columns;
  // Trials already left behind, per group (numeric keys: a string key per trial costs more than the whole check).
  const finishedTrials = new Map<number, Set<number>>();
  const isFinished = (g: number, t: number) => finishedTrials.get(g)?.has(t) === true;
  const finish = (g: number, t: number) => {
    let trials = finishedTrials.get(g);
    if (!trials) finishedTrials.set(g, (trials = new Set()));
    trials.add(t);
  };
  let prevPlayEpisode = -1;
  let prevPlayTurn = -1;
  let reflectSincePlay = false;
  for (let i = 0; i < n; i++) {
    const ph = phase[i];
    if (ph !== PHASE_PLAY && ph !== PHASE_REFLECT) {
      throw rowsError(`column 'phase' row ${i}: expected 0 (play) or 1 (reflect), found ${ph}`);
    }
    if (valid[i] > 1) throw rowsError(`column 'valid' row ${i}: expected 0 or 1, found ${valid[i]}`);
    if (won[i] > 1) throw rowsError(`column 'won' row ${i}: expected 0 or 1, found ${won[i]}`);
    const r = reward[i];
    if (!Number.isFinite(r)) throw rowsError(`column 'reward' row ${i}: rewards must be finite, found ${r}`);
    if (ph === PHASE_REFLECT && r !== 0) {
      throw rowsError(`column 'reward' row ${i}: reflect rows carry reward 0, found ${r}`);
    }
    if (episode[i] < 0) throw rowsError(`column 'episode' row ${i}: episode indices start at 0, found ${episode[i]}`);

    const newTrial = i === 0 || group[i] !== group[i - 1] || trial[i] !== trial[i - 1];
    if (newTrial) {
      if (i > 0) finish(group[i - 1], trial[i - 1]);
      if (isFinished(group[i], trial[i])) {
        throw rowsError(
          `column 'trial' row ${i}: rows of trial ${trial[i]} (group ${group[i]}) are not contiguous; ` +
            `store each trial's rows together in chronological order`,
        );
      }
      prevPlayEpisode = -1;
      prevPlayTurn = -1;
      reflectSincePlay = false;
    } else if (episode[i] < episode[i - 1]) {
      throw rowsError(
        `column 'episode' row ${i}: episode goes backwards inside trial ${trial[i]} ` +
          `(${episode[i - 1]} then ${episode[i]}); rows of a trial must be chronological`,
      );
    }
    if (ph === PHASE_REFLECT) {
      reflectSincePlay = true;
      continue;
    }
    if (episode[i] === prevPlayEpisode) {
      if (reflectSincePlay) {
        throw rowsError(
          `column 'phase' row ${i}: a reflect row sits inside episode ${episode[i]} of trial ${trial[i]}; ` + `reflections come between episodes`,
        );
      }
      if (turn[i] <= prevPlayTurn) {
        throw rowsError(
          `column 'turn' row ${i}: turn ${turn[i]} does not follow turn ${prevPlayTurn} in episode ${episode[i]} ` +
            `of trial ${trial[i]}; rows of a trial must be chronological`,
        );
      }
    }
    prevPlayEpisode = episode[i];
    prevPlayTurn = turn[i];
    reflectSincePlay = false;
  }
}

/** Builds a validated table from ready columns (anchors are interned here). The arrays are kept, not copied. */
export function rowTableFromColumns(columns: RowColumns): RowTable {
  validateRowColumns(columns);
  const { anchorId, anchors } = internAnchors(columns.anchor);
  return {
    length: columns.group.length,
    group: columns.group,
    trial: columns.trial,
    episode: columns.episode,
    turn: columns.turn,
    phase: columns.phase,
    reward: columns.reward,
    valid: columns.valid,
    won: columns.won,
    anchor: columns.anchor,
    anchorId,
    anchors,
  };
}

function flag(value: boolean | number, name: string, row: number): number {
  if (value === true || value === 1) return 1;
  if (value === false || value === 0) return 0;
  throw rowsError(`column '${name}' row ${row}: expected a boolean or 0/1, found ${String(value)}`);
}

/** Appends rows one at a time (the trial runner's view); columns grow by doubling. */
export class RowTableBuilder {
  private n = 0;
  private group = new Int32Array(64);
  private trial = new Int32Array(64);
  private episode = new Int32Array(64);
  private turn = new Int32Array(64);
  private phase = new Uint8Array(64);
  private reward = new Float32Array(64);
  private valid = new Uint8Array(64);
  private won = new Uint8Array(64);
  private anchorId = new Int32Array(64);
  private readonly anchor: string[] = [];
  private readonly interner = new AnchorInterner();

  get length(): number {
    return this.n;
  }

  push(row: Row): this {
    const i = this.n;
    if (i === this.group.length) this.grow();
    for (const name of INT_COLUMNS) {
      const v = row[name];
      if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) {
        throw rowsError(`column '${name}' row ${i}: expected a 32-bit integer, found ${String(v)}`);
      }
    }
    let ph: number;
    if (row.phase === 'play' || row.phase === PHASE_PLAY) ph = PHASE_PLAY;
    else if (row.phase === 'reflect' || row.phase === PHASE_REFLECT) ph = PHASE_REFLECT;
    else throw rowsError(`column 'phase' row ${i}: expected 'play' or 'reflect', found ${String(row.phase)}`);
    if (typeof row.reward !== 'number' || !Number.isFinite(row.reward)) {
      throw rowsError(`column 'reward' row ${i}: rewards must be finite, found ${String(row.reward)}`);
    }
    if (typeof row.anchor !== 'string') {
      throw rowsError(`column 'anchor' row ${i}: expected a string, found ${typeof row.anchor}`);
    }
    this.group[i] = row.group;
    this.trial[i] = row.trial;
    this.episode[i] = row.episode;
    this.turn[i] = row.turn;
    this.phase[i] = ph;
    this.reward[i] = row.reward;
    this.valid[i] = flag(row.valid, 'valid', i);
    this.won[i] = flag(row.won, 'won', i);
    this.anchorId[i] = this.interner.intern(row.anchor);
    this.anchor.push(row.anchor);
    this.n = i + 1;
    return this;
  }

  /** Validates and returns the table; the builder can keep appending afterwards (the table is a snapshot). */
  build(): RowTable {
    const n = this.n;
    const columns: RowColumns = {
      group: this.group.slice(0, n),
      trial: this.trial.slice(0, n),
      episode: this.episode.slice(0, n),
      turn: this.turn.slice(0, n),
      phase: this.phase.slice(0, n),
      reward: this.reward.slice(0, n),
      valid: this.valid.slice(0, n),
      won: this.won.slice(0, n),
      anchor: this.anchor.slice(),
    };
    validateRowColumns(columns);
    return {
      ...columns,
      length: n,
      anchorId: this.anchorId.slice(0, n),
      anchors: this.interner.anchors.slice(),
    };
  }

  private grow(): void {
    const cap = this.group.length * 2;
    const grown = <T extends Int32Array | Uint8Array | Float32Array>(a: T): T => {
      const b = new (a.constructor as new (len: number) => T)(cap);
      b.set(a);
      return b;
    };
    this.group = grown(this.group);
    this.trial = grown(this.trial);
    this.episode = grown(this.episode);
    this.turn = grown(this.turn);
    this.phase = grown(this.phase);
    this.reward = grown(this.reward);
    this.valid = grown(this.valid);
    this.won = grown(this.won);
    this.anchorId = grown(this.anchorId);
  }
}
