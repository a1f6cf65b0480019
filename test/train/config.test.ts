import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyOverrides, isRunName, loadConfig, validateConfig } from '../../src/train/config.js';

const configsDir = join(import.meta.dirname, '..', '..', 'configs');

describe('trainer config', () => {
  it('every named config in configs/ validates', () => {
    const names = readdirSync(configsDir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => f.replace(/\.yaml$/, ''));
    expect(names.length).toBeGreaterThanOrEqual(4 * 8);
    for (const name of names) expect(() => loadConfig(name), name).not.toThrow();
  });

  it('named configs carry the paper defaults of SPEC §6', () => {
    const sokoban = loadConfig('sokoban-gigpo');
    expect(sokoban.method).toBe('gigpo');
    expect(sokoban.env.options).toEqual({ maxTurns: 7, fidelity: 'paper' });
    expect(sokoban.rollout.tasksPerIteration).toBe(16);
    expect(sokoban.advantage.gammaTraj).toBe(0.9);
    expect(sokoban.train.iterations).toBe(300);
    const webshop = loadConfig('webshop-lamer');
    expect(webshop.env.options).toEqual({ maxTurns: 12 });
    expect(webshop.rollout.tasksPerIteration).toBe(8);
    expect(webshop.rollout.maxPromptTokens).toBe(8192);
    const alf = loadConfig('alfworld-reflexion');
    expect(alf.env.evalOptions).toEqual({ maxTurns: 30 });
    expect(loadConfig('minesweeper-grpo').advantage.estimator).toBe('grpo');
    // Defaults not written in any file come from the schema (SPEC §4, §5).
    expect(webshop.loss).toMatchObject({ clipLow: 0.2, clipHigh: 0.2, dualClip: 3, entropyCoef: 0.001, aggregation: 'token-mean' });
    expect(webshop.advantage).toMatchObject({ invalidPenalty: 0.5, mode: 'mean_norm', omega: 1, eps: 1e-6 });
    expect(webshop.optim).toMatchObject({ weightDecay: 0.01, gradClip: 1, miniBatchRows: 64, betas: [0.9, 0.999] });
  });

  it('--set overrides parse YAML scalars and nest by dots', () => {
    const c = loadConfig('minesweeper-lamer', ['optim.lr=3e-4', 'env.options.rows=4', 'model.enableThinking=true', 'name=x y']);
    expect(c.optim.lr).toBe(3e-4);
    expect(c.env.options).toEqual({ maxTurns: 7, fidelity: 'paper', rows: 4 });
    expect(c.model.enableThinking).toBe(true);
    expect(c.name).toBe('x y');
    expect(() => applyOverrides({}, ['nofield'])).toThrow(expect.objectContaining({ code: 'E_CONFIG' }));
  });

  it('a wrong value is rejected with the field named, what was expected and what was found', () => {
    expect(() => loadConfig('sokoban-lamer', ['optim.lr=-1'])).toThrow(/field 'optim\.lr'.*found -1/);
    expect(() => loadConfig('sokoban-lamer', ['method=dqn'])).toThrow(/field 'method'.*found "dqn"/);
    expect(() => loadConfig('sokoban-lamer', ['eval.reflections=oracle'])).toThrow(/field 'eval\.reflections'.*found "oracle"/);
    expect(loadConfig('sokoban-lamer', ['eval.reflections=expert']).eval.reflections).toBe('expert');
    expect(() => loadConfig('sokoban-lamer', ['trial.episodes=two'])).toThrow(/field 'trial\.episodes'/);
    expect(() => loadConfig('sokoban-lamer', ['optim.lrr=1'])).toThrow(/unknown field 'optim\.lrr'/);
    expect(() => validateConfig({})).toThrow(/field 'env'/);
    expect(loadConfig('sokoban-lamer', ['trial.markRefused=true']).trial.markRefused).toBe(true);
    expect(loadConfig('sokoban-lamer').trial.markRefused).toBe(false);
    expect(loadConfig('sokoban-lamer').trial.refusedLast).toBe(false);
    expect(loadConfig('sokoban-lamer', ['trial.markRefused=true', 'trial.refusedLast=true']).trial.refusedLast).toBe(true);
    expect(loadConfig('sokoban-lamer', ['trial.markRefused=true', 'trial.refusedLast=flag']).trial.refusedLast).toBe('flag');
    expect(() => loadConfig('sokoban-lamer', ['trial.markRefused=true', 'trial.refusedLast=flags'])).toThrow(/field 'trial\.refusedLast'/);
    expect(() => loadConfig('sokoban-lamer', ['trial.refusedLast=flag'])).toThrow(/field 'trial\.refusedLast': .*set trial\.markRefused true too/);
    expect(() => loadConfig('sokoban-lamer', ['trial.refusedLast=true'])).toThrow(/field 'trial\.refusedLast': .*set trial\.markRefused true too/);
    expect(() => loadConfig('sokoban-lamer', ['trial.markRefused=true', 'model.promptStyle=paper', 'env.options.lamerSource=/x'])).toThrow(
      /field 'trial\.markRefused': LaMer's templates .* have no mark/,
    );
    try {
      loadConfig('sokoban-lamer', ['rollout.topP=2']);
      expect.unreachable();
    } catch (e) {
      expect((e as { code?: string }).code).toBe('E_CONFIG');
    }
  });

  it("a run's name stays inside runsDir and names a folder of its own", () => {
    for (const good of ['default', 'exp/X1', 'default-seed0', 'a.b', '..x']) expect(isRunName(good), good).toBe(true);
    // '.' would make runsDir itself the run folder (which --force empties); the others leave runsDir.
    for (const bad of ['.', '..', '../x', 'a/../../x', './x', '/tmp/x', 'a//b', 'x/', 'a\\..\\b', 'a\0b', 'x'.repeat(201)]) {
      expect(isRunName(bad), bad).toBe(false);
      expect(() => loadConfig('default', [`name=${JSON.stringify(bad)}`]), bad).toThrow(/E_CONFIG|field 'name'/);
    }
  });

  it('a named pipe or a device as a config is refused at once; a config over 1 MiB too', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-config-fifo-'));
    execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
    expect(() => loadConfig(join(dir, 'pipe.yaml'))).toThrow(/expected a regular file, found a named pipe/);
    writeFileSync(join(dir, 'child.yaml'), 'extends: /dev/zero\n');
    expect(() => loadConfig(join(dir, 'child.yaml'))).toThrow(/expected a regular file/);
    writeFileSync(join(dir, 'big.yaml'), `# ${'x'.repeat(1 << 20)}\nenv: { name: minesweeper }\n`);
    expect(() => loadConfig(join(dir, 'big.yaml'))).toThrow(/bytes, more than the 1048576/);
  });

  it('a missing config says where it looked', () => {
    expect(() => loadConfig('no-such-config')).toThrow(/not found \(looked for .*no-such-config\.yaml\)/);
  });

  it('__proto__ keys and unknown YAML tags are errors, not silently dropped or read as values', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-config-'));
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const err = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        expect((e as { code?: string }).code).toBe('E_CONFIG');
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(err(() => loadConfig(file('proto.yaml', 'name: x\n__proto__: { polluted: 1 }\n')))).toMatch(/field '__proto__' is not allowed/);
    expect(err(() => loadConfig(file('nested.yaml', 'name: x\noptim:\n  constructor: 1\n')))).toMatch(/field 'optim.constructor' is not allowed/);
    expect(err(() => loadConfig(file('tag.yaml', 'name: !foo x\n')))).toMatch(/not valid YAML: Unresolved tag: !foo/);
    expect(err(() => loadConfig('default', ['__proto__.x=1']))).toMatch(/--set '__proto__.x=1': '__proto__' is not a config field/);
    expect(err(() => loadConfig('default', ['optim={"__proto__": {"lr": 1}}']))).toMatch(/not allowed/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a bad --set value is blamed on the --set, not on the config file', () => {
    try {
      loadConfig('default', ['optim.lr=-1']);
      throw new Error('accepted');
    } catch (e) {
      expect((e as Error).message).toMatch(/default\.yaml with --set optim\.lr=-1: field 'optim\.lr'/);
    }
  });
});

describe('lamer config show', () => {
  it('prints the resolved config as YAML that loads back to the same config, every field with its meaning', async () => {
    const { showConfig } = await import('../../src/cli/commands/config.js');
    const text = showConfig('default', ['optim.lr=1e-5', 'rollout.groupSize=6']);
    const dir = mkdtempSync(join(tmpdir(), 'lamer-config-show-'));
    writeFileSync(join(dir, 'shown.yaml'), text);
    expect(loadConfig(join(dir, 'shown.yaml'))).toEqual(loadConfig('default', ['optim.lr=1e-5', 'rollout.groupSize=6']));
    const fieldLines = text.split('\n').filter((l) => /^\s*#? ?\w+:/.test(l) && !l.startsWith('# resolved'));
    expect(fieldLines.length).toBeGreaterThan(80);
    for (const line of fieldLines) expect(line, line).toMatch(/ {2}# \S/);
    expect(text).toMatch(/^ {2}lr: 0\.00001 {2}# AdamW learning rate of RL updates; default 0\.000001$/m);
  });
});
