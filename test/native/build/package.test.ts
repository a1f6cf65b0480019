// lamer as a package: `npm run build` compiles src/ to dist/, a fresh project installs this one by path (a file:
// dependency, linked, so no registry is needed), and a plain `node` script there imports 'lamer' — no tsx, no vitest
// transform — and uses a tensor, an environment, the native advantage kernel and one Trainer iteration of the tiny
// preset; the installed `lamer` command answers. What the script computes is compared with the same sources run here in the test (the TS reference backend
// for the advantages), and a TypeScript file in that project type-checks against the compiled declarations.
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { computeAdvantages, rowTableFromColumns } from '../../../src/algo/index.js';
import { createEnv } from '../../../src/envs/index.js';
import { root } from '../../helpers/index.js';

const consumer = mkdtempSync(join(tmpdir(), 'lamer-consumer-'));
afterAll(() => rmSync(consumer, { recursive: true, force: true }));

const ENV = { rows: 4, cols: 4, mines: 2, maxTurns: 3 };

/** Two groups of two single-turn trials; GRPO compares the trials of each group. */
const COLUMNS = {
  group: Int32Array.from([0, 0, 1, 1]),
  trial: Int32Array.from([0, 1, 2, 3]),
  episode: Int32Array.from([0, 0, 0, 0]),
  turn: Int32Array.from([0, 0, 0, 0]),
  phase: Uint8Array.from([0, 0, 0, 0]),
  reward: Float32Array.from([1, 0, 0.5, 0.25]),
  valid: Uint8Array.from([1, 1, 1, 0]),
  won: Uint8Array.from([1, 0, 0, 0]),
  anchor: ['a', 'b', 'c', 'd'],
};

const SCRIPT = `
import { Tensor, createEnv, computeAdvantages, rowTableFromColumns, Trainer } from 'lamer';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const out = { resolved: import.meta.resolve('lamer') };

const t = Tensor.from(new Float32Array([1, 2, 3.5]), { shape: [3] });
out.tensor = { sum: t.sum(), data: Array.from(t.data), shape: t.shape };
t.dispose();

const env = createEnv('minesweeper', ${JSON.stringify(ENV)});
out.observation = env.reset(7);

const columns = ${JSON.stringify({ ...COLUMNS, group: [...COLUMNS.group], trial: [...COLUMNS.trial], episode: [...COLUMNS.episode], turn: [...COLUMNS.turn], phase: [...COLUMNS.phase], reward: [...COLUMNS.reward], valid: [...COLUMNS.valid], won: [...COLUMNS.won] })};
const table = rowTableFromColumns({
  group: Int32Array.from(columns.group), trial: Int32Array.from(columns.trial), episode: Int32Array.from(columns.episode),
  turn: Int32Array.from(columns.turn), phase: Uint8Array.from(columns.phase), reward: Float32Array.from(columns.reward),
  valid: Uint8Array.from(columns.valid), won: Uint8Array.from(columns.won), anchor: columns.anchor,
});
out.advantage = Array.from(computeAdvantages(table, { estimator: 'grpo', backend: 'native' }).advantage);

const trainer = new Trainer(
  {
    name: 'tiny',
    runsDir: mkdtempSync(join(tmpdir(), 'lamer-consumer-runs-')),
    method: 'lamer',
    model: { init: { preset: 'tiny', tokenizer: 'compact', seed: 4 }, promptStyle: 'compact' },
    env: { name: 'minesweeper', options: ${JSON.stringify(ENV)} },
    trial: { episodes: 2 },
    rollout: { tasksPerIteration: 2, groupSize: 2, maxResponseTokens: 12 },
    optim: { lr: 3e-3, miniBatchRows: 8 },
    train: { iterations: 1, evalEvery: 0, checkpointEvery: 0 },
  },
  { progress: false, log: () => {} },
);
out.iterations = [];
for await (const e of trainer.run()) if (e.type === 'iteration') out.iterations.push({ iteration: e.iteration, loss: e.loss, rows: e.rows });
console.log(JSON.stringify(out));
`;

/** Uses the compiled declarations: a wrong call must be a type error. */
const TYPED = `
import { Tensor, createEnv, Trainer, type TrainerConfigInput } from 'lamer';
const config: TrainerConfigInput = { name: 'x', method: 'lamer', env: { name: 'minesweeper' } };
const trainer: Trainer = new Trainer(config, { progress: false });
const sum: number = Tensor.from(new Float32Array(2)).sum();
const text: string = createEnv('minesweeper').reset(0).text;
// @ts-expect-error: Trainer has no runn()
trainer.runn();
export { sum, text };
`;

/** The command's stdout; on failure an error carrying its output. */
function run(command: string, args: string[], cwd: string): string {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
  } catch (e) {
    const { stdout, stderr } = e as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}${stderr ?? ''}`, { cause: e });
  }
}

describe('the package', () => {
  it('builds to dist/, installs by path, and works from a plain node script and from TypeScript', () => {
    run('npm', ['run', '--silent', 'build'], root);
    writeFileSync(
      join(consumer, 'package.json'),
      JSON.stringify({ name: 'lamer-consumer', private: true, type: 'module', dependencies: { lamer: `file:${root}` } }, null, 2),
    );
    run('npm', ['install', '--no-audit', '--no-fund', '--offline', '--install-links=false', '--loglevel=error'], consumer);
    const linked = join(consumer, 'node_modules', 'lamer');
    expect(lstatSync(linked).isSymbolicLink()).toBe(true);
    expect(realpathSync(linked)).toBe(realpathSync(root));

    writeFileSync(join(consumer, 'main.mjs'), SCRIPT);
    const lines = run(process.execPath, ['main.mjs'], consumer).trim().split('\n');
    const out = JSON.parse(lines[lines.length - 1]);

    expect(out.resolved).toBe(`file://${realpathSync(root)}/dist/index.js`);
    expect(out.tensor).toEqual({ sum: 6.5, data: [1, 2, 3.5], shape: [3] });
    expect(out.observation).toEqual(createEnv('minesweeper', ENV).reset(7));
    const reference = computeAdvantages(rowTableFromColumns(COLUMNS), { estimator: 'grpo', backend: 'reference' }).advantage;
    expect(out.advantage).toHaveLength(4);
    out.advantage.forEach((a: number, i: number) => expect(a).toBeCloseTo(reference[i], 5));
    expect(out.iterations).toHaveLength(1);
    expect(out.iterations[0].rows).toBeGreaterThan(0);
    expect(Number.isFinite(out.iterations[0].loss)).toBe(true);

    // The installed command runs too.
    const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
    expect(run(join(consumer, 'node_modules', '.bin', 'lamer'), ['--version'], consumer).trim()).toBe(`lamer ${version}`);

    writeFileSync(join(consumer, 'typed.ts'), TYPED);
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const flags = ['--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node'];
    // Types come from dist/ (no 'lamer-source' condition here), through the linked folder.
    run(process.execPath, [tsc, ...flags, '--typeRoots', join(root, 'node_modules', '@types'), 'typed.ts'], consumer);
  }, 180_000);
});
