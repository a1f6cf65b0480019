// The WebShop environment (docs/spec.md §8): the original WebShop's data pipeline, search, seven pages, clickables and
// reward (the engine: data/, search/, site/, reward/), on the generated catalog (the default) or the original files.
// The anchor is the page as the original shows it; the observation the model reads is the page after the instruction
// (the prompt carries the instruction), the selected options, and the available actions.

import { LamerError } from '../../errors.js';
import { lamerSourceOption, loadLamerTemplates, noPaperTemplates, type LamerTemplates } from '../common/paper-prompts.js';
import { extractAction, extractRemark } from '../common/tags.js';
import { checkSeed, intOption, rejectUnknownOptions } from '../common/options.js';
import type { Environment, Observation, PlayPromptInput, ReflectPromptInput, Reflection, StepResult } from '../types.js';
import type { Goal, GoalSet, Product } from './data/pipeline.js';
import { goalAt } from './data/pipeline.js';
import type { FuzzBackend } from './reward/fuzz.js';
import { webShopData, type FileRole, type WebShopData, type WebShopFilePaths } from './loader.js';
import { click, pageClickables, pageFields, searchSession, startSession, type Clickable, type PageKind, type Session } from './site/pages.js';
import { parseAction } from './parse.js';
import {
  lamerProjection,
  WEBSHOP_PAPER_TEMPLATES,
  webShopPaperPlayPrompt,
  webShopPaperReflectPrompt,
  webShopPlayPrompt,
  webShopReflectPrompt,
} from './prompts.js';
import { getReward, type RewardParts } from './reward/score.js';
import { SEARCH_RETURN_N } from './search/bm25.js';
import { GoalPicker, goalKey, PaperRestartStream, SPLIT_MODES, type SplitMode } from './splits.js';

export const RESTART_MODES = ['same-goal', 'paper-random-goal'] as const;
/** After a purchase, the next attempt: the same goal, or (LaMer's code) a random other goal of the worker's list. */
export type RestartAfterPurchase = (typeof RESTART_MODES)[number];

export interface WebShopOptions {
  /** 'generated' (the default): the project's catalog, in the original format; 'original': the files below. */
  source?: 'generated' | 'original';
  /** The original files (source 'original'). */
  files?: WebShopFilePaths;
  /** Expected SHA-256 of the files by role; a mismatch is E_CONFIG. Runs record them (config.json). */
  sha256?: Partial<Record<FileRole, string>>;
  /** 'synthetic' (the paper's: items_ins instructions x option combinations) or 'human' instructions. */
  goals?: 'synthetic' | 'human';
  /** Which goal a task seed plays: 'lamer' (content-held-out, default), 'paper' (LaMer's code) or 'webshop'. */
  split?: SplitMode;
  /** Worker seed of the goal list under split 'lamer' (its hidden prices and price limits). Default 0. */
  goalSeed?: number;
  /** The attempt after a wrong purchase: 'same-goal' (default) or LaMer's 'paper-random-goal'. */
  restartAfterPurchase?: RestartAfterPurchase;
  /** token_set_ratio back end: 'rapidfuzz' (thefuzz >= 0.20, default) or 'difflib' (thefuzz 0.19). */
  fuzz?: FuzzBackend;
  /** Generated catalog: products (default 1000, like WebShop's small set) and seed (default 0). */
  catalogSize?: number;
  catalogSeed?: number;
  /** Max turns per episode (SPEC §6: 12). */
  maxTurns?: number;
  /** Already loaded data (library use); the other data options are then ignored. */
  data?: WebShopData;
  /** A LaMer checkout (or its webshop prompt.py) whose templates promptStyle 'paper' fills; null: none. */
  lamerSource?: string | null;
}

const OPTION_KEYS = [
  'source',
  'files',
  'sha256',
  'goals',
  'split',
  'goalSeed',
  'restartAfterPurchase',
  'fuzz',
  'catalogSize',
  'catalogSeed',
  'maxTurns',
  'data',
  'lamerSource',
] as const;

/** What a run plays, every choice resolved: recorded in the run's config.json (env.options). */
export interface WebShopSettings {
  source: 'generated' | 'original';
  files?: WebShopFilePaths;
  sha256: Partial<Record<FileRole, string>>;
  goals: 'synthetic' | 'human';
  split: SplitMode;
  goalSeed: number;
  restartAfterPurchase: RestartAfterPurchase;
  fuzz: FuzzBackend;
  catalogSize?: number;
  catalogSeed?: number;
  maxTurns: number;
  /** Goals in the list, products in the catalog, and whether the type score reads a noun table. */
  goalCount: number;
  productCount: number;
  nounTable: boolean;
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new LamerError('E_CONFIG', `webshop option ${name}: expected one of ${allowed.map((a) => `'${a}'`).join(', ')}, found ${JSON.stringify(value)}`);
  }
  return value as T;
}

function fileOptions(value: unknown): WebShopFilePaths {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LamerError(
      'E_CONFIG',
      "webshop option files: source 'original' needs files: { products, attributes, humanInstructions? } (paths to the original JSON files)",
    );
  }
  const f = value as Record<string, unknown>;
  for (const key of Object.keys(f)) {
    if (!['products', 'attributes', 'humanInstructions', 'nouns'].includes(key))
      throw new LamerError('E_CONFIG', `webshop option files.${key}: unknown file; known: products, attributes, humanInstructions, nouns`);
  }
  for (const key of ['products', 'attributes'] as const) {
    if (typeof f[key] !== 'string' || f[key] === '')
      throw new LamerError('E_CONFIG', `webshop option files.${key}: expected the path of the original file, found ${JSON.stringify(f[key])}`);
  }
  for (const key of ['humanInstructions', 'nouns'] as const) {
    if (f[key] !== undefined && (typeof f[key] !== 'string' || f[key] === ''))
      throw new LamerError('E_CONFIG', `webshop option files.${key}: expected a path, found ${JSON.stringify(f[key])}`);
  }
  return f as unknown as WebShopFilePaths;
}

/** Validates the options and loads (or reuses) the data they name. */
export function resolveWebShop(options: WebShopOptions = {}): { settings: WebShopSettings; data: WebShopData } {
  rejectUnknownOptions('webshop', options as Record<string, unknown>, OPTION_KEYS);
  const opts = options as Record<string, unknown>;
  const maxTurns = intOption('webshop', opts, 'maxTurns', 12, 1, 1000);
  const split = oneOf('split', options.split, SPLIT_MODES, 'lamer');
  const restartAfterPurchase = oneOf('restartAfterPurchase', options.restartAfterPurchase, RESTART_MODES, 'same-goal');
  const fuzz = oneOf<FuzzBackend>('fuzz', options.fuzz, ['rapidfuzz', 'difflib'], 'rapidfuzz');
  const goalSeed = intOption('webshop', opts, 'goalSeed', 0, 0, 2 ** 32 - 1);
  let data = options.data;
  if (data === undefined) {
    const source = oneOf('source', options.source, ['generated', 'original'], 'generated');
    const goals = oneOf('goals', options.goals, ['synthetic', 'human'], 'synthetic');
    if (source === 'generated' && options.files !== undefined)
      throw new LamerError('E_CONFIG', "webshop option files: given with source 'generated'; set source: 'original' to read them");
    const files = source === 'original' ? fileOptions(options.files) : undefined;
    const catalogSize = intOption('webshop', opts, 'catalogSize', 1000, 1, 1_000_000);
    const catalogSeed = intOption('webshop', opts, 'catalogSeed', 0, 0, 2 ** 32 - 1);
    data = webShopData({ source, goals, files, catalogSize, catalogSeed });
  }
  const expected = options.sha256;
  if (expected !== undefined) {
    if (typeof expected !== 'object' || expected === null)
      throw new LamerError('E_CONFIG', 'webshop option sha256: expected { products?, attributes?, humanInstructions?, nouns? } of hex digests');
    for (const [role, hash] of Object.entries(expected)) {
      const found = data.sha256[role as FileRole];
      if (found !== hash) {
        throw new LamerError(
          'E_CONFIG',
          `webshop option sha256.${role}: the data read has SHA-256 ${found ?? '(no such file)'}, the config expects ${String(hash)}; ` +
            'point files at the data the run used, or remove sha256 to accept this data',
        );
      }
    }
  }
  const spec = data.spec;
  const settings: WebShopSettings = {
    source: spec.source,
    ...(spec.files !== undefined ? { files: spec.files } : {}),
    sha256: { ...data.sha256 },
    goals: spec.goals,
    split,
    goalSeed,
    restartAfterPurchase,
    fuzz,
    ...(spec.source === 'generated' ? { catalogSize: spec.catalogSize, catalogSeed: spec.catalogSeed } : {}),
    maxTurns,
    goalCount: data.goalBase.goals.length,
    productCount: data.products.length,
    nounTable: data.nouns.hasTable,
  };
  return { settings, data };
}

/** The request without its price clause: the words a literal reader types into the search box. */
export function requestWords(goal: Goal): string {
  return goal.instruction.replace(/,?\s*and price lower than[\s\S]*$/i, '').trim();
}

/**
 * The request's product and attributes without its option list (`... with color: black, and size: 6`): what the
 * search page offers to type, and what the browser searches. Option values are chosen on the item page, and as search
 * words they pull in products of other types that merely offer the same colour or size.
 */
export function searchWords(goal: Goal): string {
  const words = requestWords(goal);
  const options = words.search(/\swith (?:(?!with )[a-z]+ )*[a-z]+: /);
  return (options < 0 ? words : words.slice(0, options)).trim();
}

/**
 * Search text beyond this many characters is cut: such a query is a model writing an essay into the search box, and
 * analysing it would cost more than a step should (the original's Lucene refuses a query of more than 1,024 distinct
 * terms outright).
 */
export const MAX_QUERY_CHARS = 2000;

const pickers = new WeakMap<WebShopData, Map<string, GoalPicker>>();

function sharedPicker(data: WebShopData, split: SplitMode, goalSeed: number): GoalPicker {
  let bySplit = pickers.get(data);
  if (bySplit === undefined) {
    bySplit = new Map();
    pickers.set(data, bySplit);
  }
  const key = `${split}:${goalSeed}`;
  let picker = bySplit.get(key);
  if (picker === undefined) {
    picker = new GoalPicker(data, split, goalSeed);
    bySplit.set(key, picker);
  }
  return picker;
}

/** What the shopper sees, for the expert and tests. */
export interface WebShopView {
  page: PageKind;
  keywords: string[] | null;
  pageNo: number;
  hits: readonly number[];
  product: number | null;
  options: ReadonlyMap<string, string>;
}

export class WebShopEnv implements Environment {
  readonly name = 'webshop';
  readonly maxTurns: number;
  readonly settings: WebShopSettings;
  readonly data: WebShopData;
  readonly #picker: GoalPicker;
  /** The trial's task: the goal reset() picked (the prompts show its instruction). */
  #task: { set: GoalSet; position: number; goal: Goal } | null = null;
  /** The goal the current attempt is scored against (differs from the task's after a paper-random-goal restart). */
  #goal: Goal | null = null;
  #restarts: PaperRestartStream | null = null;
  #purchased = false;
  #session: Session = startSession();
  #turn = 0;
  #finished = false;
  /** LaMer's templates, read at construction when `lamerSource` is set (promptStyle 'paper'). */
  readonly #paperTemplates: LamerTemplates | null;

  constructor(options: WebShopOptions = {}) {
    const { settings, data } = resolveWebShop(options);
    this.settings = settings;
    this.data = data;
    this.maxTurns = settings.maxTurns;
    this.#picker = sharedPicker(data, settings.split, settings.goalSeed);
    const source = lamerSourceOption('webshop', options as Record<string, unknown>);
    this.#paperTemplates = source === null ? null : loadLamerTemplates(source, 'webshop', WEBSHOP_PAPER_TEMPLATES);
  }

  get products(): readonly Product[] {
    return this.data.products;
  }

  /** The goal the current attempt is scored against. */
  get goal(): Goal {
    if (this.#goal === null) throw new LamerError('E_ENV', 'webshop: call reset(seed) before using the environment');
    return this.#goal;
  }

  /** The trial's task (the goal reset() picked). */
  get task(): Goal {
    return this.#requireTask().goal;
  }

  /** The hidden price of a product under the current goal's worker seed (what the reward compares). */
  priceOf(product: number): number {
    return this.#requireTask().set.prices[product];
  }

  get turnsTaken(): number {
    return this.#turn;
  }

  view(): WebShopView {
    const s = this.#session;
    return { page: s.page, keywords: s.keywords, pageNo: s.pageNo, hits: s.hits, product: s.product, options: new Map(s.options) };
  }

  /** Product indices a search for `query` lists, best first (top 50); changes nothing. */
  searchResults(query: string): number[] {
    return this.data.search.search(query.slice(0, MAX_QUERY_CHARS), SEARCH_RETURN_N);
  }

  reset(seed: number): Observation {
    checkSeed('webshop', seed);
    const picked = this.#picker.pick(seed);
    this.#task = picked;
    this.#goal = picked.goal;
    this.#restarts = null;
    this.#purchased = false;
    return this.restart();
  }

  restart(): Observation {
    const task = this.#requireTask();
    if (this.#purchased && this.settings.restartAfterPurchase === 'paper-random-goal') {
      // LaMer's env resets to a random session after a purchase; the next attempt plays that session's goal.
      this.#restarts ??= new PaperRestartStream(this.data, task.set);
      this.#goal = goalAt(task.set, this.data.products, this.#restarts.next());
    }
    this.#purchased = false;
    this.#session = startSession();
    this.#turn = 0;
    this.#finished = false;
    return this.#observe();
  }

  step(response: string): StepResult {
    const goal = this.goal;
    if (this.#finished) throw new LamerError('E_ENV', 'webshop.step() after the episode ended: call restart() or reset(seed) first');
    this.#turn++;
    const historyAction = lamerProjection(typeof response === 'string' ? response : '');
    const text = extractAction(typeof response === 'string' ? response : '');
    const action = text === null ? null : parseAction(text.toLowerCase());
    const timeUp = this.#turn >= this.maxTurns;
    const info = (extra: Record<string, unknown> = {}) => ({ page: this.#session.page, turn: this.#turn, goalAsin: goal.asin, ...extra });
    let applied = false;
    let purchase: RewardParts | null = null;
    const ctx = this.#ctx();
    if (action !== null) {
      if (action.name === 'search' && action.arg !== '') {
        // BrowserSim.search: the keywords are the argument split on single spaces.
        const keywords = action.arg.slice(0, MAX_QUERY_CHARS).split(' ');
        this.#session = searchSession(keywords, this.data.search.search(keywords.join(' '), SEARCH_RETURN_N));
        applied = true;
      } else if (action.name === 'click' && action.arg !== 'search') {
        const clickable = pageClickables(this.#session, ctx).clickables.find((c) => c.key === action.arg);
        if (clickable !== undefined) {
          applied = true;
          const next = click(this.#session, clickable, (keywords) => this.data.search.search(keywords.join(' '), SEARCH_RETURN_N));
          if (next.kind === 'buy') purchase = this.#buy(goal);
          else if (next.kind === 'page') this.#session = next.session;
        }
      }
    }
    if (purchase !== null) {
      this.#finished = true;
      this.#purchased = true;
      const won = purchase.score === 1;
      const extra = {
        score: purchase.score,
        purchased: this.products[this.#session.product!].asin,
        options: Object.fromEntries(this.#session.options),
        reward: purchase,
      };
      return { observation: this.#observe(), reward: won ? 10 : 0, done: true, won, valid: true, historyAction, info: info(extra) };
    }
    this.#finished = timeUp;
    // An episode that runs out of turns bought nothing: its WebShop score is 0, and only the limit ended it.
    const end = timeUp ? { truncated: true } : {};
    return { observation: this.#observe(), reward: 0, done: timeUp, won: false, valid: applied, ...end, historyAction, info: info(timeUp ? { score: 0 } : {}) };
  }

  admissibleActions(): string[] {
    this.#requireTask();
    if (this.#finished) return [];
    return this.#available();
  }

  taskType(): string | undefined {
    return this.#task?.goal.category;
  }

  taskKey(): string {
    return goalKey(this.#requireTask().goal);
  }

  /**
   * What a run records (config.json `provenance`): every data, split and restart choice resolved, with the SHA-256 of
   * the data files, in the shape of the options (given back as env.options, it plays the same environment and refuses
   * changed files), and the LaMer template file read for promptStyle 'paper'.
   */
  provenance(): Record<string, unknown> {
    const { goalCount: _goals, productCount: _products, nounTable: _nouns, ...recorded } = this.settings;
    const t = this.#paperTemplates;
    return t === null ? recorded : { ...recorded, paperPrompts: { file: t.file, sha256: t.sha256 } };
  }

  playPrompt(input: PlayPromptInput): string {
    if (input.style === 'paper') {
      return webShopPaperPlayPrompt(input, this.#requirePaperTemplates(), { instruction: this.task.instruction, admissible: this.#lamerAdmissible() });
    }
    return webShopPlayPrompt(input, { instruction: this.task.instruction, maxTurns: this.maxTurns });
  }

  reflectPrompt(input: ReflectPromptInput): string {
    if (input.style === 'paper') return webShopPaperReflectPrompt(input, this.#requirePaperTemplates(), { instruction: this.task.instruction });
    return webShopReflectPrompt(input, { instruction: this.task.instruction, maxTurns: this.maxTurns });
  }

  parseReflection(response: string): Reflection {
    return extractRemark(response);
  }

  // ---- internals ----

  #requireTask(): { set: GoalSet; position: number; goal: Goal } {
    if (this.#task === null) throw new LamerError('E_ENV', 'webshop: call reset(seed) before using the environment');
    return this.#task;
  }

  #requirePaperTemplates(): LamerTemplates {
    if (this.#paperTemplates === null) throw noPaperTemplates('webshop');
    return this.#paperTemplates;
  }

  /** LaMer's admissible list of the current page: 'search[<your query>]' with a search bar, then every clickable. */
  #lamerAdmissible(): string[] {
    if (this.#finished) return [];
    const { hasSearchBar, clickables } = pageClickables(this.#session, this.#ctx());
    return [...(hasSearchBar ? ['search[<your query>]'] : []), ...clickables.map((c) => `click[${c.key}]`)];
  }

  #ctx() {
    return { products: this.data.products, instruction: this.goal.instruction };
  }

  #buy(goal: Goal): RewardParts {
    const s = this.#session;
    const parts = getReward(this.products[s.product!], goal, this.priceOf(s.product!), s.options, { nouns: this.data.nouns, fuzz: this.settings.fuzz });
    this.#session = { ...s, page: 'done', score: parts.score };
    return parts;
  }

  /**
   * search[...] when the page has a search bar, with the request's own words before its options (the original lists a
   * placeholder, which a player without a model cannot fill), then click[x] for every clickable but the search button.
   */
  #available(): string[] {
    const { hasSearchBar, clickables } = pageClickables(this.#session, this.#ctx());
    const actions = hasSearchBar ? [`search[${searchWords(this.goal)}]`] : [];
    for (const c of clickables as Clickable[]) if (c.key !== 'search') actions.push(`click[${c.key}]`);
    return actions;
  }

  #observe(): Observation {
    const fields = pageFields(this.#session, this.#ctx());
    const selected = [...this.#session.options].map(([n, v]) => `${n}: ${v}`).join(', ');
    const showSelected = selected.length > 0 && this.#session.page !== 'done';
    // The selections change the score but the original's pages do not show them: the anchor and the text add them.
    const anchor = fields.join(' [SEP] ') + (showSelected ? ` [SEP] Selected: ${selected}` : '');
    // The model reads the page after the instruction (its prompt states the task), as LaMer's prompts show pages.
    const at = fields.indexOf('Instruction:');
    const page = (at >= 0 ? fields.slice(at + 2) : fields).join(' [SEP] ');
    const actions = this.#finished ? [] : this.#available();
    const text = `${page}${showSelected ? `\nSelected: ${selected}` : ''}${actions.length > 0 ? `\nAvailable actions: ${actions.join(', ')}` : ''}`;
    return { text, anchor };
  }
}
