// `lamer env generate` and `lamer env check` for ALFWorld: generated games replay; a broken walkthrough fails the check.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { command } from '../../../src/cli/commands/env.js';
import { foldersWith } from '../../../src/envs/alfworld/games/data.js';
import { captured } from '../../helpers/index.js';

describe('lamer env (alfworld)', () => {
  it('generates games as ALFWorld lays them out, checks them all, and fails a game whose walkthrough is wrong', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alfworld-cli-'));
    const gen = await captured(() => command.run(['generate', '--env', 'alfworld', '--out', dir, '--train', '4', '--eval', '3']));
    expect(gen.code).toBe(0);
    expect(gen.out).toBe(`wrote 7 games under ${dir} (train: 4, valid_unseen: 3)`);
    const ok = await captured(() => command.run(['check', '--env', 'alfworld', '--data', dir]));
    expect(ok.code).toBe(0);
    const lines = ok.out.split('\n');
    expect(lines.length).toBe(8);
    expect(lines.slice(0, 7).every((l) => /^ok {4}(train|valid_unseen)\/\S+ {2}\S+ {2}\d+ steps {2}sha256 [0-9a-f]{12}$/.test(l))).toBe(true);
    expect(lines[7]).toMatch(/^env check: 7 games, 7 replayed to the goal \(\d+ commands\), 0 failed$/);

    // One game's walkthrough loses its last command: the goal no longer holds at its end.
    const file = join(foldersWith(join(dir, 'train'), 'game.tw-pddl')[0], 'game.tw-pddl');
    const game = JSON.parse(readFileSync(file, 'utf8')) as { walkthrough: string[] };
    writeFileSync(file, JSON.stringify({ ...game, walkthrough: game.walkthrough.slice(0, -1) }));
    const bad = await captured(() => command.run(['check', '--env', 'alfworld', '--data', dir]));
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/(^|\n)FAIL {2}train\/\S+ {2}\S+ {2}the goal does not hold after the last step/);
    expect(bad.out).toMatch(/env check: 7 games, 6 replayed to the goal \(\d+ commands\), 1 failed$/);
  });

  it('--household small writes the CPU-scale households, whose walkthroughs replay; other sizes are refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alfworld-small-'));
    const gen = await captured(() => command.run(['generate', '--env', 'alfworld', '--out', dir, '--train', '3', '--eval', '3', '--household', 'small']));
    expect(gen.code).toBe(0);
    const ok = await captured(() => command.run(['check', '--env', 'alfworld', '--data', dir]));
    expect(ok.out).toMatch(/env check: 6 games, 6 replayed to the goal/);
    // A small household has at most 10 receptacles (the standard ones up to 20).
    for (const folder of foldersWith(dir, 'game.tw-pddl')) {
      const game = JSON.parse(readFileSync(join(folder, 'game.tw-pddl'), 'utf8')) as { pddl_problem: string };
      const receptacles = new Set(game.pddl_problem.match(/\(receptacleType (\S+) /g));
      expect(receptacles.size).toBeGreaterThanOrEqual(4);
      expect(receptacles.size).toBeLessThanOrEqual(10);
    }
    const big = await captured(() => command.run(['generate', '--env', 'alfworld', '--out', dir, '--household', 'big']));
    expect(big.code).toBe(2);
    expect(big.err).toContain('--household: expected standard or small');
  });

  it('refuses other environments, a missing folder argument and unknown actions (exit 2)', async () => {
    expect((await captured(() => command.run(['check', '--env', 'sokoban', '--data', '.']))).code).toBe(2);
    expect((await captured(() => command.run(['check', '--env', 'alfworld']))).code).toBe(2);
    expect((await captured(() => command.run(['replay', '--env', 'alfworld']))).code).toBe(2);
    const empty = mkdtempSync(join(tmpdir(), 'alfworld-empty-'));
    expect((await captured(() => command.run(['check', '--env', 'alfworld', '--data', empty]))).code).toBe(1);
  });
});
