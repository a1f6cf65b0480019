// WebShop, promptStyle 'paper': LaMer's WebShop templates read from a LaMer checkout and filled as its WebShop manager
// fills them. The fixture test/envs/fixtures/lamer/agent_system/environments/webshop/prompt.py has lamer's own wording
// with LaMer's constant names and fields. The expected prompts were computed by LaMer's own code under Python: its
// env_manager.py logic (format_obs, build_text_obs, format_avail_actions, reset/step/reflect/restart), memory.py,
// projection.py and prompt.py's functions with the fixture's constants, over princeton-nlp/WebShop's WebAgentTextEnv on
// the transcript fixture, replaying the same responses. They are kept here as facts.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { taskSeed } from '../../src/envs/common/seeds.js';
import type { MemoryMode } from '../../src/envs/types.js';
import { createWebShopEnv } from '../../src/envs/webshop/index.js';
import { lamerObservation, lamerProjection, webShopLamerHistory } from '../../src/envs/webshop/prompts.js';
import { TRAIN_SAMPLING, type TrialView } from '../../src/rollout/policy.js';
import { runTrial } from '../../src/rollout/trial.js';
import { scripted } from '../rollout/helpers.js';

const LAMER = join(import.meta.dirname, 'fixtures', 'lamer');
const SHOP = join(import.meta.dirname, '..', 'fixtures', 'webshop', 'transcript');

/** The prompts of LaMer's manager for the trial below: all nine for reflection_only, the later trial's for the others. */
const EXPECTED: { reflection_only: string[]; history_only: string[]; history_and_reflection: string[] } = {
  reflection_only: [
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\n\nYou may do one of:\n[\n'search[<your query>]',\n'click[search]',\n].\nAnswer with one of them inside <action> </action>.\n",
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\n\nYour steps so far: \nAction 1: search[l'eau d'issey]\nObservation 1: 'Back to Search' [SEP] 'Page 1 (Total results: 2)' [SEP] 'Next >' [SEP] 'B000MJZOPK' [SEP] 'Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz' [SEP] '$39.0 to $52.5' [SEP] 'B000VOHH8I' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] '$64.98'\n\nYou may do one of:\n[\n'click[back to search]',\n'click[next >]',\n'click[b000mjzopk]',\n'click[b000vohh8i]',\n].\nAnswer with one of them inside <action> </action>.\n",
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\n\nYour steps so far: \nAction 1: search[l'eau d'issey]\nObservation 1: 'Back to Search' [SEP] 'Page 1 (Total results: 2)' [SEP] 'Next >' [SEP] 'B000MJZOPK' [SEP] 'Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz' [SEP] '$39.0 to $52.5' [SEP] 'B000VOHH8I' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] '$64.98'\nAction 2: click[b000vohh8i]\nObservation 2: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] 'Price: $64.98' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\n\nYou may do one of:\n[\n'click[back to search]',\n'click[< prev]',\n'click[description]',\n'click[features]',\n'click[reviews]',\n'click[buy now]',\n'click[2.5 fl oz]',\n'click[6.76 fl oz (pack of 1)]',\n].\nAnswer with one of them inside <action> </action>.\n",
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\n\nYour steps so far: \nAction 1: search[l'eau d'issey]\nObservation 1: 'Back to Search' [SEP] 'Page 1 (Total results: 2)' [SEP] 'Next >' [SEP] 'B000MJZOPK' [SEP] 'Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz' [SEP] '$39.0 to $52.5' [SEP] 'B000VOHH8I' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] '$64.98'\nAction 2: click[b000vohh8i]\nObservation 2: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] 'Price: $64.98' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\nAction 3: no tags here\nObservation 3: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] 'Price: $64.98' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\n\nYou may do one of:\n[\n'click[back to search]',\n'click[< prev]',\n'click[description]',\n'click[features]',\n'click[reviews]',\n'click[buy now]',\n'click[2.5 fl oz]',\n'click[6.76 fl oz (pack of 1)]',\n].\nAnswer with one of them inside <action> </action>.\n",
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\nYour last trial:\n\n\nYour steps so far: \nAction 1: search[l'eau d'issey]\nObservation 1: 'Back to Search' [SEP] 'Page 1 (Total results: 2)' [SEP] 'Next >' [SEP] 'B000MJZOPK' [SEP] 'Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz' [SEP] '$39.0 to $52.5' [SEP] 'B000VOHH8I' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] '$64.98'\nAction 2: click[b000vohh8i]\nObservation 2: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] 'Price: $64.98' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\nAction 3: no tags here\nObservation 3: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] 'Price: $64.98' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\nAction 4: click[6.76 fl oz (pack of 1)]\nObservation 4: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] 'Price: $64.98' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\nIt failed. Say why inside <remark> </remark>.\n",
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\n\nTrial #1 failed. Your note: \nnote after trial 1\n\nNow on trial #2, from the start.\n\nYou may do one of:\n[\n'search[<your query>]',\n'click[search]',\n].\nAnswer with one of them inside <action> </action>.\n",
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\n\nTrial #1 failed. Your note: \nnote after trial 1\n\nNow on trial #2. Your steps so far: \nAction 1: click[search]\nObservation 1: 'Search'\n\nYou may do one of:\n[\n'search[<your query>]',\n'click[search]',\n].\nAnswer with one of them inside <action> </action>.\n",
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\n\nTrial #1 failed. Your note: \nnote after trial 1\n\nNow on trial #2. Your steps so far: \nAction 1: click[search]\nObservation 1: 'Search'\nAction 2: search[sport]\nObservation 2: 'Back to Search' [SEP] 'Page 1 (Total results: 1)' [SEP] 'Next >' [SEP] 'B000MJZOPK' [SEP] 'Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz' [SEP] '$39.0 to $52.5'\n\nYou may do one of:\n[\n'click[back to search]',\n'click[next >]',\n'click[b000mjzopk]',\n].\nAnswer with one of them inside <action> </action>.\n",
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\n\nTrial #1 failed. Your note: \nnote after trial 1\n\nNow on trial #2. Your steps so far: \nAction 1: click[search]\nObservation 1: 'Search'\nAction 2: search[sport]\nObservation 2: 'Back to Search' [SEP] 'Page 1 (Total results: 1)' [SEP] 'Next >' [SEP] 'B000MJZOPK' [SEP] 'Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz' [SEP] '$39.0 to $52.5'\nAction 3: click[b000mjzopk]\nObservation 3: 'Back to Search' [SEP] '< Prev' [SEP] 'color' [SEP] 'black' [SEP] 'navy | blue' [SEP] 'size' [SEP] 'x-large' [SEP] 'black' [SEP] 'Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz' [SEP] 'Price: $39.0 to $52.5' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\n\nYou may do one of:\n[\n'click[back to search]',\n'click[< prev]',\n'click[description]',\n'click[features]',\n'click[reviews]',\n'click[buy now]',\n'click[black]',\n'click[navy | blue]',\n'click[x-large]',\n].\nAnswer with one of them inside <action> </action>.\n",
  ],
  history_only: [
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\n\nTrial #1 went: \nAction 2: click[b000vohh8i]\nObservation 2: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' ... (6 more)\nAction 3: no tags here\nObservation 3: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' ... (6 more)\nAction 4: click[6.76 fl oz (pack of 1)]\nObservation 4: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] 'Price: $64.98' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\nIt failed. \n\nNow on trial #2, from the start.\n\nYou may do one of:\n[\n'search[<your query>]',\n'click[search]',\n].\nAnswer with one of them inside <action> </action>.\n",
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\n\nTrial #1 went: \nAction 2: click[b000vohh8i]\nObservation 2: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' ... (6 more)\nAction 3: no tags here\nObservation 3: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' ... (6 more)\nAction 4: click[6.76 fl oz (pack of 1)]\nObservation 4: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] 'Price: $64.98' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\nIt failed. \n\nNow on trial #2. Your steps so far: \nAction 1: click[search]\nObservation 1: 'Search'\nAction 2: search[sport]\nObservation 2: 'Back to Search' [SEP] 'Page 1 (Total results: 1)' [SEP] 'Next >' [SEP] 'B000MJZOPK' [SEP] 'Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz' [SEP] '$39.0 to $52.5'\nAction 3: click[b000mjzopk]\nObservation 3: 'Back to Search' [SEP] '< Prev' [SEP] 'color' [SEP] 'black' [SEP] 'navy | blue' [SEP] 'size' [SEP] 'x-large' [SEP] 'black' [SEP] 'Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz' [SEP] 'Price: $39.0 to $52.5' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\n\nYou may do one of:\n[\n'click[back to search]',\n'click[< prev]',\n'click[description]',\n'click[features]',\n'click[reviews]',\n'click[buy now]',\n'click[black]',\n'click[navy | blue]',\n'click[x-large]',\n].\nAnswer with one of them inside <action> </action>.\n",
  ],
  history_and_reflection: [
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\n\nTrial #1 went: \nAction 2: click[b000vohh8i]\nObservation 2: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' ... (6 more)\nAction 3: no tags here\nObservation 3: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' ... (6 more)\nAction 4: click[6.76 fl oz (pack of 1)]\nObservation 4: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] 'Price: $64.98' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\nIt failed. Your note: \nnote after trial 1\n\nNow on trial #2, from the start.\n\nYou may do one of:\n[\n'search[<your query>]',\n'click[search]',\n].\nAnswer with one of them inside <action> </action>.\n",
    "\nShop for this: i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars.\n\nTrial #1 went: \nAction 2: click[b000vohh8i]\nObservation 2: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' ... (6 more)\nAction 3: no tags here\nObservation 3: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' ... (6 more)\nAction 4: click[6.76 fl oz (pack of 1)]\nObservation 4: 'Back to Search' [SEP] '< Prev' [SEP] 'size' [SEP] '2.5 fl oz' [SEP] '6.76 fl oz (pack of 1)' [SEP] 'L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle' [SEP] 'Price: $64.98' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\nIt failed. Your note: \nnote after trial 1\n\nNow on trial #2. Your steps so far: \nAction 1: click[search]\nObservation 1: 'Search'\nAction 2: search[sport]\nObservation 2: 'Back to Search' [SEP] 'Page 1 (Total results: 1)' [SEP] 'Next >' [SEP] 'B000MJZOPK' [SEP] 'Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz' [SEP] '$39.0 to $52.5'\nAction 3: click[b000mjzopk]\nObservation 3: 'Back to Search' [SEP] '< Prev' [SEP] 'color' [SEP] 'black' [SEP] 'navy | blue' [SEP] 'size' [SEP] 'x-large' [SEP] 'black' [SEP] 'Issey Miyake L'Eau D'Issey Pour Homme Sport Eau de Toilette, 3.3 Oz' [SEP] 'Price: $39.0 to $52.5' [SEP] 'Rating: N.A.' [SEP] 'Description' [SEP] 'Features' [SEP] 'Reviews' [SEP] 'Buy Now'\n\nYou may do one of:\n[\n'click[back to search]',\n'click[< prev]',\n'click[description]',\n'click[features]',\n'click[reviews]',\n'click[buy now]',\n'click[black]',\n'click[navy | blue]',\n'click[x-large]',\n].\nAnswer with one of them inside <action> </action>.\n",
  ],
};

const ANSWERS = [
  ["<action>search[l'eau d'issey]</action>", 'I pick <action>click[b000vohh8i]</action>', 'no tags here', '<action>Click[6.76 fl oz (pack of 1)]</action>'],
  ['<action>click[search]</action>', '<action>search[sport]</action>', '<action>click[b000mjzopk]</action>', '<action>click[features]</action>'],
];

function shop() {
  return createWebShopEnv({
    source: 'original',
    files: { products: join(SHOP, 'items_shuffle.json'), attributes: join(SHOP, 'items_ins_v2.json'), humanInstructions: join(SHOP, 'items_human_ins.json') },
    goals: 'human',
    goalSeed: 5,
    maxTurns: 4,
    lamerSource: LAMER,
  });
}

/** A seed that reaches the fixture's one goal (its content split decides which range does). */
function seedOfTheGoal(): number {
  const env = shop();
  for (const seed of [0, taskSeed('eval', 0), 900_000_000]) {
    try {
      env.reset(seed);
      return seed;
    } catch {
      // another split
    }
  }
  throw new Error('no seed reaches the fixture goal');
}

async function trialPrompts(mode: MemoryMode): Promise<string[]> {
  const policy = scripted((view: TrialView) =>
    view.phase === 'reflect' ? 'thinking\n<remark>note after trial 1</remark>' : ANSWERS[view.episode][view.steps.length],
  );
  const result = await runTrial({
    env: shop(),
    policy,
    seed: seedOfTheGoal(),
    group: 0,
    trial: 0,
    config: { episodes: 2, reflect: true, memoryMode: mode, style: 'paper', sampling: TRAIN_SAMPLING },
  });
  return result.rows.map((r) => r.prompt);
}

describe("WebShop, promptStyle 'paper'", () => {
  it("LaMer's play prompts turn by turn (5 steps, 15 fields), its reflect prompt (20 steps) and the next trial's memory", async () => {
    expect(await trialPrompts('reflection_only')).toEqual(EXPECTED.reflection_only);
  });

  it('earlier trials in the memory show 3 steps with observations cut to 6 fields (history only, history and reflection)', async () => {
    // lamer writes no reflection under history_only, so that trial has no reflect row (8 prompts, not 9).
    const history = await trialPrompts('history_only');
    expect(history.length).toBe(8);
    expect([history[4], history[7]]).toEqual(EXPECTED.history_only);
    const both = await trialPrompts('history_and_reflection');
    expect([both[5], both[8]]).toEqual(EXPECTED.history_and_reflection);
  });

  it("records actions as LaMer's projection gives them and observations as its format_obs", () => {
    expect(lamerProjection('I pick <ACTION> Click[B0X] </action> then')).toBe('click[b0x]');
    expect(lamerProjection('no tags in this rather long answer')).toBe('s rather long answer');
    expect(lamerProjection('</action> first <action>x</action>')).toBe('');
    expect(lamerObservation('Back to Search [SEP] < Prev\nAvailable actions: click[back to search]')).toBe("'Back to Search' [SEP] '< Prev'");
    expect(lamerObservation('Thank you for shopping with us! [SEP] Your code:')).toBe('Thank you for shopping with us! [SEP] Your code:');
    const steps = Array.from({ length: 7 }, (_, i) => ({ action: `a${i + 1}`, observation: Array.from({ length: 16 }, (_, f) => `f${f}`).join(' [SEP] ') }));
    const text = webShopLamerHistory(steps, 5, 15);
    expect(text.split('\n')[0]).toBe('Action 3: a3');
    expect(text.split('\n')[1]).toBe(`Observation 3: ${Array.from({ length: 15 }, (_, f) => `f${f}`).join(' [SEP] ')} ... (1 more)`);
    expect(text.split('\n').at(-1)).toBe(`Observation 7: ${Array.from({ length: 16 }, (_, f) => `f${f}`).join(' [SEP] ')}`);
  });

  it('needs lamerSource, and records the template file in its provenance', () => {
    const plain = createWebShopEnv();
    const initial = plain.reset(0);
    expect(() => plain.playPrompt({ style: 'paper', initial, memory: [], episode: 0, steps: [] })).toThrow(/set env\.options\.lamerSource/);
    const file = join(LAMER, 'agent_system', 'environments', 'webshop', 'prompt.py');
    expect(shop().provenance()).toMatchObject({ paperPrompts: { file, sha256: createHash('sha256').update(readFileSync(file)).digest('hex') } });
  });
});
