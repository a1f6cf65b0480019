// Options of computeAdvantages and of PPO's GAE, declared once as a schema: their SPEC defaults (§3, §4), their ranges
// (the native kernel checks the same ones), and their meaning. The config's `advantage` section is made of them
// (src/train/config.ts), and computeAdvantages validates with them at the door: an unknown option or a bad value is
// an `E_ROWS` error naming the option, so a typo (`gamma_step`) never silently falls back to a default.
import { z } from 'zod';
import { LamerError } from '../errors.js';
import { ESTIMATORS, RETURNS_FORMULAS, type Estimator, type ReturnsFormula } from '../native/types.js';

export type { Estimator, ReturnsFormula };
export const NORM_MODES = ['mean_norm', 'mean_std_norm'] as const;
export type NormMode = (typeof NORM_MODES)[number];
export type StepGrouping = 'exact' | 'similarity';
export type Backend = 'native' | 'reference';

const unitInterval = z.number().min(0).max(1);

/** The options a config sets (its `advantage` section, with the GAE ones below). */
const estimatorFields = {
  estimator: z.enum(ESTIMATORS).default('gigpo').describe('gigpo (episode and step groups) or grpo (episode groups)'),
  returns: z.enum(RETURNS_FORMULAS).default('recursive').describe('cross-episode return form: recursive or as the paper writes it'),
  gammaStep: unitInterval.default(0.95).describe('discount between steps of an episode'),
  /**
   * Default 0.6 (the released scripts' value for MineSweeper, WebShop and ALFWorld; Sokoban's script uses 0.9): set
   * it per environment and report it.
   */
  gammaTraj: unitInterval.default(0.6).describe('discount between episodes of a trial (the cross-episode return)'),
  invalidPenalty: z.number().nonnegative().default(0.5).describe('reward subtracted for an invalid response'),
  mode: z.enum(NORM_MODES).default('mean_norm').describe('GiGPO normalisation: mean, or mean and standard deviation'),
  omega: z.number().default(1.0).describe('weight of the step-level advantage in GiGPO'),
  eps: z.number().positive().default(1e-6).describe('added to a standard deviation before dividing by it'),
  normByStd: z.boolean().default(true).describe('GRPO: divide by the group standard deviation'),
};

/** computeAdvantages' options: the config's, and how steps are clustered and which kernel runs. */
export const advantageOptionsSchema = z
  .object({
    ...estimatorFields,
    stepGrouping: z.enum(['exact', 'similarity']).default('exact').describe('step clusters by exact anchor text or by text similarity'),
    similarityThreshold: z.number().gt(0).max(1).default(0.95).describe('similarity ratio at or above which two anchors share a step cluster'),
    backend: z.enum(['native', 'reference']).default('native').describe("native (the addon's kernel) or reference (the TS code in src/algo)"),
  })
  .strict();

/** The config's `advantage` section: the estimator's options and PPO's GAE. */
export const advantageConfigSchema = z
  .object({
    ...estimatorFields,
    gaeGamma: unitInterval.default(1.0).describe('GAE discount (PPO only)'),
    gaeLambda: unitInterval.default(1.0).describe('GAE lambda (PPO only)'),
  })
  .strict();

export type AdvantageConfig = z.output<typeof advantageConfigSchema>;
/** The estimator's options as a config sets them. */
export type EstimatorConfig = { [K in keyof typeof estimatorFields]: AdvantageConfig[K] };

/** Every estimator option of a config's `advantage` section, whole (GAE's two are the update's, not the estimator's). */
export function estimatorOptions(section: AdvantageConfig): EstimatorConfig {
  const keys = Object.keys(estimatorFields) as Array<keyof EstimatorConfig>;
  return Object.fromEntries(keys.map((k) => [k, section[k]])) as EstimatorConfig;
}

export type AdvantageOptions = z.input<typeof advantageOptionsSchema>;
export type ResolvedAdvantageOptions = z.output<typeof advantageOptionsSchema>;

export const DEFAULT_ADVANTAGE_OPTIONS: Readonly<ResolvedAdvantageOptions> = Object.freeze(advantageOptionsSchema.parse({}));

/** Fills defaults and checks every value; throws `E_ROWS` naming the first bad or unknown option. */
export function resolveAdvantageOptions(options: AdvantageOptions = {}): ResolvedAdvantageOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new LamerError('E_ROWS', `advantage options: expected an object, found ${JSON.stringify(options)}`);
  }
  const r = advantageOptionsSchema.safeParse(options);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  if (issue.code === 'unrecognized_keys') {
    throw new LamerError('E_ROWS', `unknown advantage option '${issue.keys[0]}'; known options: ${Object.keys(DEFAULT_ADVANTAGE_OPTIONS).join(', ')}`);
  }
  const name = String(issue.path[0]);
  const found = (options as Record<string, unknown>)[name];
  throw new LamerError('E_ROWS', `advantage option '${name}': ${issue.message}, found ${typeof found === 'string' ? `'${found}'` : String(found)}`);
}
