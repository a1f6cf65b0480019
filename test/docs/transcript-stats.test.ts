// scripts/transcript-stats.mjs, the source of the transcript figures in the docs (the same mine clicked again after a
// mine, turns wasted, reflections right), on hand-made transcripts whose counts are worked out here by hand: what it
// prints, the counts file it writes for a run (docs/runs/<run>/transcripts.json), and that those files summed give
// what the transcripts together give, so a job's across-seed figures can be re-derived from the committed files.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const script = join(root, 'scripts', 'transcript-stats.mjs');
const run = (...args: string[]) => execFileSync(process.execPath, [script, ...args], { encoding: 'utf8' });

const turn = (cell: string, reward: number) => ({ prompt: 'p', response: `<action>${cell}</action>`, reward, valid: true });
const reflection = (correct?: boolean) => ({ prompt: 'r', response: '<remark>x</remark>', valid: true, ...(correct === undefined ? {} : { correct }) });

// lamer, trial A: a mine at (3, 3) (reflection right), the same mine again (reflection wrong), then a win.
// lamer, trial B: out of turns after a wasted click (a reflection the environment cannot check), then a win.
// gigpo, trial C: three mines, the second the same as the first; no reflections.
const LAMER = [
  {
    method: 'lamer',
    task: 1,
    wonEpisode: 2,
    episodes: [
      { episode: 0, won: false, turns: [turn('(1, 1)', 0.5), turn('(2, 2)', -1), turn('(3, 3)', -0.1)], reflection: reflection(true) },
      { episode: 1, won: false, turns: [turn('(3, 3)', -0.1)], reflection: reflection(false) },
      { episode: 2, won: true, turns: [turn('(1, 2)', 10)] },
    ],
  },
  {
    method: 'lamer',
    task: 2,
    wonEpisode: 1,
    episodes: [
      { episode: 0, won: false, turns: [turn('(1, 1)', 0.5), turn('(1, 1)', -1)], reflection: reflection() },
      { episode: 1, won: true, turns: [turn('(4, 4)', 10)] },
    ],
  },
];
const GIGPO = [
  {
    method: 'gigpo',
    task: 1,
    wonEpisode: -1,
    episodes: [0, 1, 2].map((episode) => ({ episode, won: false, turns: [turn(episode < 2 ? '(2, 2)' : '(3, 3)', -0.1)] })),
  },
];
const EXPECTED = {
  lamer: {
    trials: 2,
    passAt: [0, 1, 2],
    turns: 8,
    wasted: 2,
    episodes: 5,
    won: 2,
    mine: 2,
    outOfTurns: 1,
    afterMine: 2,
    repeatMine: 1,
    reflections: 3,
    checked: 2,
    right: 1,
  },
  gigpo: {
    trials: 1,
    passAt: [0, 0, 0],
    turns: 3,
    wasted: 0,
    episodes: 3,
    won: 0,
    mine: 3,
    outOfTurns: 0,
    afterMine: 2,
    repeatMine: 1,
    reflections: 0,
    checked: 0,
    right: 0,
  },
};
const jsonl = (trials: object[]) => trials.map((t) => JSON.stringify(t) + '\n').join('');

describe('scripts/transcript-stats.mjs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-transcript-stats-'));
  const file = join(dir, 'all.jsonl');
  writeFileSync(file, jsonl([...LAMER, ...GIGPO]));

  it('counts what the transcripts show, and says what the reflection share is out of', () => {
    const out = join(dir, 'counts', 'transcripts.json');
    const printed = run('--out', out, file);
    expect(printed).toContain(
      'lamer: 2 trials; pass@1/2/3 0.0 / 50.0 / 100.0; wasted turns 25.0% of 8; episodes won/mine/out of turns 40.0/40.0/20.0%; ' +
        'after a mine, same mine again 1 of 2 (50.0%); reflections right 1 of 2 checked (50.0%: those after an attempt that ended on a mine), of 3 reflections in all',
    );
    expect(printed).toContain(
      'gigpo: 1 trials; pass@1/2/3 0.0 / 0.0 / 0.0; wasted turns 0.0% of 3; episodes won/mine/out of turns 0.0/100.0/0.0%; after a mine, same mine again 1 of 2 (50.0%)\n',
    );
    const saved = JSON.parse(readFileSync(out, 'utf8')) as { methods: unknown; sources: unknown };
    expect(saved.methods).toEqual(EXPECTED);
    expect(saved.sources).toEqual([{ file, sha256: createHash('sha256').update(readFileSync(file)).digest('hex'), trials: 3 }]);
  });

  it('a job folder reads each method folder; counts files add up to what their transcripts give together', () => {
    const job = join(dir, 'job');
    for (const [method, trials] of [
      ['lamer', LAMER],
      ['gigpo', GIGPO],
    ] as const) {
      mkdirSync(join(job, method), { recursive: true });
      writeFileSync(join(job, method, 'transcripts.jsonl'), jsonl(trials));
    }
    const seed0 = join(dir, 'seed0.json');
    const seed1 = join(dir, 'seed1.json');
    run('--out', seed0, job);
    run('--out', seed1, file);
    expect((JSON.parse(readFileSync(seed0, 'utf8')) as { methods: unknown }).methods).toEqual(EXPECTED);
    const both = join(dir, 'both.json');
    const lines = (text: string) =>
      text
        .split('\n')
        .filter((l) => l && !l.startsWith('wrote '))
        .sort();
    expect(lines(run('--out', both, seed0, seed1))).toEqual(lines(run(file, file)));
    const summed = JSON.parse(readFileSync(both, 'utf8')) as { methods: Record<string, Record<string, number | number[]>>; sources: unknown[] };
    expect(summed.methods.lamer.trials).toBe(4);
    expect(summed.methods.lamer.passAt).toEqual([0, 2, 4]);
    expect(summed.sources).toHaveLength(3);
  });
});
