// WebShop: the environment, its expert, and the loader for the original WebShop data files.

import { LamerError } from '../../errors.js';
import type { Environment, Expert } from '../types.js';
import { WebShopEnv, type WebShopOptions } from './env.js';
import { WebShopExpert } from './expert.js';

export { WebShopEnv, type WebShopOptions } from './env.js';
export { WebShopExpert, searchQueryFor } from './expert.js';
export { generateCatalog, GENERATED_CATEGORIES, type Catalog, type Goal, type Product } from './catalog.js';
export { purchaseScore, type ScoreParts } from './reward.js';
export { loadWebShopCatalog, catalogFromWebShopJson, type WebShopFiles } from './loader.js';

export function createWebShopEnv(options?: WebShopOptions): WebShopEnv {
  return new WebShopEnv(options);
}

/** The scripted expert for a WebShop environment (it reads the env's task, so it must be a WebShopEnv). */
export function createWebShopExpert(env: Environment): Expert {
  if (!(env instanceof WebShopEnv)) {
    throw new LamerError('E_ENV', `createWebShopExpert: expected a webshop environment, found ${env?.name ?? String(env)}`);
  }
  return new WebShopExpert(env);
}
