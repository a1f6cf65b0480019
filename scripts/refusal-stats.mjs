#!/usr/bin/env node
// What the actions a WebShop or ALFWorld page refused were, from transcripts (`lamer eval --transcripts FILE`, or a
// run's transcripts.jsonl): per method, the refused share of the actions, how many refusals repeat the action just
// before, how many failed episodes end stuck (their last two actions the same refused action), the refused share of
// the turns right after a refused action against the others (an episode's first turn, or one after an accepted
// action: where refusals start, against where they go on), and each refusal's kind, read from the prompt it answered
// and the episode's earlier actions, over all refusals and over those that start a run of them (an episode's first
// turn, or one after an accepted action):
//   WebShop  - `click[<id>]` of a product the page does not list; a product id with words after it
//              (`click[b01p3kkw1m vanilla]`); an option value the request names that the open product does not offer
//              (`click[mint]`: the value follows `<name>: ` in the request); any other click; anything else. Of the
//              unlisted products, how many the prompt names nowhere (not in the memory, not among the episode's
//              actions): an id the model did not copy from anything it was shown.
//   ALFWorld - `go to` the receptacle it stands at (the last accepted `go to`); `go to` a receptacle elsewhere (one
//              the room lacks or the game refuses); then by verb (`take`, `put`, `open`, ...).
// The environment of a trial is told from its actions (`search[...]` or `click[...]`: WebShop).
//
// usage: node scripts/refusal-stats.mjs [--out FILE.json] INPUT...
//   INPUT: a transcripts file (.jsonl); a run or job folder (its transcripts.jsonl and those of its method folders);
//          or a counts file this script wrote with --out, whose counts are added to the rest (so the committed
//          per-seed files of a job give its across-seed figures without the transcripts).
//   --out FILE.json: also write the counts, per method, with the SHA-256 and trial count of each transcripts file
//          read, in a form to commit beside a run's summary (docs/runs/<run>/refusals.json).
import { fail, parseArgs, pct, readInputs, writeCounts } from './transcript-inputs.mjs';

/**
 * `firstKinds`, `unlistedNowhere` and `unlistedNowhereFirst` are absent from counts files written before they were
 * counted; `partial` marks a method that summed such a file (their lines are then not printed).
 * @typedef {{ actions: number, refused: number, repeats: number, failedEpisodes: number, stuckEnd: number, afterRefused: number, refusedAfterRefused: number, kinds: Record<string, number>, firstKinds: Record<string, number>, unlistedNowhere: number, unlistedNowhereFirst: number, partial?: boolean }} Counts
 */
/** @typedef {{ prompt: string, response: string, valid: boolean }} Turn */
/** @typedef {{ method: string, episodes: { won: boolean, turns: Turn[] }[] }} TranscriptLine */

const SCRIPT = 'scripts/refusal-stats.mjs';
const { out, inputs } = parseArgs(SCRIPT);

/** The action a response answers (inside `<action>...</action>`, else the whole response), trimmed, lower case. */
const actionOf = (/** @type {string} */ response) => {
  const m = /<action>([\s\S]*?)<\/action>/i.exec(response);
  return (m ? m[1] : response).trim().replace(/\s+/g, ' ').toLowerCase();
};

const escape = (/** @type {string} */ s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A refused WebShop action's kind.
 * @param {string} action
 * @param {string} prompt
 */
function webShopKind(action, prompt) {
  const m = /^click\[\s*(.*?)\s*\]$/.exec(action);
  if (m === null) return 'not a click';
  const what = m[1];
  if (/^b[0-9a-z]{9}$/.test(what)) return 'product the page does not list';
  if (/^b[0-9a-z]{9}\s/.test(what)) return 'product id with words after it';
  // The request names option values as `<name>: <value>` followed by `,` or ` and price` (the goal's instruction).
  if (new RegExp(`: ${escape(what)}(,| and price)`, 'i').test(prompt)) return 'requested option value not offered';
  return 'other click';
}

/**
 * A refused ALFWorld action's kind.
 * @param {string} action
 * @param {string | null} at the receptacle of the last accepted `go to`, if any
 */
function alfWorldKind(action, at) {
  const go = /^go to (.+)$/.exec(action);
  if (go !== null) return go[1] === at ? 'go to where it stands' : 'go to elsewhere';
  const verb = action.split(' ')[0] || '(empty)';
  return /^[a-z]+$/.test(verb) ? verb : 'other';
}

/** @type {Map<string, Counts>} */
const byMethod = new Map();
const countsOf = (/** @type {string} */ key) => {
  if (!byMethod.has(key))
    byMethod.set(key, {
      actions: 0,
      refused: 0,
      repeats: 0,
      failedEpisodes: 0,
      stuckEnd: 0,
      afterRefused: 0,
      refusedAfterRefused: 0,
      kinds: {},
      firstKinds: {},
      unlistedNowhere: 0,
      unlistedNowhereFirst: 0,
    });
  return /** @type {Counts} */ (byMethod.get(key));
};

/**
 * @param {Counts} s
 * @param {TranscriptLine} t
 */
function addTrial(s, t) {
  const webShop = t.episodes.some((e) => e.turns.some((u) => /^(search|click)\[/.test(actionOf(u.response))));
  for (const e of t.episodes) {
    /** @type {string | null} */
    let before = null;
    /** @type {string | null} */
    let at = null;
    let lastRefused = false;
    for (const u of e.turns) {
      const action = actionOf(u.response);
      s.actions++;
      const startsRun = !lastRefused;
      if (lastRefused) {
        s.afterRefused++;
        if (!u.valid) s.refusedAfterRefused++;
      }
      lastRefused = !u.valid;
      if (!u.valid) {
        s.refused++;
        if (action === before) s.repeats++;
        const kind = webShop ? webShopKind(action, u.prompt) : alfWorldKind(action, at);
        s.kinds[kind] = (s.kinds[kind] ?? 0) + 1;
        if (startsRun) s.firstKinds[kind] = (s.firstKinds[kind] ?? 0) + 1;
        // The id of an unlisted product (the kind says the action is `click[<id>]`), looked for in the whole prompt.
        const id = kind === 'product the page does not list' ? action.slice('click['.length, -1).trim() : null;
        if (id !== null && !u.prompt.toLowerCase().includes(id)) {
          s.unlistedNowhere++;
          if (startsRun) s.unlistedNowhereFirst++;
        }
      } else {
        const go = /^go to (.+)$/.exec(action);
        if (go !== null) at = go[1];
      }
      before = action;
    }
    if (!e.won) {
      s.failedEpisodes++;
      const last = e.turns.slice(-2);
      if (last.length === 2 && last.every((u) => !u.valid) && actionOf(last[0].response) === actionOf(last[1].response)) s.stuckEnd++;
    }
  }
}

const sources = readInputs(inputs, {
  trial: (/** @type {TranscriptLine} */ t) => addTrial(countsOf(t.method), t),
  counts(saved, file) {
    if (!saved || saved.script !== SCRIPT || typeof saved.methods !== 'object' || !Array.isArray(saved.sources))
      fail(`${file}: not a counts file of ${SCRIPT} (expected "script", "methods" and "sources")`);
    for (const [key, c] of /** @type {[string, Counts][]} */ (Object.entries(saved.methods))) {
      const s = countsOf(key);
      for (const name of /** @type {const} */ (['actions', 'refused', 'repeats', 'failedEpisodes', 'stuckEnd', 'afterRefused', 'refusedAfterRefused'])) {
        if (typeof c[name] !== 'number')
          fail(`${file}: method ${key} has no count '${name}' (written by an older ${SCRIPT}: write it again from its transcripts)`);
        s[name] += c[name];
      }
      for (const [kind, n] of Object.entries(c.kinds)) s.kinds[kind] = (s.kinds[kind] ?? 0) + n;
      if (typeof c.firstKinds !== 'object' || c.firstKinds === null || typeof c.unlistedNowhere !== 'number' || typeof c.unlistedNowhereFirst !== 'number')
        s.partial = true;
      else {
        for (const [kind, n] of Object.entries(c.firstKinds)) s.firstKinds[kind] = (s.firstKinds[kind] ?? 0) + n;
        s.unlistedNowhere += c.unlistedNowhere;
        s.unlistedNowhereFirst += c.unlistedNowhereFirst;
      }
    }
  },
});

/** Kinds by count (most first), each with its share of `total`. */
const listKinds = (/** @type {Record<string, number>} */ kinds, /** @type {number} */ total) =>
  Object.entries(kinds)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([kind, n]) => `${kind} ${n} (${pct(n, total)}%)`);

for (const [method, s] of byMethod) {
  const kinds = listKinds(s.kinds, s.refused);
  const starting = s.refused - s.refusedAfterRefused;
  const unlisted = s.kinds['product the page does not list'] ?? 0;
  const unlistedFirst = s.firstKinds['product the page does not list'] ?? 0;
  const more = s.partial
    ? '\n  (a counts file written before the refusals that start a run were counted: those lines left out)'
    : (starting > 0 ? `\n  refusals that start a run: ${listKinds(s.firstKinds, starting).join('; ')}` : '') +
      (unlisted > 0
        ? `\n  unlisted products the prompt names nowhere: ${s.unlistedNowhere} of ${unlisted} (${pct(s.unlistedNowhere, unlisted)}%); ` +
          `of those that start a run, ${s.unlistedNowhereFirst} of ${unlistedFirst} (${pct(s.unlistedNowhereFirst, unlistedFirst)}%)`
        : '');
  console.log(
    `${method}: ${s.refused} of ${s.actions} actions refused (${pct(s.refused, s.actions)}%); ` +
      `${s.repeats} repeat the action before (${pct(s.repeats, s.refused)}%); ` +
      `${s.stuckEnd} of ${s.failedEpisodes} failed episodes end on the same refused action twice (${pct(s.stuckEnd, s.failedEpisodes)}%)\n` +
      `  refused: ${s.refused - s.refusedAfterRefused} of ${s.actions - s.afterRefused} first turns and turns after an accepted action ` +
      `(${pct(s.refused - s.refusedAfterRefused, s.actions - s.afterRefused)}%), ` +
      `${s.refusedAfterRefused} of ${s.afterRefused} turns after a refused one (${pct(s.refusedAfterRefused, s.afterRefused)}%)` +
      (kinds.length ? `\n  ${kinds.join('; ')}` : '') +
      more,
  );
}

if (out !== null) writeCounts(out, SCRIPT, sources, Object.fromEntries(byMethod));
