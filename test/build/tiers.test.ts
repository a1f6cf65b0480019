// The test tiers are chosen by folder: the fast tier (vitest.unit.config.ts) is every test file outside test/native/
// and test/parity/, and the full run (vitest.config.ts) is every test file. Here vitest itself lists the files each
// configuration selects, and the lists are compared with the files on disk, so no test can be left out of a tier.
// And the parity tests cannot pass quietly under CI without their Python reference: parityPython fails them there.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isCi, parityPython } from '../parity/python.js';
import { root } from '../helpers/index.js';


/** Test files on disk (repository-relative, sorted). */
function testFilesOnDisk(): string[] {
  return (readdirSync(join(root, 'test'), { recursive: true }) as string[])
    .map((f) => join('test', f).split('\\').join('/'))
    .filter((f) => f.endsWith('.test.ts'))
    .sort();
}

/** The test files vitest selects under a configuration, as `vitest list --filesOnly` reports them. */
function vitestFiles(config: string): string[] {
  const out = execFileSync(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'list', '--config', config, '--filesOnly', '--json'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, CI: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  const listed = JSON.parse(out.slice(out.indexOf('['))) as { file: string }[];
  return listed.map((t) => relative(root, t.file).split('\\').join('/')).sort();
}

const slow = (f: string) => f.startsWith('test/native/') || f.startsWith('test/parity/');

describe('test tiers by folder', () => {
  const onDisk = testFilesOnDisk();

  it('the fast tier runs exactly the test files outside test/native/ and test/parity/', () => {
    const fast = vitestFiles('vitest.unit.config.ts');
    const expected = onDisk.filter((f) => !slow(f));
    expect(fast.length).toBe(expected.length);
    expect(fast).toEqual(expected);
    // The tiers partition the files: each slow tier has some, and no test file sits loose in test/.
    expect(onDisk.filter((f) => f.startsWith('test/native/')).length).toBeGreaterThan(0);
    expect(onDisk.filter((f) => f.startsWith('test/parity/')).length).toBeGreaterThan(0);
  }, 180_000);

  it('the full run (npm test) runs every test file', () => {
    expect(vitestFiles('vitest.config.ts')).toEqual(onDisk);
  }, 180_000);
});

describe('parity tests under CI', () => {
  const missing = { ok: false, reason: 'scripts/pyenv.sh could not create the Python reference environment (exit 1): no index' };

  it('a missing reference environment fails the parity tests under CI, with the reason and what to do', () => {
    for (const CI of ['true', '1', 'yes']) {
      expect(() => parityPython(missing, { CI })).toThrow(/test\/parity\/.*no index.*Under CI \(CI=\w+\) that is a failure, not a skip.*scripts\/pyenv\.sh/);
    }
  });

  it('outside CI the parity tests skip with the reason; a present environment runs them everywhere', () => {
    for (const env of [{}, { CI: '' }, { CI: '0' }, { CI: 'false' }, { CI: 'FALSE' }]) {
      expect(isCi(env)).toBe(false);
      expect(parityPython(missing, env)).toEqual(missing);
    }
    expect(parityPython({ ok: true, reason: '' }, { CI: 'true' })).toEqual({ ok: true, reason: '' });
  });
});
