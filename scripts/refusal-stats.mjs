#!/usr/bin/env node
// What the actions a WebShop or ALFWorld page refused were, from transcripts (`lamer eval --transcripts FILE`, or a
// run's transcripts.jsonl): per method, the refused share of the actions, how many refusals repeat the action just
// before, how many failed episodes end stuck (their last two actions the same refused action), and each refusal's
// kind, read from the prompt it answered and the episode's earlier actions:
//   WebShop  - `click[<id>]` of a product the page does not list; a product id with words after it
//              (`click[b01p3kkw1m vanilla]`); an option value the request names that the open product does not offer
//              (`click[mint]`: the value follows `<name>: ` in the request); any other click; anything else.
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
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** @typedef {{ actions: number, refused: number, repeats: number, failedEpisodes: number, stuckEnd: number, kinds: Record<string, number> }} Counts */
/** @typedef {{ prompt: string, response: string, valid: boolean }} Turn */
/** @typedef {{ method: string, episodes: { won: boolean, turns: Turn[] }[] }} TranscriptLine */

const usage = () => {
  console.error('usage: node scripts/refusal-stats.mjs [--out FILE.json] INPUT...   (INPUT: transcripts .jsonl, a run or job folder, or a counts .json)');
  process.exit(2);
};

const args = process.argv.slice(2);
let out = null;
const inputs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--out') out = args[++i] ?? usage();
  else if (args[i].startsWith('-')) usage();
  else inputs.push(args[i]);
}
if (inputs.length === 0) usage();

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
/** @type {{ file: string, sha256: string, trials: number }[]} */
const sources = [];
const countsOf = (/** @type {string} */ key) => {
  if (!byMethod.has(key)) byMethod.set(key, { actions: 0, refused: 0, repeats: 0, failedEpisodes: 0, stuckEnd: 0, kinds: {} });
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
    const refusedRun = [];
    for (const u of e.turns) {
      const action = actionOf(u.response);
      s.actions++;
      if (!u.valid) {
        s.refused++;
        if (action === before) s.repeats++;
        const kind = webShop ? webShopKind(action, u.prompt) : alfWorldKind(action, at);
        s.kinds[kind] = (s.kinds[kind] ?? 0) + 1;
      } else {
        const go = /^go to (.+)$/.exec(action);
        if (go !== null) at = go[1];
      }
      refusedRun.push(u.valid ? null : action);
      before = action;
    }
    if (!e.won) {
      s.failedEpisodes++;
      const [a, b] = refusedRun.slice(-2);
      if (refusedRun.length >= 2 && a !== null && a === b) s.stuckEnd++;
    }
  }
}

/** @param {string} file */
function readTranscripts(file) {
  const text = readFileSync(file, 'utf8');
  let trials = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const t = /** @type {TranscriptLine} */ (JSON.parse(line));
    addTrial(countsOf(t.method), t);
    trials++;
  }
  sources.push({ file, sha256: createHash('sha256').update(text).digest('hex'), trials });
}

/** @param {string} file */
function readCounts(file) {
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  if (!saved || saved.script !== 'scripts/refusal-stats.mjs' || typeof saved.methods !== 'object' || !Array.isArray(saved.sources)) {
    console.error(`${file}: not a counts file of scripts/refusal-stats.mjs (expected "script", "methods" and "sources")`);
    process.exit(2);
  }
  for (const [key, c] of /** @type {[string, Counts][]} */ (Object.entries(saved.methods))) {
    const s = countsOf(key);
    for (const name of /** @type {const} */ (['actions', 'refused', 'repeats', 'failedEpisodes', 'stuckEnd'])) s[name] += c[name];
    for (const [kind, n] of Object.entries(c.kinds)) s.kinds[kind] = (s.kinds[kind] ?? 0) + n;
  }
  sources.push(...saved.sources);
}

for (const input of inputs) {
  if (!existsSync(input)) {
    console.error(`${input}: no such file or folder`);
    process.exit(2);
  }
  if (statSync(input).isDirectory()) {
    const files = [
      join(input, 'transcripts.jsonl'),
      ...readdirSync(input)
        .sort()
        .map((d) => join(input, d, 'transcripts.jsonl')),
    ];
    const found = files.filter((f) => existsSync(f));
    if (found.length === 0) {
      console.error(`${input}: no transcripts.jsonl in it or in its method folders`);
      process.exit(2);
    }
    found.forEach(readTranscripts);
  } else if (input.endsWith('.json')) readCounts(input);
  else readTranscripts(input);
}

const pct = (/** @type {number} */ a, /** @type {number} */ b) => (b ? ((100 * a) / b).toFixed(1) : '-');
for (const [method, s] of byMethod) {
  const kinds = Object.entries(s.kinds)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([kind, n]) => `${kind} ${n} (${pct(n, s.refused)}%)`);
  console.log(
    `${method}: ${s.refused} of ${s.actions} actions refused (${pct(s.refused, s.actions)}%); ` +
      `${s.repeats} repeat the action before (${pct(s.repeats, s.refused)}%); ` +
      `${s.stuckEnd} of ${s.failedEpisodes} failed episodes end on the same refused action twice (${pct(s.stuckEnd, s.failedEpisodes)}%)` +
      (kinds.length ? `\n  ${kinds.join('; ')}` : ''),
  );
}

if (out !== null) {
  mkdirSync(dirname(out), { recursive: true });
  const methods = Object.fromEntries(byMethod);
  writeFileSync(out, JSON.stringify({ script: 'scripts/refusal-stats.mjs', sources, methods }, null, 2) + '\n');
  console.log(`wrote ${out}`);
}
