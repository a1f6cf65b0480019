// WebShop prompt texts (SPEC §2, §8). The framing (memory, trial line, windowed trajectory) is common to all
// environments; this file holds what is WebShop's own: the role, the request, the rules and the answer format. For
// promptStyle `paper`, how LaMer's WebShop manager fills its templates (read from the user's LaMer checkout): its own
// history text (the last 5 steps in play, 20 to reflect, earlier trials 3; every observation but the window's last cut
// to 15 fields, 6 for earlier trials), its memory blocks, and its admissible-action list.

import { composePlayPrompt, composeReflectPrompt, type CompactObservation } from '../common/framing.js';
import { CURRENT_TRAJECTORY_TEMPLATES, lamerAction, lamerCurrentTrajectory, type LamerTemplates } from '../common/paper-prompts.js';
import { pyFormat, pyStrip } from '../common/python.js';
import type { MemoryMode, PastEpisode, PlayPromptInput, ReflectPromptInput, TrajectoryStep } from '../types.js';

export interface WebShopPromptSettings {
  instruction: string;
  maxTurns: number;
}

export function webShopRules(s: WebShopPromptSettings): string {
  return [
    'You are an expert autonomous agent shopping in WebShop, an online store.',
    `Your task is to buy a product that matches this request: ${s.instruction}.`,
    'Pages: the search page (a search box), the results page (a numbered page of products, each shown as its id,',
    'title and price), the item page (the product title, price, option buttons such as size or color, Description,',
    'Features, Reviews and Buy Now), and the Description, Features and Reviews pages of an item.',
    'Actions: search[your query] searches the store (from any page);',
    'click[button] clicks a button shown on the page: a product id on the results page, an option value on the item',
    'page (it selects that option), Next > and < Prev to move between pages, Back to Search, or Buy Now.',
    'Rules: the product must have the requested attributes, you must select every requested option before you click',
    'Buy Now, and its price must be within the limit. Clicking Buy Now ends the episode; the purchase is scored by',
    `how well it matches the request and only a perfect match counts as success. You have at most ${s.maxTurns} actions.`,
  ].join('\n');
}

export function webShopAnswerFormat(): string {
  return (
    'First reason step by step about the current page and what the request needs. Then give exactly one action,' +
    ' chosen from the available actions, inside <action> and </action>, for example:' +
    ' <action>search[slim fit t-shirt navy blue]</action> or <action>click[buy now]</action>'
  );
}

const REFLECT_HINT =
  'Name what did not match (product type, an attribute, an option, the price) or where steps were wasted, and write' +
  ' the search query, the product to open and the options to select next time.';

/**
 * Compact pages: [SEP] fields joined by ` / `, in lower case (as the actions name what they click, and as the
 * `compact-webshop` tokenizer holds the catalog's words), available actions kept (the model must choose among them).
 */
export const compactWebShopPage: CompactObservation = (text) =>
  text
    .split(/\n|\s*\[SEP\]\s*/)
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part.length > 0)
    .join(' / ');

export function webShopPlayPrompt(input: PlayPromptInput, s: WebShopPromptSettings): string {
  const framed = composePlayPrompt({
    input,
    rules: webShopRules(s),
    answerFormat: webShopAnswerFormat(),
    compactTag: `shop ${s.instruction}`,
    compactObservation: compactWebShopPage,
  });
  return framed;
}

export function webShopReflectPrompt(input: ReflectPromptInput, s: WebShopPromptSettings): string {
  return composeReflectPrompt({
    input,
    rules: webShopRules(s),
    reflectHint: REFLECT_HINT,
    compactTag: `shop ${s.instruction}`,
    compactObservation: compactWebShopPage,
  });
}

// ---- promptStyle `paper`: LaMer's WebShop templates (read from the user's LaMer checkout) ----

/** The constants of LaMer's webshop/prompt.py that the paper prompts fill. */
export const WEBSHOP_PAPER_TEMPLATES = [
  'WEBSHOP_PLAY_PROMPT',
  'WEBSHOP_REFLECT_PROMPT',
  'PAST_EXPERIENCE_REFLECTION_TEMPLATE',
  'HISTORY_ONLY_TEMPLATE',
  'REFLECTION_ONLY_TEMPLATE',
  ...CURRENT_TRAJECTORY_TEMPLATES,
] as const;

/** LaMer's manager switches to its short prompt past this many characters. */
const LAMER_PROMPT_MAX_CHARS = 20000;

/**
 * An observation as LaMer's WebShop manager stores it (format_obs): the page's parts after the task instruction, each
 * in single quotes, joined by ` [SEP] `. `text` is this environment's observation text (the page after the instruction
 * on its first line); the done page, which has no instruction, stays as it is.
 */
export function lamerObservation(text: string): string {
  const page = text.split('\n')[0];
  if (page.startsWith('Thank you for shopping with us!')) return page;
  return page
    .split(' [SEP] ')
    .map((p) => `'${p}'`)
    .join(' [SEP] ');
}

/**
 * The text of LaMer's WebShop SimpleMemory.fetch: the last `historyLength` steps numbered in the episode, each
 * `Action k: {action}\nObservation k: {obs}`; every observation but the last shown is cut to its first `maxFields`
 * [SEP] fields and ` ... (N more)` when it has at least that many.
 */
export function webShopLamerHistory(steps: readonly { action: string; observation: string }[], historyLength: number, maxFields: number): string {
  const recent = steps.slice(Math.max(0, steps.length - historyLength));
  const first = steps.length - recent.length;
  return recent
    .map((s, j) => {
      let obs = s.observation;
      const items = obs.split(' [SEP] ');
      if (j !== recent.length - 1 && items.length >= maxFields) obs = `${items.slice(0, maxFields).join(' [SEP] ')} ... (${items.length - maxFields} more)`;
      return `Action ${first + j + 1}: ${s.action}\nObservation ${first + j + 1}: ${obs}`;
    })
    .join('\n');
}

function lamerSteps(steps: readonly TrajectoryStep[]): Array<{ action: string; observation: string }> {
  return steps.map((s) => ({ action: lamerAction(s), observation: lamerObservation(s.observation) }));
}

/**
 * parse_reflection of LaMer's WebShop prompt: nothing in the first trial, else one block per earlier trial. LaMer's
 * code tests for 'reflection_and_history', a mode its manager does not accept (it accepts 'history_and_reflection', and
 * then raises); here history_and_reflection fills PAST_EXPERIENCE_REFLECTION_TEMPLATE, the block that mode names.
 */
function webShopLamerMemory(t: LamerTemplates, episode: number, past: readonly PastEpisode[], mode: MemoryMode): string {
  if (episode === 0) return '';
  return past
    .map((p) => {
      const fields = { traj_idx: p.episode + 1, past_trajectory: webShopLamerHistory(lamerSteps(p.steps), 3, 6), reflection: p.reflection };
      if (mode === 'history_and_reflection')
        return pyFormat(t.templates.PAST_EXPERIENCE_REFLECTION_TEMPLATE, fields, `${t.file} PAST_EXPERIENCE_REFLECTION_TEMPLATE`);
      if (mode === 'history_only')
        return pyFormat(
          t.templates.HISTORY_ONLY_TEMPLATE,
          { traj_idx: fields.traj_idx, past_trajectory: fields.past_trajectory },
          `${t.file} HISTORY_ONLY_TEMPLATE`,
        );
      return pyFormat(t.templates.REFLECTION_ONLY_TEMPLATE, { traj_idx: fields.traj_idx, reflection: p.reflection }, `${t.file} REFLECTION_ONLY_TEMPLATE`);
    })
    .join('');
}

export interface WebShopPaperSettings {
  /** The task as LaMer reads it from the trial's first search page. */
  instruction: string;
  /** LaMer's admissible list (format_avail_actions): 'search[<your query>]' with a search bar, then click[x]. */
  admissible: readonly string[];
}

/** The play prompt as LaMer's WebShop environment manager builds it (its short form past 20,000 characters). */
export function webShopPaperPlayPrompt(input: PlayPromptInput, t: LamerTemplates, s: WebShopPaperSettings): string {
  const build = (mode: MemoryMode, short: boolean) => {
    let trajectory = input.steps.length > 0 ? webShopLamerHistory(lamerSteps(input.steps), 5, 15) : '';
    if (short) trajectory = trajectory.split('\n').at(-1)!;
    return pyFormat(
      t.templates.WEBSHOP_PLAY_PROMPT,
      {
        task_description: s.instruction,
        past_trajectories_reflections: webShopLamerMemory(t, input.episode, input.past ?? [], mode),
        current_trajectory: lamerCurrentTrajectory(t.templates, input.steps.length, input.episode, trajectory, t.file),
        admissible_actions: s.admissible.map((a) => `'${a}',`).join('\n'),
      },
      `${t.file} WEBSHOP_PLAY_PROMPT`,
    );
  };
  const prompt = build(input.memoryMode ?? 'reflection_only', false);
  return prompt.length > LAMER_PROMPT_MAX_CHARS ? build('reflection_only', true) : prompt;
}

/** The reflect prompt as LaMer builds it: the task and the failed trial's last 20 steps (short form past 20,000). */
export function webShopPaperReflectPrompt(input: ReflectPromptInput, t: LamerTemplates, s: Pick<WebShopPaperSettings, 'instruction'>): string {
  const build = (short: boolean) => {
    let trajectory = webShopLamerHistory(lamerSteps(input.steps), 20, 15);
    if (short) trajectory = trajectory.split('\n').at(-1)!;
    return pyFormat(
      t.templates.WEBSHOP_REFLECT_PROMPT,
      { task_description: s.instruction, current_trajectory: lamerCurrentTrajectory(t.templates, input.steps.length, input.episode, trajectory, t.file) },
      `${t.file} WEBSHOP_REFLECT_PROMPT`,
    );
  };
  const prompt = build(false);
  return prompt.length > LAMER_PROMPT_MAX_CHARS ? build(true) : prompt;
}

/**
 * The action LaMer's projection (webshop_projection) hands the environment and its memory records: the lower-cased
 * text between the first `<action>` and the first `</action>`, stripped; without both tags, the last 20 characters of
 * the lower-cased response.
 */
export function lamerProjection(response: string): string {
  const lower = response.toLowerCase();
  const start = lower.indexOf('<action>');
  const end = lower.indexOf('</action>');
  if (start < 0 || end < 0) return lower.slice(-20);
  return pyStrip(lower.slice(start + '<action>'.length, end));
}
