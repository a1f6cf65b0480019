// scripts/refusal-stats.mjs, the source of the docs' counts of what WebShop's and ALFWorld's pages refused, on
// hand-made transcripts whose counts are worked out here by hand: each kind of refusal, repeats of the action before,
// failed episodes that end stuck on one refused action, and that the counts files it writes sum to what the
// transcripts give together.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const script = join(root, 'scripts', 'refusal-stats.mjs');
const run = (...args: string[]) => execFileSync(process.execPath, [script, ...args], { encoding: 'utf8' });

const REQUEST = 'shop find me a shoe rack with color: grey, and size: 4-tier, and price lower than 100.00 dollars';
const turn = (action: string, valid: boolean, prompt = REQUEST) => ({ prompt, response: `<action>${action}</action>`, reward: 0, valid });

// WebShop, one trial of two episodes:
//   episode 0 (failed): search, an unlisted product, a listed one, `grey` refused (a requested value), `grey` again
//     (a repeat), `oak` refused (a value the request does not name): 6 actions, 4 refused, 1 repeat; its last two
//     actions are refused but differ, so it does not end stuck.
//   episode 1 (failed): `click[b0aaaaaaaa red]` refused (an id with words), `4-tier` refused twice (requested, the
//     second a repeat): ends stuck.
//   Turns right after a refused one: episode 0's third (accepted), fifth and sixth (refused), episode 1's second and
//   third (refused): 4 of 5 refused; the other 4 turns (each episode's first, and those after an accepted action): 3.
//   The refusals that start a run: the unlisted product, the first `grey`, the id with words. The unlisted product is
//   named nowhere in its prompt.
const WEBSHOP = {
  method: 'lamer',
  task: 1,
  wonEpisode: -1,
  episodes: [
    {
      episode: 0,
      won: false,
      turns: [
        turn('search[shoe rack]', true),
        turn('click[b0zzzzzzzz]', false),
        turn('click[b0guq69pwq]', true),
        turn('click[grey]', false),
        turn('click[Grey]', false),
        turn('click[oak]', false),
      ],
    },
    {
      episode: 1,
      won: false,
      turns: [turn('click[b0aaaaaaaa red]', false), turn('click[4-tier]', false), turn('click[4-tier]', false)],
    },
  ],
};
// WebShop under another method: a search, then an unlisted product the prompt names among the episode's actions (not
// one the model made up): 1 of 2 actions refused, starting a run, named in the prompt.
const NAMED = {
  method: 'reflexion',
  task: 3,
  wonEpisode: -1,
  episodes: [
    {
      episode: 0,
      won: false,
      turns: [turn('search[shoe rack]', true), turn('click[b0yyyyyyyy]', false, `${REQUEST} T1 | acts: search[shoe rack] ; click[b0yyyyyyyy] no`)],
    },
  ],
};
// ALFWorld, one trial of one won episode: go to desk 1 (accepted), go to desk 1 again (refused: where it stands), take
// pen 9 from desk 1 (refused), go to shelf 7 (refused: elsewhere), go to shelf 1 (accepted), take pen 1 (accepted).
// Turns right after a refused one: the third, fourth (refused) and fifth (accepted): 2 of 3; the other 3 turns: 1.
const alf = (action: string, valid: boolean) => turn(action, valid, 'alf put a pen on the shelf / can: go to desk 1, go to shelf 1');
const ALFWORLD = {
  method: 'gigpo',
  task: 2,
  wonEpisode: 0,
  episodes: [
    {
      episode: 0,
      won: true,
      turns: [
        alf('go to desk 1', true),
        alf('go to desk 1', false),
        alf('take pen 9 from desk 1', false),
        alf('go to shelf 7', false),
        alf('go to shelf 1', true),
        alf('take pen 1 from shelf 1', true),
      ],
    },
  ],
};
const EXPECTED = {
  lamer: {
    actions: 9,
    refused: 7,
    repeats: 2,
    failedEpisodes: 2,
    stuckEnd: 1,
    afterRefused: 5,
    refusedAfterRefused: 4,
    kinds: {
      'product the page does not list': 1,
      'requested option value not offered': 4,
      'other click': 1,
      'product id with words after it': 1,
    },
    firstKinds: { 'product the page does not list': 1, 'requested option value not offered': 1, 'product id with words after it': 1 },
    unlistedNowhere: 1,
    unlistedNowhereFirst: 1,
  },
  reflexion: {
    actions: 2,
    refused: 1,
    repeats: 0,
    failedEpisodes: 1,
    stuckEnd: 0,
    afterRefused: 0,
    refusedAfterRefused: 0,
    kinds: { 'product the page does not list': 1 },
    firstKinds: { 'product the page does not list': 1 },
    unlistedNowhere: 0,
    unlistedNowhereFirst: 0,
  },
  gigpo: {
    actions: 6,
    refused: 3,
    repeats: 1,
    failedEpisodes: 0,
    stuckEnd: 0,
    afterRefused: 3,
    refusedAfterRefused: 2,
    kinds: { 'go to where it stands': 1, take: 1, 'go to elsewhere': 1 },
    firstKinds: { 'go to where it stands': 1 },
    unlistedNowhere: 0,
    unlistedNowhereFirst: 0,
  },
};

describe('scripts/refusal-stats.mjs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-refusal-stats-'));
  const file = join(dir, 'all.jsonl');
  writeFileSync(file, [WEBSHOP, NAMED, ALFWORLD].map((t) => JSON.stringify(t) + '\n').join(''));

  it('counts each kind of refusal, the repeats and the stuck endings, per method', () => {
    const out = join(dir, 'refusals.json');
    const printed = run('--out', out, file);
    expect(printed).toContain(
      'lamer: 7 of 9 actions refused (77.8%); 2 repeat the action before (28.6%); 1 of 2 failed episodes end on the same refused action twice (50.0%)\n' +
        '  refused: 3 of 4 first turns and turns after an accepted action (75.0%), 4 of 5 turns after a refused one (80.0%)\n' +
        '  requested option value not offered 4 (57.1%); other click 1 (14.3%); product id with words after it 1 (14.3%); product the page does not list 1 (14.3%)\n' +
        '  refusals that start a run: product id with words after it 1 (33.3%); product the page does not list 1 (33.3%); requested option value not offered 1 (33.3%)\n' +
        '  unlisted products the prompt names nowhere: 1 of 1 (100.0%); of those that start a run, 1 of 1 (100.0%)\n',
    );
    expect(printed).toContain('  unlisted products the prompt names nowhere: 0 of 1 (0.0%); of those that start a run, 0 of 1 (0.0%)\n');
    expect(printed).toContain('gigpo: 3 of 6 actions refused (50.0%); 1 repeat the action before (33.3%)');
    expect(printed).toContain('  refused: 1 of 3 first turns and turns after an accepted action (33.3%), 2 of 3 turns after a refused one (66.7%)');
    expect(printed).toContain(
      '  go to elsewhere 1 (33.3%); go to where it stands 1 (33.3%); take 1 (33.3%)\n  refusals that start a run: go to where it stands 1 (100.0%)\n',
    );
    const saved = JSON.parse(readFileSync(out, 'utf8')) as { methods: unknown; sources: { trials: number }[] };
    expect(saved.methods).toEqual(EXPECTED);
    expect(saved.sources.map((s) => s.trials)).toEqual([3]);
  });

  it('counts files add up to what their transcripts give together; a file of another script is refused', () => {
    const a = join(dir, 'a.json');
    const b = join(dir, 'b.json');
    run('--out', a, file);
    run('--out', b, file);
    const lines = (text: string) => text.split('\n').filter((l) => l && !l.startsWith('wrote '));
    expect(lines(run(a, b))).toEqual(lines(run(file, file)));
    const other = join(dir, 'other.json');
    writeFileSync(other, JSON.stringify({ script: 'scripts/transcript-stats.mjs', methods: {}, sources: [] }));
    expect(() => execFileSync(process.execPath, [script, other], { stdio: 'pipe' })).toThrow(/not a counts file of scripts\/refusal-stats\.mjs/);
    // A counts file without the after-refusal counts (an older script's) is refused, not summed as zeros.
    const saved = JSON.parse(readFileSync(a, 'utf8')) as { methods: Record<string, Record<string, unknown>> };
    delete saved.methods.lamer.afterRefused;
    const old = join(dir, 'old.json');
    writeFileSync(old, JSON.stringify(saved));
    expect(() => execFileSync(process.execPath, [script, old], { stdio: 'pipe' })).toThrow(/method lamer has no count 'afterRefused'/);
    // One without the counts of the refusals that start a run (written before they were counted) is summed, and those
    // lines are left out for its methods rather than printed short.
    const earlier = JSON.parse(readFileSync(a, 'utf8')) as { methods: Record<string, Record<string, unknown>> };
    delete earlier.methods.lamer.firstKinds;
    const before = join(dir, 'before.json');
    writeFileSync(before, JSON.stringify(earlier));
    const printed = run(before, file);
    expect(printed).toContain('lamer: 14 of 18 actions refused');
    expect(printed).toContain('  (a counts file written before the refusals that start a run were counted: those lines left out)');
    expect(printed).not.toContain('of those that start a run, 2 of 2');
    expect(printed).toContain('  unlisted products the prompt names nowhere: 0 of 2 (0.0%); of those that start a run, 0 of 2 (0.0%)');
  });
});
