// What the transcript counting scripts (transcript-stats.mjs, refusal-stats.mjs) share: their command line
// (`[--out FILE.json] INPUT...`), the walk over their inputs (a transcripts .jsonl, a run or job folder with its
// method folders' transcripts, or a counts .json one of them wrote), and the counts file they write, which records
// the SHA-256 and trial count of every transcripts file read so that committed per-seed files can be summed.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** @typedef {{ file: string, sha256: string, trials: number }} Source a transcripts file read: its SHA-256 and trial count */

/** Print `message` and exit with status 2 (bad usage or input). */
export function fail(/** @type {string} */ message) {
  console.error(message);
  process.exit(2);
}

/**
 * The command line `[--out FILE.json] INPUT...` of `script` (its path, for the usage line).
 * @returns {{ out: string | null, inputs: string[] }}
 */
export function parseArgs(/** @type {string} */ script) {
  const usage = () => fail(`usage: node ${script} [--out FILE.json] INPUT...   (INPUT: transcripts .jsonl, a run or job folder, or a counts .json)`);
  const args = process.argv.slice(2);
  /** @type {string | null} */
  let out = null;
  const inputs = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--out') out = args[++i] ?? usage();
    else if (args[i].startsWith('-')) usage();
    else inputs.push(args[i]);
  }
  if (inputs.length === 0) usage();
  return { out, inputs };
}

/**
 * Every input in order: each trial of a transcripts file goes to `trial`, the parsed content of a counts file to
 * `counts` (which checks it is its own kind and adds it up). Returns the transcripts files read, those named by the
 * counts files included.
 * @param {string[]} inputs
 * @param {{ trial: (line: any) => void, counts: (saved: any, file: string) => void }} add
 * @returns {Source[]}
 */
export function readInputs(inputs, add) {
  /** @type {Source[]} */
  const sources = [];
  const readTranscripts = (/** @type {string} */ file) => {
    const text = readFileSync(file, 'utf8');
    let trials = 0;
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      add.trial(JSON.parse(line));
      trials++;
    }
    sources.push({ file, sha256: createHash('sha256').update(text).digest('hex'), trials });
  };
  for (const input of inputs) {
    if (!existsSync(input)) fail(`${input}: no such file or folder`);
    if (statSync(input).isDirectory()) {
      const files = [
        join(input, 'transcripts.jsonl'),
        ...readdirSync(input)
          .sort()
          .map((d) => join(input, d, 'transcripts.jsonl')),
      ];
      const found = files.filter((f) => existsSync(f));
      if (found.length === 0) fail(`${input}: no transcripts.jsonl in it or in its method folders`);
      found.forEach(readTranscripts);
    } else if (input.endsWith('.json')) {
      const saved = JSON.parse(readFileSync(input, 'utf8'));
      add.counts(saved, input);
      sources.push(...saved.sources);
    } else readTranscripts(input);
  }
  return sources;
}

/** Write the counts file `out` of `script`: the sources read and the counts per method. */
export function writeCounts(/** @type {string} */ out, /** @type {string} */ script, /** @type {Source[]} */ sources, /** @type {object} */ methods) {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ script, sources, methods }, null, 2) + '\n');
  console.log(`wrote ${out}`);
}

/** `a` as a percentage of `b` with one decimal, `-` where `b` is 0. */
export const pct = (/** @type {number} */ a, /** @type {number} */ b) => (b ? ((100 * a) / b).toFixed(1) : '-');
