#!/usr/bin/env node
// Why a MineSweeper agent wins or loses, from transcripts (`lamer eval --transcripts FILE`, or a run's
// transcripts.jsonl): per method, pass@k, the share of turns that opened nothing (rewarded -1: a cell already open,
// off the board or unparsable), how episodes end (win, mine, out of turns), how often an attempt after a mine opens
// that same mine again, and how many reflections were right. MineSweeper checks a reflection only where the attempt
// before it ended on a mine (Environment.checkReflection), so "right" is out of those reflections, not out of every
// failed attempt; the line says both counts.
//
// usage: node scripts/transcript-stats.mjs [--out FILE.json] INPUT...
//   INPUT: a transcripts file (.jsonl); a run or job folder (its transcripts.jsonl and those of its method folders);
//          or a counts file this script wrote with --out, whose counts are added to the rest (so the committed
//          per-seed files of a job give its across-seed figures without the transcripts).
//   --out FILE.json: also write the counts, per method, with the SHA-256 and trial count of each transcripts file
//          read, in a form to commit beside a run's summary (docs/runs/<run>/transcripts.json).
import { fail, parseArgs, pct, readInputs, writeCounts } from './transcript-inputs.mjs';

const COUNTS = /** @type {const} */ ([
  'trials',
  'turns',
  'wasted',
  'episodes',
  'won',
  'mine',
  'outOfTurns',
  'afterMine',
  'repeatMine',
  'reflections',
  'checked',
  'right',
]);
/** @typedef {Record<(typeof COUNTS)[number], number> & { passAt: number[] }} Counts */
/** @typedef {import('../src/eval/transcripts.ts').TrialTranscript & { method: string, reflections?: string }} TranscriptLine one line of a transcripts file */
const EPISODES = 3;

const SCRIPT = 'scripts/transcript-stats.mjs';
const { out, inputs } = parseArgs(SCRIPT);

const cellOf = (/** @type {string} */ response) => {
  const m = /<action>[^<]*?(-?\d+)\D+(-?\d+)/.exec(response);
  return m ? `${m[1]},${m[2]}` : null;
};

/** Per method key: the counts (see COUNTS) and passAt[k] (trials won by attempt k + 1). */
/** @type {Map<string, Counts>} */
const byMethod = new Map();
/** @returns {Counts} */
const countsOf = (/** @type {string} */ key) => {
  if (!byMethod.has(key)) {
    const zero = /** @type {Counts} */ ({ ...Object.fromEntries(COUNTS.map((c) => [c, 0])), passAt: new Array(EPISODES).fill(0) });
    byMethod.set(key, zero);
  }
  return /** @type {Counts} */ (byMethod.get(key));
};

/**
 * @param {Counts} s
 * @param {TranscriptLine} t
 */
function addTrial(s, t) {
  s.trials++;
  for (let k = 0; k < EPISODES; k++) if (t.wonEpisode >= 0 && t.wonEpisode <= k) s.passAt[k]++;
  /** @type {string | null} */
  let lastMine = null;
  for (const e of t.episodes) {
    s.episodes++;
    const clicks = e.turns.map((u) => cellOf(u.response));
    if (lastMine !== null) {
      s.afterMine++;
      if (clicks.includes(lastMine)) s.repeatMine++;
    }
    for (const u of e.turns) {
      s.turns++;
      if (Math.abs(u.reward + 1) < 1e-4) s.wasted++;
    }
    const last = e.turns.at(-1);
    const endedOnMine = !e.won && last !== undefined && Math.abs(last.reward + 0.1) < 1e-4;
    if (e.won) s.won++;
    else if (endedOnMine) s.mine++;
    else s.outOfTurns++;
    lastMine = endedOnMine ? (clicks.at(-1) ?? null) : null;
    if (e.reflection) {
      s.reflections++;
      if (e.reflection.correct !== undefined) {
        s.checked++;
        if (e.reflection.correct) s.right++;
      }
    }
  }
}

const sources = readInputs(inputs, {
  trial: (/** @type {TranscriptLine} */ t) => addTrial(countsOf(t.reflections === 'expert' ? `${t.method} (expert reflections)` : t.method), t),
  counts(saved, file) {
    if (!saved || typeof saved.methods !== 'object' || !Array.isArray(saved.sources))
      fail(`${file}: not a counts file of ${SCRIPT} (expected "methods" and "sources")`);
    for (const [key, c] of /** @type {[string, Counts][]} */ (Object.entries(saved.methods))) {
      const s = countsOf(key);
      for (const name of COUNTS) s[name] += c[name];
      c.passAt.forEach((w, k) => (s.passAt[k] += w));
    }
  },
});

for (const [method, s] of byMethod) {
  console.log(
    `${method}: ${s.trials} trials; pass@1/2/3 ${s.passAt.map((w) => pct(w, s.trials)).join(' / ')}; ` +
      `wasted turns ${pct(s.wasted, s.turns)}% of ${s.turns}; episodes won/mine/out of turns ${pct(s.won, s.episodes)}/${pct(s.mine, s.episodes)}/${pct(s.outOfTurns, s.episodes)}%; ` +
      `after a mine, same mine again ${s.repeatMine} of ${s.afterMine} (${pct(s.repeatMine, s.afterMine)}%)` +
      (s.reflections
        ? `; reflections right ${s.right} of ${s.checked} checked (${pct(s.right, s.checked)}%: those after an attempt that ended on a mine), ` +
          `of ${s.reflections} reflections in all`
        : ''),
  );
}

if (out !== null) writeCounts(out, SCRIPT, sources, Object.fromEntries(byMethod));
