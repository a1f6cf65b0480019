// WebShop: the environment, its expert, and the original WebShop data pipeline (the generated catalog and the original
// files take the same path).

import { LamerError } from '../../errors.js';
import type { Environment, Expert } from '../types.js';
import { WebShopEnv, type WebShopOptions } from './env.js';
import { WebShopExpert, type WebShopExpertOptions } from './expert.js';

export { WebShopEnv, resolveWebShop, RESTART_MODES, type RestartAfterPurchase, type WebShopOptions, type WebShopSettings } from './env.js';
export { WebShopExpert, optionClicks, searchQueryFor, type WebShopExpertOptions } from './expert.js';
export { generateCatalogFiles, writeGeneratedCatalog, GENERATED_CATEGORIES, GENERATED_FILE_NAMES, type GeneratedFiles } from './catalog.js';
export { getReward, normalizeColor, COLOR_SET, type RewardParts } from './reward.js';
export { tokenSetRatio, type FuzzBackend } from './fuzz.js';
export { webShopData, type WebShopData, type WebShopFilePaths } from './loader.js';
export { Bm25Index, productDocument } from './search.js';
export { analyze as luceneEnglishAnalyze } from './analyzer.js';
export { SPLIT_MODES, type SplitMode } from './splits.js';
export type { Goal, Product } from './data.js';

export function createWebShopEnv(options?: WebShopOptions): WebShopEnv {
  return new WebShopEnv(options);
}

/** The scripted expert for a WebShop environment (it reads the env's task, so it must be a WebShopEnv). */
export function createWebShopExpert(env: Environment, options: WebShopExpertOptions = {}): Expert {
  if (!(env instanceof WebShopEnv)) {
    throw new LamerError('E_ENV', `createWebShopExpert: expected a webshop environment, found ${env?.name ?? String(env)}`);
  }
  return new WebShopExpert(env, options);
}
