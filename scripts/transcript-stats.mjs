#!/usr/bin/env node
// Why a MineSweeper agent wins or loses, from transcripts (`lamer eval --transcripts FILE`, or a run's
// transcripts.jsonl): per method, pass@k, the share of turns that opened nothing (rewarded -1: a cell already open,
// off the board or unparsable), how episodes end (win, mine, out of turns), how often an attempt after a mine opens
// that same mine again, and how many reflections were right.
// usage: node scripts/transcript-stats.mjs FILE.jsonl [FILE.jsonl ...]
import { readFileSync } from 'node:fs';

const cellOf = (response) => {
  const m = /<action>[^<]*?(-?\d+)\D+(-?\d+)/.exec(response);
  return m ? `${m[1]},${m[2]}` : null;
};

const byMethod = new Map();
for (const file of process.argv.slice(2)) {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const t = JSON.parse(line);
    const key = t.reflections === 'expert' ? `${t.method} (expert reflections)` : t.method;
    if (!byMethod.has(key)) byMethod.set(key, []);
    byMethod.get(key).push(t);
  }
}

const pct = (a, b) => (b ? ((100 * a) / b).toFixed(1) : '-');
for (const [method, trials] of byMethod) {
  const passAt = Array.from({ length: 3 }, (_, k) => trials.filter((t) => t.wonEpisode >= 0 && t.wonEpisode <= k).length);
  let turns = 0,
    wasted = 0,
    episodes = 0,
    won = 0,
    mine = 0,
    outOfTurns = 0;
  let afterMine = 0,
    repeatMine = 0,
    reflections = 0,
    right = 0,
    checked = 0;
  for (const t of trials) {
    let lastMine = null;
    for (const e of t.episodes) {
      episodes++;
      const clicks = e.turns.map((u) => cellOf(u.response));
      if (lastMine !== null) {
        afterMine++;
        if (clicks.includes(lastMine)) repeatMine++;
      }
      for (const u of e.turns) {
        turns++;
        if (Math.abs(u.reward + 1) < 1e-4) wasted++;
      }
      const last = e.turns.at(-1);
      if (e.won) won++;
      else if (last && Math.abs(last.reward + 0.1) < 1e-4) mine++;
      else outOfTurns++;
      lastMine = !e.won && last && Math.abs(last.reward + 0.1) < 1e-4 ? clicks.at(-1) : null;
      if (e.reflection) {
        reflections++;
        if (e.reflection.correct !== undefined) {
          checked++;
          if (e.reflection.correct) right++;
        }
      }
    }
  }
  console.log(
    `${method}: ${trials.length} trials; pass@1/2/3 ${passAt.map((w) => pct(w, trials.length)).join(' / ')}; ` +
      `wasted turns ${pct(wasted, turns)}% of ${turns}; episodes won/mine/out of turns ${pct(won, episodes)}/${pct(mine, episodes)}/${pct(outOfTurns, episodes)}%; ` +
      `after a mine, same mine again ${repeatMine} of ${afterMine} (${pct(repeatMine, afterMine)}%)` +
      (reflections ? `; reflections right ${right} of ${checked} (${pct(right, checked)}%)` : ''),
  );
}
