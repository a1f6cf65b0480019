// The config's advantage section reaches computeAdvantages whole: every estimator option it declares, with its value,
// and none of GAE's (the update's own).
import { describe, expect, it } from 'vitest';
import { advantageConfigSchema, advantageOptionsSchema, estimatorOptions } from '../../src/algo/options.js';

describe('estimatorOptions', () => {
  it("passes every estimator option of the config's section, values unchanged, and leaves GAE's out", () => {
    const section = advantageConfigSchema.parse({ gammaStep: 0.5, gammaTraj: 0.9, omega: 2, mode: 'mean_std_norm', gaeGamma: 0.7 });
    const options = estimatorOptions(section);
    const gae = ['gaeGamma', 'gaeLambda'];
    expect(Object.keys(options).sort()).toEqual(
      Object.keys(section)
        .filter((k) => !gae.includes(k))
        .sort(),
    );
    for (const [k, v] of Object.entries(options)) expect(v, k).toEqual(section[k as keyof typeof section]);
    // computeAdvantages takes them as they are (its schema is strict: an unknown key would be refused).
    expect(advantageOptionsSchema.safeParse(options).success).toBe(true);
  });
});
