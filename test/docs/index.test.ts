// docs/README.md indexes the guides: every page in docs/ is listed there, the README links to the index, and every
// relative link in the README and in the guides leads to a path that exists (a page moved or renamed without its
// links fails here).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const docs = join(root, 'docs');
const pages = readdirSync(docs).filter((f) => f.endsWith('.md') && f !== 'README.md');

/** Relative link targets of a Markdown file (no URLs, no in-page anchors), without their anchors. */
function links(file: string): string[] {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith('#'))
    .map((target) => target.split('#')[0]);
}

describe('docs/README.md, the index of the guides', () => {
  it('lists every page in docs/, and the README links to it', () => {
    expect(pages.length).toBeGreaterThanOrEqual(8);
    const listed = new Set(links(join(docs, 'README.md')));
    expect(pages.filter((p) => !listed.has(p))).toEqual([]);
    expect(links(join(root, 'README.md'))).toContain('docs/README.md');
  });

  it('every relative link in the README and the guides resolves', () => {
    const files = [join(root, 'README.md'), join(docs, 'README.md'), ...pages.map((p) => join(docs, p))];
    const broken = files.flatMap((file) =>
      links(file)
        .filter((target) => !existsSync(resolve(dirname(file), target)))
        .map((t) => `${file}: ${t}`),
    );
    expect(broken).toEqual([]);
    // The check sees links at all: the README links to several guides.
    expect(links(join(root, 'README.md')).filter((t) => t.startsWith('docs/')).length).toBeGreaterThan(5);
  });
});
