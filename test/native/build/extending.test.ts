// The recipes of docs/extending.md are real: each is a patch (docs/extending/*.patch) that adds a small environment,
// method, advantage estimator, policy loss, loss option or architecture. Here every patch applies to a copy of the
// tree, the number of existing files it changes is the one the document's table states (and within the bound the
// project holds itself to), the patched tree typechecks, what each addition adds works in TypeScript, and every C++
// file the patches touch (or that includes a header they touch) compiles with the addon's own compile commands. A
// change to one of those places that breaks a recipe fails here, so the document stays true.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const RECIPES = ['environment', 'method', 'estimator', 'loss', 'loss-option', 'architecture'] as const;
/** At most this many existing files for each kind of addition. */
const BOUND: Record<(typeof RECIPES)[number], number> = { environment: 3, method: 3, estimator: 5, loss: 3, 'loss-option': 5, architecture: 5 };

const patchPath = (name: string) => join(root, 'docs', 'extending', `${name}.patch`);

/** Files a patch changes: [path, created?]. */
function patchedFiles(name: string): Array<{ path: string; created: boolean }> {
  const text = readFileSync(patchPath(name), 'utf8');
  return text
    .split(/^diff --git /m)
    .slice(1)
    .map((block) => ({ path: /^a\/(\S+) b\//.exec(block)![1], created: /^new file mode/m.test(block) }));
}

/** The count of existing files docs/extending.md states for a recipe (its table: `| recipe | N | ...`). */
function documentedCount(name: string): number {
  const doc = readFileSync(join(root, 'docs', 'extending.md'), 'utf8');
  const row = new RegExp(`^\\| ${name} \\| (\\d+) \\|`, 'm').exec(doc);
  if (!row) throw new Error(`docs/extending.md has no table row for ${name}`);
  return Number(row[1]);
}

/** A copy of the sources (node_modules linked), to patch. */
function scratchTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-extending-'));
  for (const entry of ['src', 'native', 'test', 'bench', 'bin', 'configs', 'scripts', 'package.json', 'tsconfig.json', 'vitest.config.ts', 'vitest.unit.config.ts']) {
    cpSync(join(root, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function gitApply(dir: string, name: string, check = false): void {
  execFileSync('git', ['apply', ...(check ? ['--check'] : []), patchPath(name)], { cwd: dir, stdio: 'pipe' });
}

/** The compile command of each addon source, from the build folder's compile_commands.json. */
function compileCommands(): Map<string, { directory: string; arguments: string[] }> {
  const build = process.env.LAMER_BUILD_DIR ? resolve(process.env.LAMER_BUILD_DIR) : join(root, 'build');
  const path = join(build, 'compile_commands.json');
  if (!existsSync(path)) throw new Error(`${path} is missing: build the addon (npm run setup), whose CMake run writes it`);
  const entries = JSON.parse(readFileSync(path, 'utf8')) as Array<{ directory: string; file: string; command?: string; arguments?: string[] }>;
  const split = (command: string) => command.match(/(?:[^\s"]+|"[^"]*")+/g)!.map((t) => t.replace(/^"|"$/g, ''));
  return new Map(entries.map((e) => [resolve(e.directory, e.file), { directory: e.directory, arguments: e.arguments ?? split(e.command!) }]));
}

/** `file` (in the scratch copy) compiled for syntax and types only, with its include paths pointed at the copy. */
function syntaxCheck(dir: string, original: string, commands: ReturnType<typeof compileCommands>): string {
  const entry = commands.get(original);
  if (!entry) return `${original}: not in compile_commands.json`;
  const args: string[] = [];
  const [compiler, ...rest] = entry.arguments;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === '-o' || a === '-MF' || a === '-MT') {
      i++;
      continue;
    }
    if (a === '-c' || a === '-MD' || resolve(entry.directory, a) === original) continue;
    args.push(a.replace(join(root, 'native'), join(dir, 'native')));
  }
  const file = join(dir, original.slice(root.length + 1));
  const r = spawnSync(compiler, [...args, '-fsyntax-only', file], { cwd: entry.directory, encoding: 'utf8' });
  return r.status === 0 ? '' : `${file}:\n${r.stderr.slice(0, 2000)}`;
}

describe('the extension recipes of docs/extending.md', () => {
  it('each patch applies to the tree and changes as many existing files as the document says, within bounds', () => {
    const dir = scratchTree();
    for (const name of RECIPES) {
      gitApply(dir, name, true);
      const existing = patchedFiles(name).filter((f) => !f.created).length;
      expect(existing, name).toBe(documentedCount(name));
      expect(existing, name).toBeLessThanOrEqual(BOUND[name]);
    }
  });

  it('with all of them applied the tree typechecks, the additions work, and the C++ they touch compiles', () => {
    const dir = scratchTree();
    for (const name of RECIPES) gitApply(dir, name);
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8' });
    expect(tsc.status, tsc.stdout).toBe(0);
    // What each addition adds, used through the code paths a run takes (no native code: that is compiled below).
    writeFileSync(
      join(dir, 'check.ts'),
      `
import assert from 'node:assert/strict';
import { createEnv } from './src/envs/registry.ts';
import { validateConfig, loadConfig } from './src/train/config.ts';
import { runRollout } from './src/rollout/runner.ts';
import { scriptedPolicy } from './src/rollout/scripted.ts';
import { methodEstimator, trainRolloutShape } from './src/eval/methods.ts';
import { computeAdvantages } from './src/algo/index.ts';
import { rowTableFromColumns } from './src/rollout/rows.ts';
import { parseModelConfig } from './src/model/config.ts';

// environment: the registry makes it, a config names it, the scripted expert wins every trial.
assert.equal(createEnv('guess').name, 'guess');
assert.equal(validateConfig({ env: { name: 'guess' } }).env.name, 'guess');
const batch = await runRollout({ policy: scriptedPolicy({}), env: () => createEnv('guess'), tasks: [1, 2, 3, 4], trialsPerTask: 1,
  trial: { episodes: 2, reflect: true, sampling: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 64 } } });
assert.ok(batch.trials.every((t) => t.won[0]));
// method: LaMer's trials with GRPO's advantages.
assert.equal(validateConfig({ method: 'lamer-grpo', env: { name: 'guess' } }).method, 'lamer-grpo');
assert.equal(methodEstimator('lamer-grpo', 'gigpo'), 'grpo');
assert.equal(trainRolloutShape('lamer-grpo', 3, 4).episodes, 3);
// estimator: a group of three scores 1, 2, 6 (mean 3): x minus the mean of the other two.
const table = rowTableFromColumns({ group: Int32Array.from([0, 0, 0]), trial: Int32Array.from([0, 1, 2]), episode: new Int32Array(3),
  turn: new Int32Array(3), phase: new Uint8Array(3), reward: Float32Array.from([1, 2, 6]), valid: new Uint8Array(3).fill(1),
  won: new Uint8Array(3), anchor: ['a', 'a', 'a'] });
assert.deepEqual(Array.from(computeAdvantages(table, { estimator: 'rloo', backend: 'reference' }).advantage), [-3, -1.5, 4.5]);
assert.equal(validateConfig({ env: { name: 'guess' }, advantage: { estimator: 'rloo' } }).advantage.estimator, 'rloo');
// policy loss: a config names it, an unknown name is refused.
assert.equal(validateConfig({ env: { name: 'guess' }, loss: { policyLoss: 'gpg' } }).loss.policyLoss, 'gpg');
assert.throws(() => loadConfig('default', ['loss.policyLoss=gpgg']), /policyLoss/);
// loss option: in the config with its default, refused out of range.
assert.equal(validateConfig({ env: { name: 'guess' } }).loss.advantageClip, 0);
assert.throws(() => loadConfig('default', ['loss.advantageClip=-1']), /advantageClip/);
// architecture: a Mistral config without a sliding window shorter than its positions.
const mistral = { model_type: 'mistral', vocab_size: 32, hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1,
  num_attention_heads: 2, num_key_value_heads: 1, rms_norm_eps: 1e-5, rope_theta: 10000, max_position_embeddings: 64 };
assert.equal(parseModelConfig({ ...mistral, sliding_window: null }).modelType, 'mistral');
assert.throws(() => parseModelConfig({ ...mistral, sliding_window: 16 }), /sliding_window/);
console.log('ok');
`,
    );
    const check = spawnSync(join(root, 'node_modules', '.bin', 'tsx'), ['check.ts'], { cwd: dir, encoding: 'utf8' });
    expect(check.status, check.stderr).toBe(0);
    expect(check.stdout.trim()).toBe('ok');
    // C++: the sources the patches change, and those that include a header they change.
    const touched = RECIPES.flatMap((name) => patchedFiles(name).map((f) => f.path)).filter((p) => p.startsWith('native/'));
    const headers = touched.filter((p) => p.endsWith('.h')).map((p) => p.slice('native/'.length));
    const sources = (d: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(d, e.name)) : e.name.endsWith('.cpp') ? [join(d, e.name)] : []));
    const includers = sources(join(dir, 'native')).filter((f) => headers.some((h) => readFileSync(f, 'utf8').includes(`#include "${h}"`)));
    const files = new Set([...touched.filter((p) => p.endsWith('.cpp')).map((p) => join(root, p)), ...includers.map((f) => join(root, f.slice(dir.length + 1)))]);
    expect(files.size).toBeGreaterThan(3);
    const commands = compileCommands();
    const failures = [...files].map((f) => syntaxCheck(dir, f, commands)).filter(Boolean);
    expect(failures).toEqual([]);
  }, 900_000);
});
