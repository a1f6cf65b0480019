// Output folders: made level by level, and a path that cannot be made fails at once with E_IO (Node's recursive mkdir
// spins forever under /proc). Reads of user files: only regular files, refused before reading otherwise, and never
// more than the bound in memory.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureParentDir, makeDirs, readRegularBytes, readRegularFile, writeFileAtomic } from '../../src/util/fs.js';

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

describe('readRegularFile / readRegularBytes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lamer-fs-read-'));

  it('reads a regular file; a missing one is the given code, a folder is refused', () => {
    writeFileSync(join(dir, 'a.json'), '{"a": 1}');
    expect(readRegularFile(join(dir, 'a.json'), 'E_ENV')).toBe('{"a": 1}');
    expect([...readRegularBytes(join(dir, 'a.json'), 'E_ENV')]).toEqual([...Buffer.from('{"a": 1}')]);
    expect(() => readRegularFile(join(dir, 'none'), 'E_ENV')).toThrow(expect.objectContaining({ code: 'E_ENV', message: expect.stringContaining('ENOENT') }));
    expect(() => readRegularFile(dir, 'E_ENV')).toThrow(expect.objectContaining({ code: 'E_ENV', message: expect.stringContaining('a folder') }));
  });

  it('refuses a named pipe and a device at once (reading them would block, or never end)', () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    expect(() => readRegularFile(fifo, 'E_CHECKPOINT')).toThrow(
      expect.objectContaining({ code: 'E_CHECKPOINT', message: expect.stringContaining('named pipe') }),
    );
    const zero = join(dir, 'zero');
    symlinkSync('/dev/zero', zero);
    expect(() => readRegularBytes(zero, 'E_ENV')).toThrow(expect.objectContaining({ code: 'E_ENV', message: expect.stringContaining('a device') }));
  });

  it('refuses a file past the bound without reading it, and stops reading one that holds more than its size says', () => {
    const big = join(dir, 'big');
    writeFileSync(big, '');
    truncateSync(big, 4097);
    expect(() => readRegularFile(big, 'E_ENV', 4096)).toThrow(expect.objectContaining({ code: 'E_ENV', message: expect.stringContaining('4096') }));
    expect(readRegularFile(big, 'E_ENV', 4097)).toHaveLength(4097);
    // /proc files are regular files of size 0 whose text is made as they are read: read to their end within the
    // bound, refused past it.
    if (existsSync('/proc/self/status')) {
      expect(readRegularFile('/proc/self/status', 'E_IO')).toMatch(/^Name:/);
      expect(() => readRegularFile('/proc/self/status', 'E_IO', 16)).toThrow(
        expect.objectContaining({ code: 'E_IO', message: expect.stringContaining('16 bytes') }),
      );
    }
  });
});
