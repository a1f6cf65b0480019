// `lamer eval` end to end on a tiny random model: several methods, expert reflections as extra rows, the JSON summary
// and the transcripts file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { command as initModel } from '../../../src/cli/commands/init-model.js';
import { command as evalCommand } from '../../../src/cli/commands/eval.js';
import { captured, removeTempDirs, tempDir } from '../../helpers/index.js';

afterAll(removeTempDirs);

let tiny: string;
beforeAll(async () => {
  tiny = tempDir('eval-cli-model');
  expect((await captured(() => initModel.run(['--preset', 'tiny', '--out', tiny, '--seed', '3']))).code).toBe(0);
});

describe('lamer eval', () => {
  it('adds an expert-reflection row per reflecting method and writes the summary and the transcripts', async () => {
    const dir = tempDir('eval-cli-out');
    const json = join(dir, 'eval.json');
    const transcripts = join(dir, 'trials.jsonl');
    const { code, out } = await captured(() =>
      evalCommand.run([
        '--model',
        tiny,
        '--method',
        'lamer',
        '--method',
        'gigpo',
        '--expert-reflections',
        '--tasks',
        '3',
        '--quiet',
        '--json',
        json,
        '--transcripts',
        transcripts,
        '--set',
        `runsDir=${dir}`,
        '--set',
        'rollout.maxResponseTokens=8',
      ]),
    );
    expect(code).toBe(0);
    // Rows in order: the method, the same method with expert reflections, then the next method.
    const rows = out
      .split('\n')
      .filter((l) => / minesweeper /.test(l))
      .map((l) => l.split(/\s{2,}/)[0]);
    expect(rows).toEqual(['lamer', 'lamer (expert reflections)', 'gigpo']);
    expect(out).toContain('lamer - lamer (expert reflections) pass@3');
    expect(out).toContain('lamer - gigpo pass@3');
    const summary = JSON.parse(readFileSync(json, 'utf8')) as Array<{ method: string; reflections?: string; tasks: number }>;
    expect(summary.map((s) => [s.method, s.reflections ?? 'model'])).toEqual([
      ['lamer', 'model'],
      ['lamer', 'expert'],
      ['gigpo', 'model'],
    ]);
    const trials = readFileSync(transcripts, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(trials).toHaveLength(9);
    expect(trials.map((t) => `${t.method}/${t.reflections ?? 'model'}`)).toEqual([
      ...Array(3).fill('lamer/model'),
      ...Array(3).fill('lamer/expert'),
      ...Array(3).fill('gigpo/model'),
    ]);
    // A random tiny model fails its episodes: LaMer writes reflections between them, and the expert's say what happened.
    const reflectionsOf = (i: number) => trials[i].episodes.flatMap((e: { reflection?: { response: string } }) => (e.reflection ? [e.reflection] : []));
    expect(reflectionsOf(0).length).toBeGreaterThan(0);
    for (const i of [3, 4, 5]) for (const r of reflectionsOf(i)) expect(r.response).toMatch(/^<remark>(mine \(\d, \d\)|out of turns); safe /);
    for (const i of [6, 7, 8]) expect(reflectionsOf(i)).toHaveLength(0);
  });

  it('adds no expert row for methods that do not reflect', async () => {
    const dir = tempDir('eval-cli-out2');
    const { code, out } = await captured(() =>
      evalCommand.run([
        '--model',
        tiny,
        '--method',
        'gigpo',
        '--expert-reflections',
        '--tasks',
        '2',
        '--quiet',
        '--set',
        `runsDir=${dir}`,
        '--set',
        'rollout.maxResponseTokens=8',
      ]),
    );
    expect(code).toBe(0);
    expect(out).not.toContain('expert reflections');
  });

  it('evaluates the chance rows without a model, and asks for one when another method is listed', async () => {
    const dir = tempDir('eval-cli-chance');
    const json = join(dir, 'eval.json');
    const { code, out } = await captured(() =>
      evalCommand.run(['--method', 'random', '--method', 'random-memory', '--tasks', '4', '--quiet', '--json', json, '--set', `runsDir=${dir}`]),
    );
    expect(code).toBe(0);
    const rows = out
      .split('\n')
      .filter((l) => / minesweeper /.test(l))
      .map((l) => l.split(/\s{2,}/)[0]);
    expect(rows).toEqual(['random', 'random-memory']);
    expect(out).toContain('random - random-memory pass@3');
    const summary = JSON.parse(readFileSync(json, 'utf8')) as Array<{ method: string; tasks: number; firstWin: number[] }>;
    expect(summary.map((s) => [s.method, s.tasks, s.firstWin.length])).toEqual([
      ['random', 4, 4],
      ['random-memory', 4, 4],
    ]);
    const errors: string[] = [];
    const error = console.error;
    console.error = (...a: unknown[]) => void errors.push(a.join(' '));
    try {
      expect(await evalCommand.run(['--method', 'random', '--method', 'lamer', '--tasks', '2', '--quiet', '--set', `runsDir=${dir}`])).toBe(2);
    } finally {
      console.error = error;
    }
    expect(errors.join('\n')).toContain('--model DIR is required');
  });
});
