// The code a run records in its config.json (provenance.code): the commit of a checkout whose top folder is the
// package, whether tracked files differ from it and a hash of the difference; no commit for a folder that is not such
// a checkout (an installed package, or one inside another project's checkout, whose HEAD is not the package's).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeVersion } from '../../src/train/code-version.js';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { encoding: 'utf8' });

/** A git checkout with a package.json and one source file, committed. */
function checkout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-code-version-'));
  git(dir, 'init', '-q');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'p', version: '1.2.3' }));
  writeFileSync(join(dir, 'a.ts'), 'export const a = 1;\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'one');
  return dir;
}

describe('codeVersion', () => {
  it('a clean checkout: its HEAD commit, not dirty', () => {
    const dir = checkout();
    expect(codeVersion(dir)).toEqual({ version: '1.2.3', commit: git(dir, 'rev-parse', 'HEAD').trim(), dirty: false });
  });

  it('a changed tracked file: dirty, with the SHA-256 of the diff against HEAD', () => {
    const dir = checkout();
    writeFileSync(join(dir, 'a.ts'), 'export const a = 2;\n');
    const diff = git(dir, 'diff', '--binary', 'HEAD');
    expect(diff).toContain('+export const a = 2;');
    expect(codeVersion(dir)).toEqual({
      version: '1.2.3',
      commit: git(dir, 'rev-parse', 'HEAD').trim(),
      dirty: true,
      diffSha256: createHash('sha256').update(diff).digest('hex'),
    });
  });

  it("a package folder inside another project's checkout, or in none: no commit", () => {
    const outer = checkout();
    const inner = join(outer, 'node_modules', 'lamer');
    mkdirSync(inner, { recursive: true });
    writeFileSync(join(inner, 'package.json'), JSON.stringify({ name: 'lamer', version: '0.1.0' }));
    expect(codeVersion(inner)).toEqual({ version: '0.1.0', commit: null, dirty: null });
    const bare = mkdtempSync(join(tmpdir(), 'lamer-code-version-none-'));
    writeFileSync(join(bare, 'package.json'), JSON.stringify({ name: 'lamer', version: '0.1.0' }));
    expect(codeVersion(bare)).toEqual({ version: '0.1.0', commit: null, dirty: null });
  });

  it('this package, run from its checkout: the commit git names', () => {
    expect(codeVersion().commit).toBe(execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim());
  });
});
