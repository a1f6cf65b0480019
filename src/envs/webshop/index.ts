// WebShop in two parts. The engine, a port of princeton-nlp/WebShop that knows nothing of LaMer, in four folders from
// the bottom up: data/ (the load pipeline and goals of engine.py and goal.py, and the generated catalog in the original
// files' format), search/ (Lucene's English analyzer and BM25, as pyserini searched), reward/ (goal.py's get_reward
// with thefuzz's token_set_ratio and the title nouns) and site/ (the seven pages and their navigation). The adapter at
// the top, which LaMer's trainer uses: env.ts (the Environment), expert.ts, prompts.ts, parse.ts (the action text),
// splits.ts (which goal a task seed plays) and loader.ts (which data a config names, with its hashes).

import { LamerError } from '../../errors.js';
import type { Environment, Expert } from '../types.js';
import { WebShopEnv, type WebShopOptions } from './env.js';
import { WebShopExpert, type WebShopExpertOptions } from './expert.js';
// Hands the compact-webshop tokenizer its vocabulary (the model layer cannot import the catalog).
import './vocabulary.js';

export { WebShopEnv, resolveWebShop, RESTART_MODES, type RestartAfterPurchase, type WebShopOptions, type WebShopSettings } from './env.js';
export { WebShopExpert, optionClicks, searchQueryFor, type WebShopExpertOptions } from './expert.js';
export { WebShopBrowser, boughtInEpisode, listedPrice } from './browser.js';
export { webShopCompactVocabulary, VOCABULARY_CATALOG } from './vocabulary.js';
export { generateCatalogFiles, writeGeneratedCatalog, GENERATED_CATEGORIES, GENERATED_FILE_NAMES, type GeneratedFiles } from './data/catalog.js';
export { getReward, normalizeColor, COLOR_SET, type RewardParts } from './reward/score.js';
export { tokenSetRatio, type FuzzBackend } from './reward/fuzz.js';
export { webShopData, type WebShopData, type WebShopFilePaths } from './loader.js';
export { Bm25Index, productDocument } from './search/bm25.js';
export { analyze as luceneEnglishAnalyze } from './search/analyzer.js';
export { SPLIT_MODES, type SplitMode } from './splits.js';
export type { Goal, Product } from './data/pipeline.js';

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
