// Options of computeAdvantages, their SPEC defaults (§3, §4), and validation at the door: an unknown option or a bad
// value is an `E_ROWS` error naming the option, so a typo (`gamma_step`) never silently falls back to a default.

import { LamerError } from '../errors.js';

export type Estimator = 'gigpo' | 'grpo';
export type ReturnsFormula = 'recursive' | 'paper';
export type NormMode = 'mean_norm' | 'mean_std_norm';
export type StepGrouping = 'exact' | 'similarity';
export type Backend = 'native' | 'reference';

export interface AdvantageOptions {
  /** GiGPO (episode + step level, default) or GRPO (episode level only). */
  estimator?: Estimator;
  /** `recursive` (the reference code's recursion, default) or `paper` (drops gamma_step^(L-1-t) on later episodes). */
  returns?: ReturnsFormula;
  /** Discount between turns of one episode. Default 0.95. */
  gammaStep?: number;
  /**
   * Discount between episodes of a trial. Default 0.6 (the released scripts' value for MineSweeper, WebShop and
   * ALFWorld; Sokoban's script uses 0.9): set it per environment and report it.
   */
  gammaTraj?: number;
  /** Subtracted from the episode-level score of rows whose response was invalid. Default 0.5. */
  invalidPenalty?: number;
  /** GiGPO normalisation at both levels: `mean_norm` (default) or `mean_std_norm` (unbiased std). GiGPO only. */
  mode?: NormMode;
  /** Weight of the step-level advantage. Default 1. GiGPO only. */
  omega?: number;
  /** Added to the std before dividing. Default 1e-6. */
  eps?: number;
  /** Divide by the group std (default true); false gives score - mean. GRPO only. */
  normByStd?: boolean;
  /** Step clusters by exact anchor text (default) or by text similarity at or above `similarityThreshold`. */
  stepGrouping?: StepGrouping;
  /** Similarity ratio (0..1] at or above which two anchors of a group share a step cluster. Default 0.95. */
  similarityThreshold?: number;
  /** `native` (default; the addon's kernel) or `reference` (the TS code in src/algo). */
  backend?: Backend;
}

export type ResolvedAdvantageOptions = Required<AdvantageOptions>;

export const DEFAULT_ADVANTAGE_OPTIONS: Readonly<ResolvedAdvantageOptions> = Object.freeze({
  estimator: 'gigpo',
  returns: 'recursive',
  gammaStep: 0.95,
  gammaTraj: 0.6,
  invalidPenalty: 0.5,
  mode: 'mean_norm',
  omega: 1.0,
  eps: 1e-6,
  normByStd: true,
  stepGrouping: 'exact',
  similarityThreshold: 0.95,
  backend: 'native',
});

function optionError(name: string, expected: string, found: unknown): LamerError {
  const shown = typeof found === 'string' ? `'${found}'` : String(found);
  return new LamerError('E_ROWS', `advantage option '${name}': expected ${expected}, found ${shown}`);
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw optionError(name, allowed.map((a) => `'${a}'`).join(' or '), value);
  }
  return value as T;
}

function numberIn(name: string, value: unknown, lo: number, hi: number, loOpen = false): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value > hi || (loOpen ? value <= lo : value < lo)) {
    const range = `${loOpen ? '(' : '['}${lo}, ${hi === Infinity ? 'inf)' : `${hi}]`}`;
    throw optionError(name, `a finite number in ${range}`, value);
  }
  return value;
}

/** Fills defaults and checks every value; throws `E_ROWS` naming the first bad or unknown option. */
export function resolveAdvantageOptions(options: AdvantageOptions = {}): ResolvedAdvantageOptions {
  if (options === null || typeof options !== 'object') throw optionError('options', 'an object', options);
  for (const key of Object.keys(options)) {
    if (!(key in DEFAULT_ADVANTAGE_OPTIONS)) {
      throw new LamerError('E_ROWS', `unknown advantage option '${key}'; known options: ${Object.keys(DEFAULT_ADVANTAGE_OPTIONS).join(', ')}`);
    }
  }
  const o = { ...DEFAULT_ADVANTAGE_OPTIONS };
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (o as Record<string, unknown>)[key] = value;
  }
  if (typeof o.normByStd !== 'boolean') throw optionError('normByStd', 'a boolean', o.normByStd);
  return {
    estimator: oneOf('estimator', o.estimator, ['gigpo', 'grpo'] as const),
    returns: oneOf('returns', o.returns, ['recursive', 'paper'] as const),
    gammaStep: numberIn('gammaStep', o.gammaStep, 0, 1),
    gammaTraj: numberIn('gammaTraj', o.gammaTraj, 0, 1),
    invalidPenalty: numberIn('invalidPenalty', o.invalidPenalty, 0, Infinity),
    mode: oneOf('mode', o.mode, ['mean_norm', 'mean_std_norm'] as const),
    omega: numberIn('omega', o.omega, -Infinity, Infinity),
    eps: numberIn('eps', o.eps, 0, Infinity, true),
    normByStd: o.normByStd,
    stepGrouping: oneOf('stepGrouping', o.stepGrouping, ['exact', 'similarity'] as const),
    similarityThreshold: numberIn('similarityThreshold', o.similarityThreshold, 0, 1, true),
    backend: oneOf('backend', o.backend, ['native', 'reference'] as const),
  };
}
