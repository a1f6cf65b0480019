// Loading checkpoints that would once hang, exhaust memory, kill the process or leak a foreign file's bytes. Each case
// runs in a child process with a time limit, so a regression fails the test instead of hanging or killing the runner.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Policy } from '../../../src/model/policy.js';
import { presetCheckpoint } from '../../../src/model/presets.js';
import { tinyConfig } from '../train/step-helpers.js';
import { root } from '../../helpers/index.js';

/** Runs `body` (an async function's text, with `Policy` and `dir` in scope) in a child process. */
function child(dir: string, body: string, timeout = 90_000): { status: number | null; signal: NodeJS.Signals | null; out: string; err: string; ms: number } {
  const script = join(dir, '..', `probe-${Math.random().toString(36).slice(2)}.mts`);
  writeFileSync(
    script,
    `import { Policy } from ${JSON.stringify(join(root, 'src', 'model', 'policy.ts'))};\n` +
      `const dir = ${JSON.stringify(dir)};\n` +
      `try { ${body} } catch (e) { console.log('CODE', (e as { code?: string }).code ?? 'none'); console.log('MESSAGE', (e as Error).message); }\n`,
  );
  const t = performance.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: root, encoding: 'utf8', timeout });
  return { status: r.status, signal: r.signal, out: r.stdout, err: r.stderr, ms: performance.now() - t };
}

async function savedTiny(): Promise<string> {
  const dir = join(mkdtempSync(join(tmpdir(), 'lamer-hard-')), 'ckpt');
  await using policy = await Policy.init(tinyConfig({ vocab: 40, layers: 2 }), { seed: 1, std: 0.2 });
  await policy.save(dir);
  return dir;
}

describe('checkpoint loading under hostile files', { timeout: 120_000 }, () => {
  it('a checkpoint truncated and overwritten while loaded does not kill the process', async () => {
    const dir = await savedTiny();
    const r = child(
      dir,
      `const { truncateSync, writeFileSync } = await import('node:fs');
       const p = await Policy.load(dir);
       const before = await p.logprobs([[1, 2, 3, 4]]);
       truncateSync(dir + '/model.safetensors', 0);
       writeFileSync(dir + '/model.safetensors', 'garbage');
       const after = await p.logprobs([[1, 2, 3, 4]]);
       console.log('SAME', JSON.stringify(Array.from(before[0])) === JSON.stringify(Array.from(after[0])));`,
    );
    expect(r.signal, r.err).toBeNull();
    expect(r.out, r.err).toContain('SAME true');
  });

  for (const file of ['config.json', 'model.safetensors', 'tokenizer_config.json', 'generation_config.json', 'model.safetensors.index.json']) {
    it(`a named pipe as ${file} is refused at once with a code`, async () => {
      const dir = await savedTiny();
      rmSync(join(dir, file), { force: true });
      execFileSync('mkfifo', [join(dir, file)]);
      const r = child(dir, `await Policy.load(dir); console.log('LOADED');`, 60_000);
      expect(r.signal, `${file}: ${r.err}`).toBeNull();
      expect(r.out).toMatch(/CODE E_CHECKPOINT/);
      expect(r.out).toMatch(/(regular file|named pipe)/);
      expect(r.ms).toBeLessThan(50_000); // a blocked open would sit until the 60 s limit
    });
  }

  for (const [what, text] of [
    ['null', 'null'],
    ['an array', '[2]'],
    ['a string', '"eos"'],
  ]) {
    it(`a generation_config.json holding ${what} is refused with a code`, async () => {
      const dir = await savedTiny();
      writeFileSync(join(dir, 'generation_config.json'), text);
      const r = child(dir, `await Policy.load(dir); console.log('LOADED');`, 60_000);
      expect(r.signal, r.err).toBeNull();
      expect(r.out, r.err).toContain('CODE E_CHECKPOINT');
      expect(r.out).toContain(`generation_config.json: expected a JSON object, found ${what}`);
    });
  }

  it('tokenizer.json ids outside the vocabulary or not integers, and an unknown model type, are refused at load', async () => {
    const { config, assets } = await presetCheckpoint('tiny');
    const dir = join(mkdtempSync(join(tmpdir(), 'lamer-hard-tok-')), 'ckpt');
    {
      await using policy = await Policy.init(config, { seed: 1, assets });
      await policy.save(dir);
    }
    const good = readFileSync(join(dir, 'tokenizer.json'), 'utf8');
    const cases: Array<[string, (j: { model: { type: string; vocab: Record<string, number> } }) => void, RegExp]> = [
      ['an id past the vocabulary', (j) => (j.model.vocab.h = config.vocabSize + 100), /ids up to \d+, outside the model's vocabulary of \d+/],
      ['a negative id', (j) => (j.model.vocab.h = -5), /the id -5; ids are integers >= 0/],
      ['a fractional id', (j) => (j.model.vocab.h = 1.5), /the id 1.5; ids are integers >= 0/],
      ['an unknown model type', (j) => (j.model.type = 'Unknown'), /model.type "Unknown" is not one of/],
    ];
    for (const [what, mutate, message] of cases) {
      const j = JSON.parse(good) as { model: { type: string; vocab: Record<string, number> } };
      mutate(j);
      writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(j));
      await expect(Policy.load(dir), what).rejects.toMatchObject({ code: 'E_CHECKPOINT', message: expect.stringMatching(message) });
    }
    writeFileSync(join(dir, 'tokenizer.json'), good);
    await using ok = await Policy.load(dir);
    expect(ok.encode('mine').length).toBeGreaterThan(0);
  });

  it('a config.json with a billion layers is refused before anything scales with it', async () => {
    const dir = await savedTiny();
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, num_hidden_layers: 1_000_000_000 }));
    const r = child(dir, `await Policy.load(dir); console.log('LOADED');`, 60_000);
    expect(r.signal, r.err).toBeNull();
    expect(r.out, r.err).toContain('CODE E_CHECKPOINT');
    expect(r.out).toContain('config.json says 1000000000 layers');
  });

  it("an error about a file that is not a checkpoint prints none of that file's bytes", async () => {
    const dir = await savedTiny();
    const foreign = join(dir, '..', 'passwd');
    writeFileSync(foreign, 'root:x:0:0:root:/root:/bin/bash\n');
    rmSync(join(dir, 'model.safetensors'));
    symlinkSync(foreign, join(dir, 'model.safetensors'));
    const r = child(dir, `await Policy.load(dir); console.log('LOADED');`);
    expect(r.out, `${r.signal} ${r.err}`).toContain('CODE E_CHECKPOINT');
    // The first 8 bytes read as a little-endian length: 3619251681095544690 ("root:x:0").
    const asLength = new DataView(Buffer.from('root:x:0').buffer.slice(0, 8)).getBigUint64(0, true).toString();
    expect(r.out).not.toContain(asLength);
    expect(r.out).not.toContain('root');
    cpSync(foreign, join(dir, '..', 'kept')); // the foreign file itself is untouched
    expect(readFileSync(foreign, 'utf8')).toContain('root:x');
  });

  for (const [what, template, message] of [
    ['loops 30 million times', '{% for i in range(30000000) %}{% endfor %}{{ messages[0].content }}', /did not finish rendering .* within 2000 ms/],
    ['renders to megabytes', `{% for i in range(5000) %}${'x'.repeat(400)}{% endfor %}`, /more than 1048576 characters/],
  ] as const) {
    it(`a chat template that ${what} is refused at load, within its time limit`, async () => {
      const dir = await savedTiny();
      writeFileSync(join(dir, 'chat_template.jinja'), template);
      const r = child(dir, `await Policy.load(dir); console.log('LOADED');`, 60_000);
      expect(r.signal, r.err).toBeNull();
      expect(r.out, r.err).toContain('CODE E_CHECKPOINT');
      expect(r.out).toMatch(message);
      expect(r.ms).toBeLessThan(30_000);
    });
  }

  it('an ordinary chat template loads and renders as before', async () => {
    const dir = await savedTiny();
    writeFileSync(
      join(dir, 'chat_template.jinja'),
      '{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}',
    );
    await using policy = await Policy.load(dir);
    expect(policy.chatTemplate?.render([{ role: 'user', content: 'hi' }])).toBe('<user>hi<assistant>');
  });
});
