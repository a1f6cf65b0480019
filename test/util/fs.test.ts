// Output folders: made level by level, and a path that cannot be made fails at once with E_IO (Node's recursive mkdir
// spins forever under /proc).
import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureParentDir, makeDirs, writeFileAtomic } from '../../src/util/fs.js';

describe('makeDirs / ensureParentDir', () => {
  it('makes missing folders at any depth and accepts existing ones', () => {
    const root = mkdtempSync(join(tmpdir(), 'lamer-fs-'));
    const deep = join(root, 'a', 'b', 'c');
    makeDirs(deep);
    expect(statSync(deep).isDirectory()).toBe(true);
    makeDirs(deep);
    makeDirs(`${root}/a/./b/../b`);
    const file = join(root, 'x', 'y', 'out.jsonl');
    ensureParentDir(file);
    writeFileAtomic(file, 'ok\n');
    expect(readFileSync(file, 'utf8')).toBe('ok\n');
  });

  it('fails with E_IO naming the folder when a file is in the way or the place cannot hold folders', () => {
    const root = mkdtempSync(join(tmpdir(), 'lamer-fs-'));
    writeFileSync(join(root, 'file'), '');
    expect(() => makeDirs(join(root, 'file', 'sub'))).toThrow(
      expect.objectContaining({ code: 'E_IO', message: expect.stringContaining(join(root, 'file', 'sub')) }),
    );
    expect(() => makeDirs(join(root, 'file'))).toThrow(expect.objectContaining({ code: 'E_IO', message: expect.stringContaining('not a folder') }));
    if (existsSync('/proc/self')) {
      expect(() => ensureParentDir('/proc/lamer-no-such/deeper/out.json')).toThrow(expect.objectContaining({ code: 'E_IO' }));
    }
  });
});
