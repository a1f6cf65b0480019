// The code a run was made with, recorded in its config.json (`provenance.code`): the package's version and, where the
// package is a git checkout of its own, the commit, whether tracked files differ from it and a hash of that
// difference, so that a run's figures can be traced to the source that produced them. An installed package (no
// checkout, or a folder inside another project's checkout) records its version alone, with commit null.
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256 } from '../util/hash.js';

export interface CodeVersion {
  /** package.json's version. */
  version: string;
  /** The checkout's HEAD commit; null where the package is not the top folder of a git checkout, or git is missing. */
  commit: string | null;
  /** Whether tracked files differ from the commit (staged or not); null without a commit. Untracked files are not seen. */
  dirty: boolean | null;
  /** SHA-256 of `git diff --binary HEAD` when dirty: two runs with the same commit and diff hash ran the same tracked code. */
  diffSha256?: string;
}

/** The package's top folder (two up from src/train, or from dist/train). */
const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const cache = new Map<string, CodeVersion>();

function git(root: string, args: string[]): string | null {
  try {
    return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 30 });
  } catch {
    return null;
  }
}

/** The version, commit and state of the code in `root` (default: this package), read once per process and folder. */
export function codeVersion(root: string = PACKAGE_ROOT): CodeVersion {
  const known = cache.get(root);
  if (known) return { ...known };
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  let result: CodeVersion = { version, commit: null, dirty: null };
  const top = git(root, ['rev-parse', '--show-toplevel'])?.trim();
  // Only a checkout whose top folder is the package: inside another project's checkout, HEAD is that project's.
  if (top && realpathSync(top) === realpathSync(root)) {
    const commit = git(root, ['rev-parse', '--verify', 'HEAD'])?.trim() ?? null;
    const diff = commit === null ? null : git(root, ['diff', '--binary', 'HEAD']);
    if (commit !== null && diff !== null) {
      result = diff.length > 0 ? { version, commit, dirty: true, diffSha256: sha256(diff) } : { version, commit, dirty: false };
    }
  }
  cache.set(root, result);
  return { ...result };
}
